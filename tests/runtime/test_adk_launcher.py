"""``cognizes adk …``: ADK's own CLI with Cognizes behind the services ADK's options cannot name (issue 47)."""

from __future__ import annotations

import importlib.util
import json
import subprocess
import sys
from collections.abc import Iterator

import google.adk.cli.cli as adk_run
import google.adk.cli.fast_api as adk_fast_api
import pytest
from fastapi.testclient import TestClient
from google.adk.evaluation.eval_case import EvalCase, Invocation
from google.adk.evaluation.eval_result import EvalCaseResult
from google.genai import types

from cognizes.adk import PostgresCredentialService
from runtime_app.adk_launcher import adk_arguments, install
from runtime_app.evals import PostgresEvalSetResultsManager, PostgresEvalSetsManager
from runtime_app.models import EvalSet, EvalSetResult
from tests.processes import ROOT, database_env

pytestmark = pytest.mark.django_db(transaction=True)

URIS = ("session_service_uri", "memory_service_uri", "artifact_service_uri")


@pytest.fixture(autouse=True)
def _adks_own_classes_back_afterwards(monkeypatch):
    """``install()`` replaces ADK's module globals for the whole process: put them back after each test."""
    import google.adk.evaluation.local_eval_set_results_manager as local_results
    import google.adk.evaluation.local_eval_sets_manager as local_sets

    for module, name in [
        (adk_fast_api, "InMemoryCredentialService"),
        (adk_run, "InMemoryCredentialService"),
        (adk_fast_api, "LocalEvalSetsManager"),
        (adk_fast_api, "LocalEvalSetResultsManager"),
        (local_sets, "LocalEvalSetsManager"),
        (local_results, "LocalEvalSetResultsManager"),
    ]:
        monkeypatch.setattr(module, name, getattr(module, name))


def test_adk_servers_and_adk_run_keep_users_credentials_in_postgres():
    install()
    install()

    # What get_fast_api_app (adk web, adk api_server) and adk run call to build their credential service.
    assert isinstance(adk_fast_api.InMemoryCredentialService(), PostgresCredentialService)
    assert isinstance(adk_run.InMemoryCredentialService(), PostgresCredentialService)


def test_serving_commands_default_every_service_to_cognizes_but_keep_uris_given():
    assert adk_arguments(["web", "--port", "9000", "agents"]) == [
        "web",
        "--session_service_uri",
        "cognizes://",
        "--memory_service_uri",
        "cognizes://",
        "--artifact_service_uri",
        "cognizes://",
        "--port",
        "9000",
        "agents",
    ]
    assert adk_arguments(["api_server", "--memory_service_uri=memory://", "--session_service_uri", "x://", "a"]) == [
        "api_server",
        "--artifact_service_uri",
        "cognizes://",
        "--memory_service_uri=memory://",
        "--session_service_uri",
        "x://",
        "a",
    ]
    assert adk_arguments(["eval", "agents/weather", "set_1"]) == ["eval", "agents/weather", "set_1"]


EVAL_EXTRA = importlib.util.find_spec("rouge_score") is not None
"""Running an eval needs ADK's ``eval`` extra (``pip install google-adk[eval]``: ROUGE, pandas, …), which Cognizes
does not install: storing sets and results does not need it, running the agent against them does."""


@pytest.fixture
def dev_ui(weather_app) -> Iterator[TestClient]:
    """ADK's dev server (``adk web``) as ``cognizes adk web`` builds it, with a session of Ada's weather question."""
    from google.adk.cli.fast_api import get_fast_api_app

    install()
    app = get_fast_api_app(agents_dir=str(ROOT / "demo_agents"), web=True, **dict.fromkeys(URIS, "cognizes://"))
    # The /dev routes answer loopback peers only (ADK's guard): the test client calls from 127.0.0.1.
    with TestClient(app, client=("127.0.0.1", 50000)) as client:
        client.post("/apps/weather/users/ada/sessions", json={"session_id": "s1"}).raise_for_status()
        question = {"role": "user", "parts": [{"text": "What's the weather in London?"}]}
        run = {"app_name": "weather", "user_id": "ada", "session_id": "s1", "new_message": question}
        client.post("/run", json=run).raise_for_status()
        yield client


