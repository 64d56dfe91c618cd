"""Hostile input on the Vertex surface gets a 4xx in Google's error shape and changes nothing."""

from __future__ import annotations

import json
from collections.abc import Iterator

import httpx
import pytest

from memory_app.models import Memory
from sessions_app.models import Event, Session
from tests.vertex.test_sessions_http import client, create

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture
def http(server) -> Iterator[httpx.Client]:
    with client(server) as c:
        yield c


HUGE = str(10**29)
DEEP = "[" * 100_000 + "]" * 100_000
LONG = "".join(chr(0x4E00 + i) for i in range(3000))  # 9 KB of UTF-8 that does not compress


def _append(**event) -> str:
    return json.dumps({"author": "user", "invocationId": "i", "timestamp": "2026-01-01T00:00:00Z", **event})


CASES = [
    ("post", "sessions?sessionId=s2", DEEP),
    ("post", "sessions?sessionId=s2", json.dumps({"userId": "ada", "sessionState": json.loads("[" * 500 + "]" * 500)})),
    ("post", "sessions?sessionId=s%002", json.dumps({"userId": "ada"})),
    ("post", f"sessions?sessionId={'s' * 5000}", json.dumps({"userId": "ada"})),
    ("post", "sessions?sessionId=s2", json.dumps({"userId": "x" * 5000})),
    ("post", "sessions?sessionId=s2", json.dumps({"userId": "a\u0000b"})),
    ("post", "sessions?sessionId=s2", json.dumps({"userId": "ada", "ttl": "1e308s"})),
    ("post", "sessions?sessionId=s2", json.dumps({"userId": "ada", "expireTime": "99999-01-01T00:00:00Z"})),
    ("get", "sessions/s1%00", None),
    ("get", f"sessions/{'s' * 5000}", None),
    ("get", f"sessions?pageSize={HUGE}", None),
    ("get", "sessions?pageToken=%00%ff", None),
    ("get", 'sessions?filter=user_id="a%00"', None),
    ("get", f"sessions/s1/events?pageSize={HUGE}", None),
    ("get", 'sessions/s1/events?filter=timestamp>="99999-01-01T00:00:00Z"', None),
    ("post", "sessions/s1:appendEvent", _append(timestamp="99999-01-01T00:00:00Z")),
    ("post", "sessions/s1:appendEvent", _append(timestamp=1e308)),
    ("post", "sessions/s1:appendEvent", _append(content=json.loads("[" * 500 + "]" * 500))),
    ("post", "sessions/s1:appendEvent", DEEP),
    ("patch", "sessions/s1?updateMask=sessionState", json.dumps({"sessionState": {"a": "\u0000"}})),
    (
        "post",
        "./memories:retrieve",
        json.dumps({"scope": {"user_id": "ada"}, "similaritySearchParams": {"searchQuery": "tea", "topK": HUGE}}),
    ),
    ("post", "./memories:retrieve", json.dumps({"scope": {"user_id": "a" * 5000}})),
    ("post", "memories", json.dumps({"fact": "x", "scope": {"user_id": "ada\u0000"}})),
    (
        "post",
        "./memories:generate",
        json.dumps({"directContentsSource": {"events": DEEP}, "scope": {"user_id": "ada"}}),
    ),
    ("post", "memories", json.dumps({"fact": "x", "scope": {"user_id": "ada", "team": LONG}})),
    ("post", "memories", json.dumps({"fact": "x", "scope": {"user_id": "ada", LONG: "team"}})),
    (
        "post",
        "./memories:generate",
        json.dumps(
            {"directMemoriesSource": {"directMemories": [{"fact": "x"}]}, "scope": {"user_id": "ada", "team": LONG}}
        ),
    ),
]


@pytest.mark.parametrize(("method", "path", "body"), CASES, ids=[f"{m} {p[:50]}" for m, p, _ in CASES])
def test_hostile_input_gets_a_4xx_in_googles_shape_and_changes_nothing(http, method, path, body):
    create(http, "ada", "s1")
    before = (Session.objects.count(), Event.objects.count(), Memory.objects.count())

    kwargs = {"content": body, "headers": {"Content-Type": "application/json"}} if body is not None else {}
    response = http.request(method.upper(), path, **kwargs)

    assert 400 <= response.status_code < 500, (response.status_code, response.text[:300])
    assert set(response.json()["error"]) == {"code", "message", "status"}
    assert (Session.objects.count(), Event.objects.count(), Memory.objects.count()) == before
