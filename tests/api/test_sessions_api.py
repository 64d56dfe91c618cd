"""Sessions, events and state over HTTP: the ADK service's rules, as JSON."""

from __future__ import annotations

import json
from datetime import UTC

import pytest
from django.test import override_settings

from cognizes.access.models import ApiKey
from tests.api.conftest import client_for

pytestmark = pytest.mark.django_db

BASE = "/api/v1/apps/shop/users/ada"


def event(text: str, *, author: str = "user", **state) -> dict:
    return {
        "author": author,
        "invocation_id": "inv-1",
        "content": {"role": "user", "parts": [{"text": text}]},
        "actions": {"state_delta": state},
    }


def create(api, session_id: str = "s1", **state):
    response = api.post(f"{BASE}/sessions/", {"id": session_id, "state": state}, format="json")
    assert response.status_code == 201, response.content
    return response.json()


def append(api, text: str, version: int, session_id: str = "s1", **state):
    return api.post(
        f"{BASE}/sessions/{session_id}/events/",
        {"event": event(text, **state), "expected_version": version},
        format="json",
    )


def test_create_read_append_and_list(api):
    created = create(api, n=1, **{"user:lang": "fr", "app:tier": "gold"})
    assert created["state"] == {"n": 1, "user:lang": "fr", "app:tier": "gold"} and created["version"] == 1

    appended = append(api, "hello", created["version"], n=2, **{"temp:x": 1, "user:tz": "CET"})
    assert appended.status_code == 201
    assert appended.json()["event"]["actions"]["state_delta"] == {"n": 2, "user:tz": "CET"}

    session = api.get(f"{BASE}/sessions/s1/").json()
    assert session["version"] == 2
    assert session["state"] == {"n": 2, "user:lang": "fr", "user:tz": "CET", "app:tier": "gold"}
    assert [e["content"]["parts"][0]["text"] for e in session["events"]] == ["hello"]

    listed = api.get(f"{BASE}/sessions/").json()
    assert [s["id"] for s in listed["results"]] == ["s1"] and listed["count"] == 1


def test_generated_id_and_duplicate_id(api):
    generated = api.post(f"{BASE}/sessions/", {}, format="json").json()
    assert len(generated["id"]) == 36
    create(api, "dup")
    response = api.post(f"{BASE}/sessions/", {"id": "dup"}, format="json")
    assert response.status_code == 409
    assert response.json()["error"]["code"] == "conflict"


def test_a_stale_version_gets_409_and_stores_nothing(api):
    create(api)
    assert append(api, "first", 1).status_code == 201

    stale = append(api, "second", 1, n=99)

    assert stale.status_code == 409
    assert stale.json()["error"]["message"].startswith("The session has been modified")
    session = api.get(f"{BASE}/sessions/s1/").json()
    assert len(session["events"]) == 1 and "n" not in session["state"]


def test_get_session_honours_num_recent_events_and_after_timestamp(api):
    create(api)
    for i in range(4):
        body = {"event": {**event(f"m{i}"), "timestamp": 1000.0 + i}, "expected_version": i + 1}
        assert api.post(f"{BASE}/sessions/s1/events/", body, format="json").status_code == 201

    last2 = api.get(f"{BASE}/sessions/s1/", {"num_recent_events": 2}).json()
    after = api.get(f"{BASE}/sessions/s1/", {"after_timestamp": 1002.0}).json()
    assert [e["content"]["parts"][0]["text"] for e in last2["events"]] == ["m2", "m3"]
    assert [e["content"]["parts"][0]["text"] for e in after["events"]] == ["m2", "m3"]
    assert api.get(f"{BASE}/sessions/s1/", {"num_recent_events": -1}).status_code == 400


def test_events_are_listed_in_order_and_paginated(api):
    create(api)
    for i in range(5):
        append(api, f"m{i}", i + 1)

    page = api.get(f"{BASE}/sessions/s1/events/", {"limit": 2, "offset": 1}).json()
    newer = api.get(f"{BASE}/sessions/s1/events/", {"after_version": 4}).json()
    assert [e["event"]["content"]["parts"][0]["text"] for e in page["results"]] == ["m1", "m2"]
    assert page["count"] == 5 and page["next"]
    assert [e["version"] for e in newer["results"]] == [5, 6]


