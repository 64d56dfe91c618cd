"""The traces API: a session's runs, and one run with its spans, scoped to the key's app and user."""

from __future__ import annotations

import time
from datetime import timedelta

import pytest

from sessions_app import services as sessions
from tests.api.conftest import client_for
from tests.tracing.factories import T0, record_trace

pytestmark = pytest.mark.django_db

URL = "/api/v1/apps/shop/users/ada/"


@pytest.fixture
def session() -> str:
    sessions.do_create_session(
        app_name="shop", user_id="ada", session_id="s1", delta=sessions.StateDelta(), now=time.time()
    )
    return "s1"


def test_a_session_lists_its_traces_newest_first(session):
    record_trace("a" * 32, session_id=session)
    record_trace("b" * 32, session_id=session, start=T0 + timedelta(minutes=1), failing_tool=True)

    response = client_for("shop").get(URL + "sessions/s1/traces/")

    assert response.status_code == 200
    assert response.json()["count"] == 2
    newest, oldest = response.json()["results"]
    assert (newest["trace_id"], newest["status"]) == ("b" * 32, "error")
    assert (oldest["trace_id"], oldest["status"], oldest["name"]) == ("a" * 32, "ok", "invoke_agent weather_agent")
    assert (oldest["span_count"], oldest["input_tokens"], oldest["output_tokens"]) == (3, 10, 5)
    assert oldest["duration_ms"] == pytest.approx(100)
    assert (oldest["agent_name"], oldest["tool_calls"]) == ("weather_agent", ["remember_city"])  # issue 43


def test_a_trace_comes_with_its_spans_in_start_order(session):
    trace_id = record_trace(session_id=session)

    response = client_for("shop").get(URL + f"traces/{trace_id}/")

    assert response.status_code == 200
    spans = response.json()["spans"]
    assert [s["name"] for s in spans] == [
        "invoke_agent weather_agent",
        "generate_content scripted-offline",
        "execute_tool remember_city",
    ]
    assert [s["parent_span_id"] for s in spans] == ["", "1" * 16, "1" * 16]
    assert spans[2]["attributes"]["gen_ai.tool.name"] == "remember_city"
    assert spans[1]["duration_ms"] == pytest.approx(30)


@pytest.mark.parametrize(
    "client_args",
    [
        pytest.param({"app_name": "other"}, id="key-of-another-app"),
        pytest.param({"app_name": "shop", "user_id": "bob"}, id="key-of-another-user"),
    ],
)
def test_another_tenant_finds_neither_the_trace_nor_the_list(session, client_args):
    trace_id = record_trace(session_id=session)
    client = client_for(**client_args)

    assert client.get(URL + f"traces/{trace_id}/").status_code == 404
    assert client.get(URL + "sessions/s1/traces/").status_code == 404


def test_a_trace_of_another_user_is_not_found_through_ones_own_url(session):
    trace_id = record_trace(session_id=session)

    response = client_for("shop", user_id="bob").get(f"/api/v1/apps/shop/users/bob/traces/{trace_id}/")

    assert response.status_code == 404
