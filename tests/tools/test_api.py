"""The registry, the audit and approvals over HTTP, scoped like the rest of the API."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from tests.api.conftest import client_for
from tests.tools.conftest import weather_document
from tools_app import services
from tools_app.models import Tool, ToolApproval

pytestmark = pytest.mark.django_db

APP = "travel_app"
BASE = f"/api/v1/apps/{APP}"
URL = "https://weather.example"


@pytest.fixture
def api():
    return client_for(APP)


def test_import_then_list_edit_and_delete_tools(api):
    report = api.post(f"{BASE}/tool-imports/", {"document": weather_document(URL)}, format="json")
    assert report.status_code == 200, report.content
    assert sorted(report.json()["created"]) == ["get_broken", "get_weather", "make_transfer"]

    listed = api.get(f"{BASE}/tools/").json()
    assert [t["name"] for t in listed["results"]] == ["get_broken", "get_weather", "make_transfer"]

    edited = api.patch(f"{BASE}/tools/get_weather/", {"enabled": False, "expected_version": 1}, format="json")
    assert (edited.json()["enabled"], edited.json()["version"]) == (False, 2)
    stale = api.patch(f"{BASE}/tools/get_weather/", {"enabled": True, "expected_version": 1}, format="json")
    assert stale.status_code == 409
    assert [t["name"] for t in api.get(f"{BASE}/tools/", {"enabled": "false"}).json()["results"]] == ["get_weather"]

    assert api.delete(f"{BASE}/tools/get_weather/").status_code == 204
    assert api.get(f"{BASE}/tools/get_weather/").status_code == 404


def test_create_a_python_tool_and_refuse_one_off_the_allow_list(api):
    created = api.post(
        f"{BASE}/tools/",
        {"name": "convert", "kind": "python", "callable_path": "tests.tools.callables.convert_currency"},
        format="json",
    )
    assert created.status_code == 201, created.content
    assert created.json()["parameters_schema"]["properties"].keys() == {"amount", "currency"}

    refused = api.post(
        f"{BASE}/tools/",
        {"name": "x", "kind": "python", "callable_path": "tests.tools.callables.not_allowed"},
        format="json",
    )
    assert refused.status_code == 400
    assert "callable_path" in refused.json()["error"]["details"]
    assert api.post(f"{BASE}/tools/", created.json() | {"parameters_schema": None}, format="json").status_code == 400


def test_a_bad_document_is_a_400_naming_the_problem(api):
    response = api.post(f"{BASE}/tool-imports/", {"document": {"swagger": "2.0"}}, format="json")
    assert response.status_code == 400
    assert "Only OpenAPI 3" in response.json()["error"]["details"]["document"][0]
    assert not Tool.objects.exists()


def _execution(user_id: str, tool_name: str = "get_weather", status: str = "succeeded") -> None:
    services.do_record_execution(
        app_name=APP,
        user_id=user_id,
        session_id=f"{user_id}-s1",
        tool_name=tool_name,
        status=status,
        started_at=datetime(2026, 1, 1, tzinfo=UTC),
        duration_ms=3.0,
        arguments={"city": "Rome"},
        result={},
    )


def test_executions_are_read_only_filterable_and_a_user_key_sees_only_its_user(api):
    _execution("ada")
    _execution("bob", status="failed")

    assert api.get(f"{BASE}/tool-executions/").json()["count"] == 2
    assert [e["user_id"] for e in api.get(f"{BASE}/tool-executions/", {"status": "failed"}).json()["results"]] == [
        "bob"
    ]
    ada = client_for(APP, user_id="ada")
    assert [e["user_id"] for e in ada.get(f"{BASE}/tool-executions/").json()["results"]] == ["ada"]
    assert api.post(f"{BASE}/tool-executions/", {}, format="json").status_code == 405


def test_other_apps_and_user_keys_cannot_touch_the_registry(api):
    services.do_import_openapi(app_name=APP, document=weather_document(URL))
    assert client_for("other_app").get(f"{BASE}/tools/").status_code == 404
    ada = client_for(APP, user_id="ada")
    assert ada.get(f"{BASE}/tools/").json()["count"] == 3
    assert ada.patch(f"{BASE}/tools/get_weather/", {"enabled": False}, format="json").status_code == 403
    assert client_for(APP, read_only=True).delete(f"{BASE}/tools/get_weather/").status_code == 403


def test_a_person_approves_a_paused_call_once(api):
    approval = services.do_record_approval_request(
        app_name=APP,
        user_id="ada",
        session_id="s1",
        request_id="req-1",
        function_call_id="call-1",
        tool_name="make_transfer",
        arguments={"amount": 5},
    )
    assert [a["status"] for a in api.get(f"{BASE}/tool-approvals/", {"status": "pending"}).json()["results"]] == [
        "pending"
    ]
    assert (
        client_for(APP, user_id="bob")
        .post(f"{BASE}/tool-approvals/{approval.id}/", {"approved": True}, format="json")
        .status_code
        == 404
    )

    decided = api.post(f"{BASE}/tool-approvals/{approval.id}/", {"approved": True}, format="json")
    assert decided.json()["status"] == "approved" and decided.json()["decided_by"].startswith("api:")
    again = api.post(f"{BASE}/tool-approvals/{approval.id}/", {"approved": False}, format="json")
    assert again.status_code == 409
    assert ToolApproval.objects.get().status == "approved"
