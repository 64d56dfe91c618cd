"""ADK's eval sets and results in PostgreSQL: one contract suite for ADK's managers and Cognizes' (issue 47 item 2).

Every case runs each manager the way ADK's dev server and ``LocalEvalService`` do: from inside a running event loop
(Django refuses its ORM there unless the work moves to another thread). ADK's ``InMemoryEvalSetsManager`` and
``LocalEvalSetsManager`` (on a temporary folder) are the references for sets; ADK has no in-memory results manager,
so ``LocalEvalSetResultsManager`` is the one for results. Where the two references differ (ids checked, names,
order), Cognizes follows the Local one, which ``adk web``'s eval tab was built on.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Any, TypeVar

import pytest
from google.adk.errors.not_found_error import NotFoundError
from google.adk.evaluation.eval_case import EvalCase, Invocation, SessionInput
from google.adk.evaluation.eval_metrics import EvalMetricResult, EvalStatus
from google.adk.evaluation.eval_result import EvalCaseResult
from google.adk.evaluation.eval_set_results_manager import EvalSetResultsManager
from google.adk.evaluation.eval_sets_manager import EvalSetsManager
from google.adk.evaluation.in_memory_eval_sets_manager import InMemoryEvalSetsManager
from google.adk.evaluation.local_eval_set_results_manager import LocalEvalSetResultsManager
from google.adk.evaluation.local_eval_sets_manager import LocalEvalSetsManager
from google.genai import types

from runtime_app.evals import PostgresEvalSetResultsManager, PostgresEvalSetsManager

pytestmark = pytest.mark.django_db(transaction=True)

APP = "weather"
T = TypeVar("T")


def in_loop(fn: Callable[..., T], *args: Any) -> T:
    """``fn(*args)`` called from a coroutine, as ADK's dev server handlers and eval service call the managers."""

    async def call() -> T:
        return fn(*args)

    return asyncio.run(call())


def case(eval_id: str, text: str = "東京の天気は？") -> EvalCase:
    return EvalCase(
        eval_id=eval_id,
        conversation=[
            Invocation(
                invocation_id="i1",
                user_content=types.Content(role="user", parts=[types.Part(text=text)]),
                final_response=types.Content(role="model", parts=[types.Part(text="晴れです。")]),
            )
        ],
        session_input=SessionInput(app_name=APP, user_id="ada", state={"unit": "celsius"}),
    )


def case_result(eval_id: str, score: float) -> EvalCaseResult:
    status = EvalStatus.PASSED if score >= 0.8 else EvalStatus.FAILED
    return EvalCaseResult(
        eval_set_id="smoke",
        eval_id=eval_id,
        final_eval_status=status,
        overall_eval_metric_results=[
            EvalMetricResult(metric_name="response_match_score", threshold=0.8, score=score, eval_status=status)
        ],
        eval_metric_result_per_invocation=[],
        session_id=f"session-{eval_id}",
        user_id="ada",
    )


@pytest.fixture(params=["in_memory", "local", "postgres"])
def sets(request, tmp_path) -> EvalSetsManager:
    (tmp_path / APP).mkdir()
    return {
        "in_memory": InMemoryEvalSetsManager,
        "local": lambda: LocalEvalSetsManager(agents_dir=str(tmp_path)),
        "postgres": PostgresEvalSetsManager,
    }[request.param]()


@pytest.fixture(params=["local", "postgres"])
def results(request, tmp_path) -> EvalSetResultsManager:
    (tmp_path / APP).mkdir(exist_ok=True)
    if request.param == "local":
        return LocalEvalSetResultsManager(agents_dir=str(tmp_path))
    return PostgresEvalSetResultsManager()


# --- eval sets: the contract ---


def test_a_created_set_is_empty_listed_and_fetched(sets):
    created = in_loop(sets.create_eval_set, APP, "smoke")
    in_loop(sets.create_eval_set, APP, "regressions")

    assert (created.eval_set_id, created.eval_cases) == ("smoke", [])
    assert sorted(in_loop(sets.list_eval_sets, APP)) == ["regressions", "smoke"]
    fetched = in_loop(sets.get_eval_set, APP, "smoke")
    assert fetched is not None and (fetched.eval_set_id, fetched.eval_cases) == ("smoke", [])
    assert fetched.creation_timestamp == pytest.approx(created.creation_timestamp)


def test_creating_a_set_twice_is_a_value_error(sets):
    in_loop(sets.create_eval_set, APP, "smoke")
    with pytest.raises(ValueError):
        in_loop(sets.create_eval_set, APP, "smoke")


def test_an_unknown_set_or_case_is_none(sets):
    in_loop(sets.create_eval_set, APP, "smoke")

    assert in_loop(sets.get_eval_set, APP, "nope") is None
    assert in_loop(sets.get_eval_case, APP, "nope", "c1") is None
    assert in_loop(sets.get_eval_case, APP, "smoke", "c1") is None


def test_cases_keep_their_order_and_content_through_add_update_delete(sets):
    in_loop(sets.create_eval_set, APP, "smoke")
    for eval_id in ("c1", "c2", "c3"):
        in_loop(sets.add_eval_case, APP, "smoke", case(eval_id))

    in_loop(sets.update_eval_case, APP, "smoke", case("c2", "Какая погода в Москве?"))
    in_loop(sets.delete_eval_case, APP, "smoke", "c1")

    eval_set = in_loop(sets.get_eval_set, APP, "smoke")
    assert eval_set is not None
    assert [c.eval_id for c in eval_set.eval_cases] == ["c2", "c3"]
    updated = in_loop(sets.get_eval_case, APP, "smoke", "c2")
    assert updated == case("c2", "Какая погода в Москве?")
    assert eval_set.eval_cases[1] == case("c3")