def test_state_patch_is_versioned_and_null_removes_a_key(api):
    create(api, a=1, b=2)

    patched = api.patch(
        f"{BASE}/sessions/s1/state/", {"state": {"a": 10, "b": None}, "expected_version": 1}, format="json"
    )
    assert patched.json() == {"state": {"a": 10}, "version": 2}
    stale = api.patch(f"{BASE}/sessions/s1/state/", {"state": {"a": 0}, "expected_version": 1}, format="json")
    assert stale.status_code == 409

    user = api.patch(f"{BASE}/state/", {"state": {"lang": "de"}, "expected_version": 0}, format="json")
    assert user.json() == {"state": {"lang": "de"}, "version": 1}
    app = api.patch("/api/v1/apps/shop/state/", {"state": {"tier": "x"}, "expected_version": 0}, format="json")
    assert app.json() == {"state": {"tier": "x"}, "version": 1}
    assert api.get(f"{BASE}/sessions/s1/").json()["state"] == {"a": 10, "user:lang": "de", "app:tier": "x"}


def test_delete_session_then_it_is_gone(api):
    create(api)
    assert api.delete(f"{BASE}/sessions/s1/").status_code == 204
    assert api.get(f"{BASE}/sessions/s1/").status_code == 404
    assert api.delete(f"{BASE}/sessions/s1/").status_code == 404
    assert append(api, "late", 1).status_code == 404


@pytest.mark.parametrize(
    ("body", "field"),
    [
        ('{"event": {"author": "user"}, "expected_version": "x"}', "expected_version"),
        ('{"event": {"author": 5, "content": "nope"}, "expected_version": 1}', "event"),
        ('{"event": {"author": "user"}}', "expected_version"),
        ('{"event": {"author": "user"}, "expected_version": 1, "surprise": true}', "surprise"),
        ('{"event": {"author": "user", "partial": true}, "expected_version": 1}', "event"),
    ],
    ids=["wrong-type", "invalid-event", "missing-version", "unknown-field", "partial-event"],
)
def test_invalid_appends_get_400_and_change_nothing(api, body, field):
    create(api)
    response = api.post(f"{BASE}/sessions/s1/events/", body, content_type="application/json")

    assert response.status_code == 400
    assert field in response.json()["error"]["details"]
    assert api.get(f"{BASE}/sessions/s1/").json()["version"] == 1


def test_malformed_json_gets_400(api):
    response = api.post(f"{BASE}/sessions/", "{not json", content_type="application/json")
    assert response.status_code == 400
    assert response.json()["error"]["code"] == "parse_error"


@override_settings(COGNIZES_API_MAX_BODY_BYTES=2000)
def test_an_oversized_body_gets_413_and_changes_nothing(api):
    create(api)
    response = append(api, "x" * 5000, 1)
    assert response.status_code == 413
    assert response.json()["error"]["code"] == "payload_too_large"
    assert api.get(f"{BASE}/sessions/s1/").json()["version"] == 1


def test_requests_without_a_valid_key_are_refused(api):
    assert client_for("shop").get(f"{BASE}/sessions/").status_code == 200
    anonymous = api.__class__()
    assert anonymous.get(f"{BASE}/sessions/").status_code == 401
    anonymous.credentials(HTTP_AUTHORIZATION="Bearer cgz_0000_nonsense")
    assert anonymous.get(f"{BASE}/sessions/").status_code == 401


def test_a_revoked_key_is_refused(db):
    client = client_for("shop")
    assert client.get(f"{BASE}/sessions/").status_code == 200
    ApiKey.objects.update(revoked_at="2026-01-01T00:00:00Z")
    response = client.get(f"{BASE}/sessions/")
    assert response.status_code == 401
    assert json.loads(response.content)["error"]["message"] == "Unknown or revoked API key."


def test_a_read_only_key_reads_but_cannot_write(api):
    create(api)
    reader = client_for("shop", read_only=True)
    assert reader.get(f"{BASE}/sessions/s1/").status_code == 200
    assert reader.post(f"{BASE}/sessions/", {}, format="json").status_code == 403
    assert append(reader, "nope", 1).status_code == 403
    assert api.get(f"{BASE}/sessions/s1/").json()["version"] == 1


def test_staff_may_browse_the_api_but_other_logged_in_users_may_not(admin_client, django_user_model):
    assert admin_client.get(f"{BASE}/sessions/").status_code == 200
    django_user_model.objects.create_user("visitor", password="pw-123456-x")
    from django.test import Client

    visitor = Client()
    visitor.login(username="visitor", password="pw-123456-x")
    assert visitor.get(f"{BASE}/sessions/").status_code == 403


