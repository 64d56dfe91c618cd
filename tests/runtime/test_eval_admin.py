"""Eval sets, cases and results in the admin: browsable with their scores, inert, and behind model permissions."""

from __future__ import annotations

import pytest
from django.contrib.auth import get_user_model
from django.contrib.auth.models import Permission
from django.test import Client
from google.adk.evaluation.eval_metrics import EvalMetricResult, EvalStatus
from google.adk.evaluation.eval_result import EvalCaseResult

from runtime_app.evals import PostgresEvalSetResultsManager, PostgresEvalSetsManager
from runtime_app.models import EvalCase, EvalSet, EvalSetResult
from tests.runtime.test_evals import case

pytestmark = pytest.mark.django_db(transaction=True)

HOSTILE = "<script>alert('x')</script> 東京の天気"


@pytest.fixture
def stored() -> None:
    sets = PostgresEvalSetsManager()
    sets.create_eval_set("weather", "smoke")
    sets.add_eval_case("weather", "smoke", case("tokyo", HOSTILE))
    result = EvalCaseResult(
        eval_set_id="smoke",
        eval_id="tokyo",
        final_eval_status=EvalStatus.FAILED,
        overall_eval_metric_results=[
            EvalMetricResult(
                metric_name="<b>response_match_score</b>", threshold=0.8, score=0.4321, eval_status=EvalStatus.FAILED
            )
        ],
        eval_metric_result_per_invocation=[],
        session_id="s1",
    )
    PostgresEvalSetResultsManager().save_eval_set_result("weather", "smoke", [result])


def test_sets_cases_and_results_show_scores_and_escape_what_users_typed(stored, admin_client):
    eval_set = EvalSet.objects.get()
    pages = {
        "sets": admin_client.get("/admin/runtime_app/evalset/"),
        "set": admin_client.get(f"/admin/runtime_app/evalset/{eval_set.pk}/change/"),
        "cases": admin_client.get("/admin/runtime_app/evalcase/"),
        "case": admin_client.get(f"/admin/runtime_app/evalcase/{EvalCase.objects.get().pk}/change/"),
        "results": admin_client.get("/admin/runtime_app/evalsetresult/"),
        "result": admin_client.get(f"/admin/runtime_app/evalsetresult/{EvalSetResult.objects.get().pk}/change/"),
    }

    assert {name: page.status_code for name, page in pages.items()} == dict.fromkeys(pages, 200)
    for name, page in pages.items():
        html = page.content.decode()
        assert "<script>alert" not in html and "<b>response_match_score" not in html, name
    assert "&lt;script&gt;alert(&#x27;x&#x27;)&lt;/script&gt; 東京の天気" in pages["set"].content.decode()
    result = pages["result"].content.decode()
    assert (
        "<td>tokyo</td><td>failed</td><td>&lt;b&gt;response_match_score&lt;/b&gt;</td><td>0.432</td><td>0.8</td>"
        in result
    )
    assert ">1</td>" in pages["results"].content.decode()  # one failed case in the list


def test_a_staff_user_needs_the_view_permission_of_each_model(stored):
    user = get_user_model().objects.create_user("eval-viewer", is_staff=True)
    user.user_permissions.add(Permission.objects.get(codename="view_evalset"))
    client = Client()
    client.force_login(user)

    assert client.get("/admin/runtime_app/evalset/").status_code == 200
    assert client.get("/admin/runtime_app/evalsetresult/").status_code == 403
    assert client.get(f"/admin/runtime_app/evalcase/{EvalCase.objects.get().pk}/change/").status_code == 403