def test_a_duplicate_case_is_a_value_error(sets):
    in_loop(sets.create_eval_set, APP, "smoke")
    in_loop(sets.add_eval_case, APP, "smoke", case("c1"))
    with pytest.raises(ValueError):
        in_loop(sets.add_eval_case, APP, "smoke", case("c1"))


@pytest.mark.parametrize("method", ["add", "update", "delete"])
def test_a_case_of_a_missing_set_is_not_found(sets, method):
    call = {
        "add": lambda: sets.add_eval_case(APP, "nope", case("c1")),
        "update": lambda: sets.update_eval_case(APP, "nope", case("c1")),
        "delete": lambda: sets.delete_eval_case(APP, "nope", "c1"),
    }[method]
    with pytest.raises(NotFoundError):
        in_loop(call)


@pytest.mark.parametrize("method", ["update", "delete"])
def test_a_missing_case_is_not_found(sets, method):
    in_loop(sets.create_eval_set, APP, "smoke")
    call = {
        "update": lambda: sets.update_eval_case(APP, "smoke", case("c1")),
        "delete": lambda: sets.delete_eval_case(APP, "smoke", "c1"),
    }[method]
    with pytest.raises(NotFoundError):
        in_loop(call)


def test_sets_of_another_app_are_not_seen(sets, tmp_path):
    (tmp_path / "other").mkdir()
    in_loop(sets.create_eval_set, APP, "smoke")
    in_loop(sets.create_eval_set, "other", "theirs")

    assert in_loop(sets.list_eval_sets, "other") == ["theirs"]
    assert in_loop(sets.get_eval_set, "other", "smoke") is None


# --- eval sets: ADK's Local rules, which Cognizes keeps ---


@pytest.mark.parametrize("manager", ["local", "postgres"])
@pytest.mark.parametrize("eval_set_id", ["with space", "tokyo-1", "東京", "a/b", "", "x\0y", "ok\n"])
def test_an_eval_set_id_outside_adks_rule_is_a_value_error(manager, eval_set_id, tmp_path):
    sets = LocalEvalSetsManager(agents_dir=str(tmp_path)) if manager == "local" else PostgresEvalSetsManager()
    with pytest.raises(ValueError):
        in_loop(sets.create_eval_set, APP, eval_set_id)


def test_a_new_set_is_named_by_its_id_and_the_list_is_sorted():
    sets = PostgresEvalSetsManager()
    for eval_set_id in ("b_set", "A_set", "a_set"):
        in_loop(sets.create_eval_set, APP, eval_set_id)

    assert in_loop(sets.list_eval_sets, APP) == ["A_set", "a_set", "b_set"]
    eval_set = in_loop(sets.get_eval_set, APP, "a_set")
    assert eval_set is not None and eval_set.name == "a_set"


def test_hostile_names_are_not_found_rather_than_errors():
    sets = PostgresEvalSetsManager()
    in_loop(sets.create_eval_set, APP, "smoke")

    assert in_loop(sets.get_eval_set, "x\0", "smoke") is None
    assert in_loop(sets.get_eval_case, APP, "smoke", "c\0") is None
    assert in_loop(sets.list_eval_sets, "a" * 1000) == []
    with pytest.raises(NotFoundError):
        in_loop(sets.delete_eval_case, APP, "smoke", "c\0")
    with pytest.raises(ValueError):
        in_loop(sets.add_eval_case, APP, "smoke", case("c\0"))
    # A NUL inside a user's message is kept (JSON text, not jsonb, which refuses \u0000).
    in_loop(sets.add_eval_case, APP, "smoke", case("c1", "nul\0inside"))
    assert in_loop(sets.get_eval_case, APP, "smoke", "c1") == case("c1", "nul\0inside")


# --- eval results: the contract (Local is ADK's only reference) ---


def test_a_saved_result_is_listed_by_a_name_that_fetches_it_whole(results):
    in_loop(results.save_eval_set_result, APP, "smoke", [case_result("c1", 0.9), case_result("c2", 0.4)])

    [name] = in_loop(results.list_eval_set_results, APP)
    fetched = in_loop(results.get_eval_set_result, APP, name)

    assert name.startswith(f"{APP}_smoke_")
    assert (fetched.eval_set_result_name, fetched.eval_set_id) == (name, "smoke")
    assert fetched.eval_case_results == [case_result("c1", 0.9), case_result("c2", 0.4)]


def test_an_unknown_result_is_not_found(results):
    with pytest.raises(NotFoundError):
        in_loop(results.get_eval_set_result, APP, f"{APP}_smoke_1.0")


def test_results_of_another_app_are_not_seen(results, tmp_path):
    (tmp_path / "other").mkdir(exist_ok=True)
    in_loop(results.save_eval_set_result, APP, "smoke", [case_result("c1", 0.9)])

    assert in_loop(results.list_eval_set_results, "other") == []
    [name] = in_loop(results.list_eval_set_results, APP)
    with pytest.raises(NotFoundError):
        in_loop(results.get_eval_set_result, "other", name)


def test_results_are_listed_oldest_first():
    results = PostgresEvalSetResultsManager()
    for score in (0.9, 0.5, 0.7):
        in_loop(results.save_eval_set_result, APP, "smoke", [case_result("c1", score)])

    names = in_loop(results.list_eval_set_results, APP)
    scores = [
        in_loop(results.get_eval_set_result, APP, name).eval_case_results[0].overall_eval_metric_results[0].score
        for name in names
    ]
    assert scores == [0.9, 0.5, 0.7]
