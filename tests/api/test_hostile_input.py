"""Hostile input gets a clear 4xx in the API's error shape and changes nothing (issue 11's table).

Each row answered 500 before: PostgreSQL refused NUL, integers beyond bigint and
times beyond its range; Python's JSON parser recursed too deep.
"""

from __future__ import annotations

import json

import pytest

from memory_app.models import ConsolidationJob
from sessions_app.models import Event, Session
from tests.api.conftest import client_for

pytestmark = pytest.mark.django_db

U = "/api/v1/apps/shop/users/ada"
HUGE = str(10**29)


def event_body(**event) -> str:
    return json.dumps({"event": {"author": "user", **event}, "expected_version": 1})


CASES = [
    # (method, path, body or None)
    ("post", f"{U}/sessions/", "[" * 100_000 + "]" * 100_000),
    ("post", f"{U}/sessions/s1/events/", '{"event": ' + "[" * 100_000 + "]" * 100_000 + ', "expected_version": 1}'),
    ("get", f"{U}/sessions/s1%00/", None),
    ("get", "/api/v1/apps/shop/users/ada%00/sessions/", None),
    ("get", "/api/v1/apps/shop%00/sessions/", None),
    ("post", f"/api/v1/apps/shop/users/{'x' * 5000}/memories/", json.dumps({"text": "I like tea."})),
    ("post", f"{U}/sessions/{'s' * 129}/events/", event_body()),
    ("get", "/api/v1/apps/shop/sessions/?user_id=a%00", None),
    ("post", f"{U}/sessions/", json.dumps({"id": "s2", "state": {"deep": json.loads("[" * 500 + "]" * 500)}})),
    ("get", f"{U}/sessions/s1/?num_recent_events={HUGE}", None),
    ("get", f"{U}/sessions/s1/events/?after_version={HUGE}", None),
    ("get", f"{U}/sessions/?offset={HUGE}", None),
    ("get", f"{U}/memory-jobs/{HUGE}/", None),
    ("post", f"{U}/sessions/s1/events/", event_body(timestamp=1e308)),
    ("post", f"{U}/sessions/s1/events/", event_body(timestamp=-1e15)),
    ("post", f"{U}/sessions/s1/events/", '{"event": {"author": "user", "timestamp": NaN}, "expected_version": 1}'),
    ("post", f"{U}/sessions/s1/events/", json.dumps({"event": {"author": "user"}, "expected_version": 10**29})),
    ("patch", f"{U}/sessions/s1/state/", json.dumps({"state": {"a": 1}, "expected_version": 10**29})),
    # issue 41 K: JSON numbers past a double (1e400 reads as inf), which jsonb cannot hold and int() cannot take
    ("post", f"{U}/sessions/", '{"id": "s2", "state": {"a": 1e400}}'),
    (
        "post",
        f"{U}/sessions/s1/events/",
        '{"event": {"author": "user", "actions": {"state_delta": {"a": -1e400}}}, "expected_version": 1}',
    ),
    ("patch", f"{U}/sessions/s1/state/", '{"state": {"a": [1e400]}, "expected_version": 1}'),
    ("post", f"{U}/memories/", '{"text": "I like tea.", "metadata": {"a": 1e400}}'),
    ("post", f"{U}/memories/search/", '{"query": "tea", "limit": 1e400}'),
    ("get", f"{U}/sessions/?offset=%C2%B2", None),  # '²': str.isdigit() is true, int() refuses it
]


@pytest.mark.parametrize(("method", "path", "body"), CASES, ids=[f"{m} {p[:60]}" for m, p, _ in CASES])
def test_hostile_input_gets_a_4xx_in_the_error_shape_and_changes_nothing(method, path, body):
    api = client_for("shop")
    api.post(f"{U}/sessions/", {"id": "s1"}, format="json")
    before = (Session.objects.count(), Event.objects.count(), ConsolidationJob.objects.count())

    kwargs = {"data": body, "content_type": "application/json"} if body is not None else {}
    response = getattr(api, method)(path, **kwargs)

    assert 400 <= response.status_code < 500, (response.status_code, response.content[:200])
    assert set(response.json()["error"]) == {"code", "message", "details"}
    assert (Session.objects.count(), Event.objects.count(), ConsolidationJob.objects.count()) == before
    assert Session.objects.get(session_id="s1").version == 1


@pytest.mark.parametrize(
    "query",
    [
        "/api/v1/apps/shop/tool-executions/?status=done",
        f"{U}/memories/?kind=recipe",
        f"{U}/sessions/?updated_since=yesterday",
        "/api/v1/apps/shop/sessions/?updated_since=0001-01-01T00:00:00%2B15:00",  # no UTC time: before year 1
    ],
)
def test_a_filter_value_that_cannot_be_read_is_a_400_that_names_it_not_every_row(query):
    """Before: the filter was dropped and the list answered every row, as if it had matched."""
    response = client_for("shop").get(query)

    assert response.status_code == 400, response.content[:300]
    name = query.partition("?")[2].partition("=")[0]
    assert name in response.json()["error"]["details"]


def test_a_time_filter_with_an_offset_postgresql_refuses_is_compared_in_utc():
    """ISO 8601 allows offsets past ±15:59, which PostgreSQL refuses: it answered 500."""
    api = client_for("shop")
    api.post(f"{U}/sessions/", {"id": "s1"}, format="json")
    late, early = "2999-01-01T00:00:00-16:33", "1999-01-01T00:00:00-16:33"

    for path in (
        f"{U}/sessions/",
        "/api/v1/apps/shop/sessions/",
        f"{U}/memories/",
        "/api/v1/apps/shop/tool-executions/",
    ):
        since = "started_since" if "tool" in path else "updated_since"
        assert api.get(path, {since: late}).json()["count"] == 0, path
    assert api.get(f"{U}/sessions/", {"updated_since": early}).json()["count"] == 1


def test_a_time_before_year_one_in_a_memory_search_names_no_time():
    """memory_app.when turned "99999999999 days ago" into a date before year 1: an OverflowError, a 500 (issue 41 K)."""
    api = client_for("shop")
    api.post(f"{U}/memories/", {"text": "I like tea."}, format="json")

    response = api.post(f"{U}/memories/search/", {"query": "what happened 99999999999 days ago"}, format="json")

    assert response.status_code == 200, response.content[:300]


def test_an_artifact_typed_longer_than_is_kept_is_a_400_naming_the_limit():
    """A 300-character Content-Type reached a 255-character column: PostgreSQL's DataError, a 500 (issue 41 K)."""
    api = client_for("shop")
    api.post(f"{U}/sessions/", {"id": "s1"}, format="json")

    response = api.post(f"{U}/sessions/s1/artifacts/notes.txt/content/", b"hello", content_type="text/" + "p" * 300)

    assert response.status_code == 400, response.content[:300]
    assert "at most 255 characters" in str(response.json()["error"]["details"])
    assert api.get(f"{U}/sessions/s1/artifacts/").json() == []