def test_the_schema_and_swagger_ui_are_served(api):
    schema = api.get("/api/schema/")
    assert schema.status_code == 200 and b"/api/v1/apps/{app_name}/users/{user_id}/sessions/" in schema.content
    assert api.get("/api/docs/").status_code == 200
    # Operations are described by their own views, not by the base class every view shares.
    assert b"Base of every tenant view" not in schema.content


def test_paths_without_their_trailing_slash_are_served_not_redirected(api):
    """Before: an empty 301 that clients do not follow for a POST (curl not at all)."""
    created = api.post(f"{BASE}/sessions", {"id": "s1"}, format="json")
    assert created.status_code == 201 and created.json()["id"] == "s1"
    assert api.get(f"{BASE}/sessions/s1").json()["id"] == "s1"
    assert api.post(f"{BASE}/memories/search", {"query": "x"}, format="json").status_code == 200
    unknown = api.post(f"{BASE}/nothing-here", {}, format="json")
    assert unknown.status_code == 404 and unknown.json()["error"]["code"] == "not_found"


def test_each_key_is_rate_limited_on_its_own(db, monkeypatch):
    from cognizes.access.throttling import KeyRateThrottle

    monkeypatch.setattr(KeyRateThrottle, "rate", "3/min", raising=False)
    busy, other = client_for("shop"), client_for("shop")

    statuses = [busy.get(f"{BASE}/sessions/").status_code for _ in range(4)]

    assert statuses == [200, 200, 200, 429]
    assert busy.get(f"{BASE}/sessions/").json()["error"]["code"] == "throttled"
    assert other.get(f"{BASE}/sessions/").status_code == 200


def test_a_session_takes_a_ttl_on_create_and_its_expiry_can_be_changed(api):
    from datetime import datetime

    created = api.post(f"{BASE}/sessions/", {"id": "t1", "ttl_seconds": 60}, format="json")
    expires = datetime.fromisoformat(created.json()["expire_time"])
    assert created.status_code == 201 and 55 < (expires - datetime.now(UTC)).total_seconds() <= 60
    assert api.get(f"{BASE}/sessions/").json()["results"][0]["expire_time"] == created.json()["expire_time"]

    forever = api.patch(f"{BASE}/sessions/t1/", {"expire_time": None}, format="json")
    assert forever.status_code == 200 and forever.json()["expire_time"] is None
    both = api.patch(f"{BASE}/sessions/t1/", {"expire_time": None, "ttl_seconds": 5}, format="json")
    assert both.status_code == 400
    assert api.patch(f"{BASE}/sessions/t1/", {"ttl_seconds": 10**12}, format="json").status_code == 400

    past = api.patch(f"{BASE}/sessions/t1/", {"expire_time": "2001-01-01T00:00:00Z"}, format="json")
    assert past.status_code == 404  # expired by the change: gone at once, as if deleted
    assert api.get(f"{BASE}/sessions/t1/").status_code == 404
    assert api.post(f"{BASE}/sessions/", {"id": "t1"}, format="json").status_code == 201  # its id is free again


def test_concurrent_requests_never_pass_the_rate(transactional_db, monkeypatch):
    """The count is taken and raised in one step: DRF's read-then-write let concurrent requests all pass."""
    from concurrent.futures import ThreadPoolExecutor

    from cognizes.access.throttling import KeyRateThrottle

    monkeypatch.setattr(KeyRateThrottle, "rate", "5/min", raising=False)
    headers = client_for("shop")._credentials  # the key's Authorization header

    def one(_: int) -> int:
        from django.db import connection
        from django.test import Client

        try:
            return Client().get(f"{BASE}/sessions/", **headers).status_code
        finally:
            connection.close()

    with ThreadPoolExecutor(max_workers=10) as pool:
        statuses = list(pool.map(one, range(20)))

    assert sorted(statuses) == [200] * 5 + [429] * 15


@pytest.mark.parametrize("session_id", ["a/b", "..", ".", "../../x y?#", "/"])
def test_a_session_id_no_url_could_name_is_refused_at_creation(api, session_id):
    """Issue 30: such ids answered 201, then every GET and DELETE 404: a session nobody could reach."""
    from sessions_app.models import Session

    response = api.post(f"{BASE}/sessions/", {"id": session_id}, format="json")

    assert response.status_code == 400, response.content
    assert "may not contain '/' nor be '.' or '..'" in json.dumps(response.json())
    assert not Session.objects.exists()