def test_adk_webs_eval_tab_keeps_sets_and_cases_in_postgres(dev_ui):
    """The eval tab's calls as the browser makes them: a set, the session as a case, its edits."""
    create = "/dev/apps/weather/eval-sets"
    created = dev_ui.post(create, json={"eval_set": {"eval_set_id": "smoke", "eval_cases": []}})
    refused = dev_ui.post(create, json={"eval_set": {"eval_set_id": "東京", "eval_cases": []}})
    again = dev_ui.post(create, json={"eval_set": {"eval_set_id": "smoke", "eval_cases": []}})
    session = {"eval_id": "london", "session_id": "s1", "user_id": "ada"}
    added = dev_ui.post("/dev/apps/weather/eval-sets/smoke/add-session", json=session)
    duplicate = dev_ui.post("/dev/apps/weather/eval-sets/smoke/add-session", json=session)
    listed = dev_ui.get(create).json()
    case = dev_ui.get("/dev/apps/weather/eval-sets/smoke/eval-cases/london").json()
    missing = dev_ui.get("/dev/apps/weather/eval-sets/nope/eval-cases/london")

    assert [r.status_code for r in (created, refused, again, added, duplicate, missing)] == [
        200,
        400,
        400,
        200,
        400,
        404,
    ]
    assert listed == {"evalSetIds": ["smoke"]}
    assert case["conversation"][0]["userContent"]["parts"][0]["text"] == "What's the weather in London?"
    # In PostgreSQL, not in files beside the agent.
    assert EvalSet.objects.get(app_name="weather").cases.get().eval_id == "london"
    assert not list((ROOT / "demo_agents" / "weather").glob("*.evalset.json"))

    case["conversation"][0]["userContent"]["parts"][0]["text"] = "Погода в Лондоне?"
    updated = dev_ui.put("/dev/apps/weather/eval-sets/smoke/eval-cases/london", json=case)
    assert updated.status_code == 200, updated.text
    stored = dev_ui.get("/dev/apps/weather/eval-sets/smoke/eval-cases/london").json()
    assert stored["conversation"][0]["userContent"]["parts"][0]["text"] == "Погода в Лондоне?"
    assert dev_ui.delete("/dev/apps/weather/eval-sets/smoke/eval-cases/london").status_code == 200
    assert dev_ui.delete("/dev/apps/weather/eval-sets/smoke/eval-cases/london").status_code == 404


def test_adk_webs_eval_tab_reads_results_from_postgres(dev_ui):
    PostgresEvalSetResultsManager().save_eval_set_result(
        "weather",
        "smoke",
        [
            EvalCaseResult(
                eval_id="london",
                final_eval_status=1,
                overall_eval_metric_results=[],
                eval_metric_result_per_invocation=[],
                session_id="s1",
            )
        ],
    )

    [result_id] = dev_ui.get("/dev/apps/weather/eval-results").json()["evalResultIds"]
    result = dev_ui.get(f"/dev/apps/weather/eval-results/{result_id}").json()
    missing = dev_ui.get("/dev/apps/weather/eval-results/weather_smoke_1.0")

    assert result["evalCaseResults"][0]["evalId"] == "london"
    assert missing.status_code == 404
    assert not (ROOT / "demo_agents" / "weather" / ".adk" / "eval_history").exists()


@pytest.mark.skipif(not EVAL_EXTRA, reason="running an eval needs google-adk[eval] (rouge-score…), not installed")
def test_running_an_eval_in_adk_web_stores_its_result_in_postgres(dev_ui):
    dev_ui.post("/dev/apps/weather/eval-sets", json={"eval_set": {"eval_set_id": "smoke", "eval_cases": []}})
    dev_ui.post(
        "/dev/apps/weather/eval-sets/smoke/add-session",
        json={"eval_id": "london", "session_id": "s1", "user_id": "ada"},
    )

    metrics = {"eval_metrics": [{"metric_name": "tool_trajectory_avg_score", "threshold": 1.0}]}
    ran = dev_ui.post("/dev/apps/weather/eval-sets/smoke/run", json=metrics)

    assert ran.status_code == 200, ran.text
    [result_id] = dev_ui.get("/dev/apps/weather/eval-results").json()["evalResultIds"]
    [case_result] = dev_ui.get(f"/dev/apps/weather/eval-results/{result_id}").json()["evalCaseResults"]
    assert case_result["overallEvalMetricResults"][0]["score"] == 1.0
    assert EvalSetResult.objects.get(app_name="weather").result_name == result_id


@pytest.mark.skipif(not EVAL_EXTRA, reason="running an eval needs google-adk[eval] (rouge-score…), not installed")
def test_cognizes_adk_eval_runs_a_set_stored_in_postgres_and_stores_the_result(weather_app, tmp_path):
    sets = PostgresEvalSetsManager()
    sets.create_eval_set("weather", "smoke")
    question = types.Content(role="user", parts=[types.Part(text="What's the weather in London?")])
    sets.add_eval_case("weather", "smoke", EvalCase(eval_id="london", conversation=[Invocation(user_content=question)]))
    config = tmp_path / "eval_config.json"
    config.write_text(json.dumps({"criteria": {"tool_trajectory_avg_score": 0.0}}))

    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "cognizes",
            "adk",
            "eval",
            "demo_agents/weather",
            "smoke",
            "--config_file_path",
            str(config),
        ],
        cwd=ROOT,
        env={key: value for key, value in database_env().items() if key != "GOOGLE_API_KEY"},  # the offline model
        capture_output=True,
        text=True,
        timeout=120,
    )

    assert done.returncode == 0, done.stdout + done.stderr
    [result] = EvalSetResult.objects.filter(app_name="weather")
    assert (result.eval_set_id, json.loads(result.document)["evalCaseResults"][0]["evalId"]) == ("smoke", "london")


def test_the_cognizes_command_hands_adk_its_words_and_returns_its_status(capsys):
    from cognizes.cli import main

    assert main(["adk", "--version"]) == 0
    assert "version" in capsys.readouterr().out
    assert main(["adk", "no_such_command"]) == 2  # click's usage error, not a traceback
