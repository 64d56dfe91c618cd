"""A streaming replica (``DATABASE_REPLICA_URL``) serves the reads that may be slightly stale, and only those.

A private stack (PostgreSQL, a real streaming replica of it made with pg_basebackup,
Redis, uvicorn) whose replica is made to lag by pausing its WAL replay: memory
search and the admin's lists then show the past, while sessions, which are read to
be written, keep working on the primary without a single stale-session refusal.
"""

from __future__ import annotations

import re
import time

import httpx
import pytest

from cognizes.infra.replica import REPLICA_RETRY_SECONDS
from tests.stack import Stack, wait_for

USER = "/api/v1/apps/weather/users/ada"
PASSWORD = "replica-admin-password"


@pytest.fixture(scope="module")
def stack(tmp_path_factory):
    stack = Stack(tmp_path_factory.mktemp("stack"), replica=True)
    stack.env["DJANGO_SUPERUSER_PASSWORD"] = PASSWORD
    stack.manage("createsuperuser", "--noinput", "--username", "admin", "--email", "admin@example.com")
    yield stack
    stack.close()


@pytest.fixture
def lagging(stack):
    """The replica stops replaying the primary's changes for the test's duration, then catches up."""
    stack.replica.pause()
    yield stack.replica
    stack.replica.resume()


def _event(text: str) -> dict:
    return {"author": "user", "invocation_id": "i", "content": {"role": "user", "parts": [{"text": text}]}}


def found(api: httpx.Client, query: str) -> list[str]:
    answer = api.post(f"{USER}/memories/search/", json={"query": query})
    assert answer.status_code == 200, answer.text
    return [hit["text"] for hit in answer.json()]


def test_memory_search_reads_the_replica_and_catches_up_with_it(stack):
    with stack.client() as api:
        with_lag = stack.replica
        with_lag.pause()
        try:
            assert api.post(f"{USER}/memories/", json={"text": "I play the cello."}).status_code == 201
            assert found(api, "what instrument do I play?") == []  # not replayed yet: the search read the replica
        finally:
            with_lag.resume()
        wait_for(
            lambda: found(api, "what instrument do I play?") == ["I play the cello."], 10, "the replica catching up"
        )


def test_sessions_are_read_and_written_on_the_primary_while_the_replica_lags(stack, lagging):
    with stack.client() as api:
        assert api.post(f"{USER}/sessions/", json={"id": "trip"}).status_code == 201
        for turn in range(5):
            version = api.get(f"{USER}/sessions/trip/").json()["version"]
            answer = api.post(
                f"{USER}/sessions/trip/events/", json={"event": _event(f"turn {turn}"), "expected_version": version}
            )
            assert answer.status_code == 201, answer.text  # never a stale refusal
        events = api.get(f"{USER}/sessions/trip/").json()["events"]
        assert [e["content"]["parts"][0]["text"] for e in events] == [f"turn {t}" for t in range(5)]
    assert lagging.execute("SELECT count(*) FROM sessions WHERE session_id = 'trip'") == [(0,)]  # it does lag


def test_the_admins_lists_read_the_replica_and_its_pages_the_primary(stack, lagging):
    with stack.client() as api:
        memory_id = api.post(f"{USER}/memories/", json={"text": "My bike is red."}).json()["created"][0]
    with httpx.Client(base_url=stack.base, timeout=30, follow_redirects=True) as browser:
        login = browser.get("/admin/login/")
        token = re.search(r'name="csrfmiddlewaretoken" value="([^"]+)"', login.text)[1]
        browser.post(
            "/admin/login/",
            data={"username": "admin", "password": PASSWORD, "csrfmiddlewaretoken": token, "next": "/admin/"},
        )
        listed = browser.get("/admin/memory_app/memory/")
        assert listed.status_code == 200 and "Select memory to view" in listed.text
        assert "My bike is red." not in listed.text  # the list is the replica's
        page = browser.get(f"/admin/memory_app/memory/{memory_id}/change/")
        assert page.status_code == 200 and "My bike is red." in page.text  # the page is the primary's


def test_with_the_replica_down_searches_read_the_primary_and_go_back_to_it_when_it_returns(stack):
    with stack.client() as api:
        assert api.post(f"{USER}/memories/", json={"text": "I sail on weekends."}).status_code == 201
        wait_for(
            lambda: found(api, "what do I do on weekends?")[:1] == ["I sail on weekends."],
            10,
            "the replica catching up",
        )
        stack.replica.stop()
        try:
            started = time.monotonic()
            answers = [api.post(f"{USER}/memories/search/", json={"query": "weekends"}) for _ in range(5)]
            assert [a.status_code for a in answers] == [200] * 5, [a.text for a in answers]
            assert all("I sail on weekends." in a.text for a in answers)
            assert time.monotonic() - started < 10
        finally:
            stack.replica.start()
        stack.replica.pause()  # back in use: what it has not replayed is not found again
        try:
            assert api.post(f"{USER}/memories/", json={"text": "I collect stamps."}).status_code == 201
            time.sleep(REPLICA_RETRY_SECONDS + 0.5)
            assert found(api, "what do I collect?")[:1] != ["I collect stamps."]
        finally:
            stack.replica.resume()
