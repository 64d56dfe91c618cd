"""Every endpoint, tried with another app's key and another user's key: 404/403 and nothing changed."""

from __future__ import annotations

import pytest

from memory_app.models import ConsolidationJob, Memory, MemoryRevision
from sessions_app.models import AppState, Event, Session, UserState
from tests.api.conftest import client_for

pytestmark = pytest.mark.django_db

ADA = "/api/v1/apps/shop/users/ada"


@pytest.fixture
def ada_data(db):
    """Ada's session, event, state, memory and job in app 'shop', made with her own key."""
    owner = client_for("shop", user_id="ada")
    owner.post(f"{ADA}/sessions/", {"id": "s1", "state": {"secret": 1, "user:u": 1}}, format="json")
    body = {"event": {"author": "user", "content": {"parts": [{"text": "My PIN is 1234."}]}}, "expected_version": 1}
    owner.post(f"{ADA}/sessions/s1/events/", body, format="json")
    memory_id = owner.post(f"{ADA}/memories/", {"text": "My PIN is 1234."}, format="json").json()["created"][0]
    revision_id = MemoryRevision.objects.get().id
    job_id = ConsolidationJob.objects.create(app_name="shop", user_id="ada", session_id="s1").id
    return {"memory": memory_id, "revision": revision_id, "job": job_id}


def endpoints(ids: dict) -> list[tuple[str, str, dict | None]]:
    memory = f"{ADA}/memories/{ids['memory']}/"
    return [
        ("get", f"{ADA}/sessions/", None),
        ("post", f"{ADA}/sessions/", {"id": "intruder"}),
        ("get", f"{ADA}/sessions/s1/", None),
        ("delete", f"{ADA}/sessions/s1/", None),
        ("get", f"{ADA}/sessions/s1/events/", None),
        ("post", f"{ADA}/sessions/s1/events/", {"event": {"author": "x"}, "expected_version": 2}),
        ("get", f"{ADA}/sessions/s1/state/", None),
        ("patch", f"{ADA}/sessions/s1/state/", {"state": {"secret": 0}, "expected_version": 2}),
        ("get", f"{ADA}/state/", None),
        ("patch", f"{ADA}/state/", {"state": {"u": 0}, "expected_version": 1}),
        ("get", f"{ADA}/memories/", None),
        ("post", f"{ADA}/memories/", {"text": "planted"}),
        ("post", f"{ADA}/memories/search/", {"query": "PIN"}),
        ("get", memory, None),
        ("patch", memory, {"text": "changed"}),
        ("delete", memory, None),
        ("get", memory + "revisions/", None),
        ("post", memory + "rollback/", {"revision_id": ids["revision"]}),
        ("post", f"{ADA}/sessions/s1/memory-jobs/", None),
        ("get", f"{ADA}/memory-jobs/{ids['job']}/", None),
        ("get", f"{ADA}/sessions/s1/events/stream/", None),
        ("post", f"{ADA}/sessions/s1/run/", {"message": "Tell me my PIN."}),
        ("post", f"{ADA}/sessions/s1/run/stream/", {"message": "Tell me my PIN."}),
    ]


def snapshot() -> list:
    return [
        list(model.objects.order_by("pk").values())
        for model in (Session, Event, AppState, UserState, Memory, MemoryRevision, ConsolidationJob)
    ]


@pytest.mark.parametrize("intruder", ["other_app", "other_user"])
def test_no_endpoint_shows_or_changes_another_tenants_data(ada_data, intruder):
    client = client_for("garden") if intruder == "other_app" else client_for("shop", user_id="bob")
    before = snapshot()

    for method, url, body in endpoints(ada_data):
        response = getattr(client, method)(url, body, format="json")
        assert response.status_code == 404, (method, url, response.status_code)
        assert b"1234" not in response.content

    assert snapshot() == before


def test_a_user_key_sees_only_its_user_in_app_wide_listings(ada_data):
    client_for("shop", user_id="bob").post("/api/v1/apps/shop/users/bob/sessions/", {"id": "b1"}, format="json")

    bob_view = client_for("shop", user_id="bob").get("/api/v1/apps/shop/sessions/").json()
    app_view = client_for("shop").get("/api/v1/apps/shop/sessions/").json()

    assert [(s["user_id"], s["id"]) for s in bob_view["results"]] == [("bob", "b1")]
    assert {s["user_id"] for s in app_view["results"]} == {"ada", "bob"}


def test_a_user_key_cannot_change_app_wide_state(ada_data):
    response = client_for("shop", user_id="ada").patch(
        "/api/v1/apps/shop/state/", {"state": {"x": 1}, "expected_version": 0}, format="json"
    )
    assert response.status_code == 403  # says which key may (tests/api/test_key_kinds.py)
    assert not AppState.objects.exists()


def test_a_key_of_another_app_cannot_read_app_state(ada_data):
    assert client_for("garden").get("/api/v1/apps/shop/state/").status_code == 404
