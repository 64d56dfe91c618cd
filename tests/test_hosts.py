"""Several hosts on one database: two web servers and two Celery workers, each a process with a var dir of its own,
sharing only DATABASE_URL and REDIS_URL.

A bounded load on loopback goes through both web servers at once: users append to
their sessions alternately through either (compare-and-swap, so a lost race is a
409 to retry, never a lost event), queue consolidation jobs through either (which
the two workers run, several jobs of one user at a time), and say the same things
again through both. Then: every acknowledged event is stored, every job is done,
and no memory exists twice.
"""

from __future__ import annotations

import time
from collections import Counter
from concurrent.futures import ThreadPoolExecutor

import pytest

from tests.stack import Stack

USERS = 4
TURNS = 12
FACTS = ["I play the cello.", "My dog is called Rex.", "I live in Lisbon.", "I am allergic to peanuts."]


@pytest.fixture(scope="module")
def hosts(tmp_path_factory):
    root = tmp_path_factory.mktemp("hosts")
    stack = Stack(root)  # host a: its web server and worker-a in stack.env's var dir; host b: its own
    bases = [stack.base, stack.start_web("web-b", COGNIZES_VAR_DIR=str(root / "host-b"))]
    stack.start_worker("worker-a")
    stack.start_worker("worker-b", COGNIZES_VAR_DIR=str(root / "host-b"))
    yield stack, bases
    stack.close()


def user_path(user: int) -> str:
    return f"/api/v1/apps/weather/users/u{user}"


def _event(text: str) -> dict:
    return {"author": "user", "invocation_id": "i", "content": {"role": "user", "parts": [{"text": text}]}}


def converse(stack: Stack, bases: list[str], user: int) -> tuple[int, list[int]]:
    """One user's load: TURNS appends, a job every 4 turns and each fact said directly, alternating web servers.
    Returns the appends acknowledged and the jobs queued."""
    clients = [stack.client(base) for base in bases]
    acknowledged, jobs = 0, []
    path = user_path(user)
    try:
        assert clients[0].post(f"{path}/sessions/", json={"id": "talk"}).status_code == 201
        for turn in range(TURNS):
            api = clients[turn % 2]
            while True:  # another copy may have written since this one was read: read again and retry
                version = api.get(f"{path}/sessions/talk/").json()["version"]
                answer = api.post(
                    f"{path}/sessions/talk/events/",
                    json={"event": _event(FACTS[turn % len(FACTS)]), "expected_version": version},
                )
                if answer.status_code != 409:
                    break
            assert answer.status_code == 201, answer.text
            acknowledged += 1
            remembered = clients[(turn + 1) % 2].post(f"{path}/memories/", json={"text": FACTS[turn % len(FACTS)]})
            assert remembered.status_code == 201, remembered.text
            if turn % 4 == 3:
                job = clients[turn % 2].post(f"{path}/sessions/talk/memory-jobs/")
                assert job.status_code == 202, job.text
                jobs.append(job.json()["id"])
    finally:
        for client in clients:
            client.close()
    return acknowledged, jobs


@pytest.mark.timeout(600)
def test_two_web_servers_and_two_workers_lose_nothing_and_duplicate_nothing(hosts):
    stack, bases = hosts
    with ThreadPoolExecutor(USERS) as pool:
        results = list(pool.map(lambda user: converse(stack, bases, user), range(USERS)))

    with stack.client(bases[1]) as api:
        for user, (acknowledged, jobs) in enumerate(results):
            path = user_path(user)
            events = api.get(f"{path}/sessions/talk/").json()["events"]
            assert len(events) == acknowledged == TURNS  # every acknowledged event stored, no other
            deadline = time.monotonic() + 120
            for job in jobs:
                while (status := api.get(f"{path}/memory-jobs/{job}/").json()["status"]) != "done":
                    assert status != "failed" and time.monotonic() < deadline, f"job {job} is {status}"
                    time.sleep(0.2)
            memories = api.get(f"{path}/memories/", params={"status": "active", "limit": 1000}).json()["results"]
            said = Counter(memory["text"] for memory in memories)
            assert said == Counter(FACTS), f"user {user}: {said}"  # each fact remembered once, from both sides
    served = [_served(stack, name) for name in ("web", "web-b", "worker-a", "worker-b")]
    assert all(served), f"a process took no part: {served}"


def _served(stack: Stack, name: str) -> int:
    """How many requests (web) or jobs (worker) the process's log shows it handled."""
    log = (stack.logs / f"{name}.log").read_text(errors="replace")
    return log.count("HTTP/1.1") if name.startswith("web") else log.count("succeeded in")