@pytest.mark.parametrize("session_id", ["x y?#", "50%off", "Ünïcødé 会话", "a.b", "...", "a\\b"])
def test_every_other_session_id_is_reached_percent_encoded(api, session_id):
    from urllib.parse import quote

    create(api, session_id)
    url = f"{BASE}/sessions/{quote(session_id, safe='')}/"

    assert api.get(url).json()["id"] == session_id
    assert api.delete(url).status_code == 204
    assert api.get(url).status_code == 404


def test_a_stale_write_names_the_version_to_read_again(api):
    """Issue 30: a stale state PATCH said "…before appending more events" with details null."""
    create(api)
    assert append(api, "first", 1).status_code == 201

    stale_append = append(api, "late", 1).json()["error"]
    stale_patch = api.patch(f"{BASE}/sessions/s1/state/", {"state": {"a": 1}, "expected_version": 1}, format="json")
    stale_user = api.patch(f"{BASE}/state/", {"state": {"a": 1}, "expected_version": 5}, format="json")

    assert stale_append["details"] == {"current_version": 2}
    assert stale_patch.status_code == 409
    assert stale_patch.json()["error"]["details"] == {"current_version": 2}
    assert "appending" not in stale_patch.json()["error"]["message"]
    assert "version 2" in stale_patch.json()["error"]["message"]
    assert stale_user.status_code == 409 and stale_user.json()["error"]["details"] == {"current_version": 0}


def test_a_misspelt_field_is_named_as_unknown_wherever_a_body_is_read(api):
    """Issue 30: a memory with ``txt`` answered only "text: This field is required."; sessions said "Unknown field"."""
    memory = api.post(f"{BASE}/memories/", {"txt": "hello"}, format="json").json()["error"]["details"]
    session = api.post(f"{BASE}/sessions/", {"idd": "x"}, format="json").json()["error"]["details"]

    assert memory == {"text": ["This field is required."], "txt": ["Unknown field."]}
    assert session == {"idd": ["Unknown field."]}


def test_listing_pages_carry_each_users_state_and_the_count_even_past_the_end(api):
    for number in range(3):
        create(api, f"s{number}", n=number, **({"user:lang": "fr"} if number == 0 else {}))
    api.post("/api/v1/apps/shop/users/bob/sessions/", {"id": "b1", "state": {"user:lang": "de"}}, format="json")

    page = api.get(f"{BASE}/sessions/?limit=2&offset=1").json()
    assert page["count"] == 3 and page["next"] is None and page["previous"] is not None
    assert [(s["id"], s["state"]) for s in page["results"]] == [
        ("s1", {"n": 1, "user:lang": "fr"}),
        ("s2", {"n": 2, "user:lang": "fr"}),
    ]
    past = api.get(f"{BASE}/sessions/?limit=2&offset=10").json()
    assert past["count"] == 3 and past["results"] == []
    every_user = api.get("/api/v1/apps/shop/sessions/").json()
    assert {s["id"]: s["state"].get("user:lang") for s in every_user["results"]} == {
        "s0": "fr",
        "s1": "fr",
        "s2": "fr",
        "b1": "de",
    }


def test_an_apps_listing_keeps_to_the_user_asked_for_and_to_a_restricted_keys_own(api):
    """The list is one prepared statement now, not a queryset: ``?user_id=``, ``?updated_since=`` and a
    user-restricted key must still narrow it, each alone and together."""
    create(api, "a1")
    for sid in ("b1", "b2"):
        api.post("/api/v1/apps/shop/users/bob/sessions/", {"id": sid}, format="json")
    apps = "/api/v1/apps/shop/sessions/"
    ada_only = client_for("shop", user_id="ada")

    def ids(client, **query):
        page = client.get(apps, query).json()
        assert page["count"] == len(page["results"])
        return sorted(s["id"] for s in page["results"])

    assert ids(api) == ["a1", "b1", "b2"]
    assert ids(api, user_id="bob") == ["b1", "b2"]
    assert ids(ada_only) == ["a1"]
    assert ids(ada_only, user_id="bob") == []  # another user's sessions, even when asked for by name
    assert ids(api, updated_since="2999-01-01T00:00:00Z") == []
    assert ids(api, user_id="bob", updated_since="2000-01-01T00:00:00Z") == ["b1", "b2"]
    assert api.get(f"{BASE}/sessions/", {"user_id": "bob"}).json() == {
        "count": 0,
        "next": None,
        "previous": None,
        "results": [],
    }  # ada's path, bob's name: nobody's
