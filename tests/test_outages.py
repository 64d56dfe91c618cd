"""Outages degrade, they do not cascade: Redis or PostgreSQL down is a fast 503 or nothing at all, never a 500.

Against a private stack (tests/stack.py): the web server runs as ``make run``
starts it (a process, with its connection pool), and the servers under it are
killed with SIGKILL and restarted on the same sockets.

Redis down while a RAG Engine upload's bytes arrive (issue 41 K) is a 503 with Retry-After; the bytes are kept, and
the client's retry finishes the upload with one file, not two.
"""

from __future__ import annotations

import sys
import time
from concurrent.futures import ThreadPoolExecutor
from urllib.parse import urlsplit

import httpx
import pytest
from google.api_core import exceptions

from tests.knowledge.test_api import HANDBOOK
from tests.stack import Stack

pytestmark = pytest.mark.filterwarnings("ignore::pytest.PytestUnraisableExceptionWarning")

USER = "/api/v1/apps/weather/users/ada"
OUTAGE_SECONDS = 12
ENGINE = "reasoningEngines/1"


@pytest.fixture(scope="module")
def stack(tmp_path_factory):
    stack = Stack(tmp_path_factory.mktemp("stack"))
    yield stack
    stack.close()


def _event(text: str) -> dict:
    return {"author": "user", "invocation_id": "i", "content": {"role": "user", "parts": [{"text": text}]}}


def _grpc_sessions(stack: Stack):
    """Google's GAPIC session client on the stack's gRPC server (started the first time)."""
    import grpc
    from google.cloud.aiplatform_v1beta1.services.session_service import SessionServiceClient
    from google.cloud.aiplatform_v1beta1.services.session_service.transports import SessionServiceGrpcTransport

    target = stack.grpc_target = getattr(stack, "grpc_target", None) or stack.start_grpc()
    return SessionServiceClient(transport=SessionServiceGrpcTransport(channel=grpc.insecure_channel(target)))


def _append(client, session_id: str, text: str):
    version = client.get(f"{USER}/sessions/{session_id}/").json()["version"]
    return client.post(
        f"{USER}/sessions/{session_id}/events/", json={"event": _event(text), "expected_version": version}
    )


def test_with_redis_down_the_api_serves_and_queues_jobs_in_postgresql(stack):
    with stack.client() as api:
        assert api.post(f"{USER}/sessions/", json={"id": "before"}).status_code == 201
        stack.redis.kill()
        started = time.monotonic()
        answers = [
            api.post(f"{USER}/sessions/", json={"id": "r1"}),
            _append(api, "r1", "I live in Lisbon."),
            api.get(f"{USER}/sessions/r1/"),
            api.get(f"{USER}/sessions/"),
            api.post(f"{USER}/memories/", json={"text": "I play the cello."}),
            api.post(f"{USER}/memories/search/", json={"query": "cello"}),
            api.post(f"{USER}/sessions/r1/memory-jobs/"),
        ]
        took = time.monotonic() - started
        assert [a.status_code for a in answers] == [201, 201, 200, 200, 201, 200, 202], [a.text for a in answers]
        job = answers[-1].json()
        # The one-turn-per-session claim lives in Redis: a run is refused, retryable, and runs nothing.
        run = api.post(f"{USER}/sessions/r1/run/", json={"message": "hello"})
        assert run.status_code == 503 and run.headers["Retry-After"] == "5"
        assert run.json()["error"]["code"] == "unavailable"
        assert api.get(f"{USER}/sessions/r1/").json()["version"] == 2  # no turn was stored
        print(f"7 requests with Redis down: {took:.2f} s, no 500")

        stack.redis.start()
        stack.start_worker()  # the job recorded while Redis was down is sent once a worker is up
        deadline = time.monotonic() + 60
        while api.get(f"{USER}/memory-jobs/{job['id']}/").json()["status"] != "done":
            assert time.monotonic() < deadline, "the job queued while Redis was down was not run"
            time.sleep(0.3)
        assert "Lisbon" in api.post(f"{USER}/memories/search/", json={"query": "where do I live"}).text


def test_with_postgresql_down_requests_fail_fast_with_503_and_recover_on_their_own(stack):
    with stack.client() as api:
        assert api.post(f"{USER}/sessions/", json={"id": "p1"}).status_code == 201
        grpc_sessions = _grpc_sessions(stack)
        stack.postgres.kill()
        requests = [
            lambda: api.get(f"{USER}/sessions/p1/"),
            lambda: api.post(
                "/a2a/weather/", json={"jsonrpc": "2.0", "id": 1, "method": "tasks/get", "params": {"id": "t1"}}
            ),
            lambda: api.post(f"{USER}/sessions/", json={"id": "p2"}),
            lambda: api.post(f"{USER}/memories/search/", json={"query": "x"}),
            lambda: api.get("/v1beta1/reasoningEngines/1/sessions", headers={"x-goog-api-key": stack.key}),
        ]
        answers, slowest, down_since = [], 0.0, time.monotonic()
        # Long enough for the pool's backoff to grow, and every kind of request at least once.
        while time.monotonic() - down_since < OUTAGE_SECONDS or len(answers) < len(requests):
            started = time.monotonic()
            answers.append(requests[len(answers) % len(requests)]())
            slowest = max(slowest, time.monotonic() - started)
        assert {a.status_code for a in answers} == {503}, [a.text for a in answers if a.status_code != 503]
        assert all(a.headers.get("Retry-After") == "5" for a in answers)
        assert answers[0].json()["error"]["code"] == "unavailable"
        assert answers[1].json()["error"]["code"] == -32603  # JSON-RPC's shape on A2A
        assert answers[4].json()["error"]["status"] == "UNAVAILABLE"  # Google's shape on the Vertex surface
        assert slowest < 5, f"a request waited {slowest:.1f} s for the database"
        with pytest.raises(exceptions.ServiceUnavailable):  # gRPC's UNAVAILABLE, which Google's clients retry
            grpc_sessions.get_session(
                name=f"{ENGINE}/sessions/p1", metadata=[("x-goog-api-key", stack.key)], retry=None
            )

        stack.postgres.start()
        back = time.monotonic()
        while (first := api.get(f"{USER}/sessions/p1/")).status_code != 200:
            assert time.monotonic() - back < 10, first.text
        recovered = time.monotonic() - back
        assert recovered < 3, f"service resumed {recovered:.1f} s after PostgreSQL was back"
        assert api.post(f"{USER}/sessions/", json={"id": "p2"}).status_code == 201  # the refused creates stored nothing
        engine = f"reasoningEngines/{stack.manage('vertex_engine', 'weather').strip()}"
        assert (
            grpc_sessions.get_session(name=f"{engine}/sessions/p1", metadata=[("x-goog-api-key", stack.key)]).user_id
            == "ada"
        )
        print(
            f"{len(answers)} requests in a {OUTAGE_SECONDS} s outage: all 503, slowest {slowest:.2f} s; "
            f"service resumed {recovered:.2f} s after the restart"
        )


def test_worker_and_beat_keep_running_through_redis_and_postgresql_restarts(stack):
    if not stack.workers:
        stack.start_worker()
    beat = stack.spawn("beat", [sys.executable, "-m", "celery", "-A", "cognizes", "beat", "--loglevel", "INFO"])
    stack.workers.append(beat)
    time.sleep(5)  # both connected to the broker and the database
    for server in (stack.redis, stack.postgres):
        server.kill()
        time.sleep(3)
        server.start()
    assert [p.poll() for p in stack.workers] == [None] * len(stack.workers), "a worker or beat exited"

    with stack.client() as api:
        assert api.post(f"{USER}/sessions/", json={"id": "w1"}).status_code == 201
        assert _append(api, "w1", "I keep bees.").status_code == 201
        job = api.post(f"{USER}/sessions/w1/memory-jobs/").json()
        deadline = time.monotonic() + 60
        while api.get(f"{USER}/memory-jobs/{job['id']}/").json()["status"] != "done":
            assert time.monotonic() < deadline, "the worker did not run a job after the restarts"
            time.sleep(0.3)
    assert [p.poll() for p in stack.workers] == [None] * len(stack.workers), "a worker or beat exited"


def test_after_a_quick_postgresql_restart_no_request_gets_a_dead_pooled_connection(stack):
    """The pool hands out no connection the restart killed: each is checked as it is taken, without a round trip."""
    with stack.client() as api:
        with ThreadPoolExecutor(8) as pool:  # several pooled connections, idle when PostgreSQL goes
            assert {r.status_code for r in pool.map(lambda _: api.get(f"{USER}/sessions/"), range(32))} == {200}
        stack.postgres.kill()
        stack.postgres.start()
        with ThreadPoolExecutor(8) as pool:
            statuses = list(pool.map(lambda _: api.get(f"{USER}/sessions/").status_code, range(32)))
        assert statuses == [200] * 32, statuses


def test_with_redis_down_an_uploads_bytes_get_a_503_and_its_retry_finishes_it(stack):
    with stack.client() as api:
        corpus = api.post("/api/v1/apps/weather/corpora/", json={"display_name": "Handbook"}).json()["id"]
        started = api.post(
            f"/upload/v1beta1/ragCorpora/{corpus}/ragFiles:upload",
            json={"ragFile": {}},
            headers={
                "X-Goog-Upload-Protocol": "resumable",
                "X-Goog-Upload-Command": "start",
                "X-Goog-Upload-Header-Content-Type": "text/markdown",
                "X-Goog-Upload-File-Name": "handbook.md",
            },
        )
        url = urlsplit(started.headers["X-Goog-Upload-URL"])
        upload = f"{url.path}?{url.query}"
        bytes_headers = {"X-Goog-Upload-Command": "upload, finalize", "X-Goog-Upload-Offset": "0"}
        keyless = httpx.Client(base_url=stack.base, timeout=30)  # the URL is the capability: no key with the bytes
        stack.redis.kill()
        try:
            refused = keyless.post(upload, content=HANDBOOK.encode(), headers=bytes_headers)
            assert refused.status_code == 503 and refused.headers["Retry-After"] == "5", refused.text
            assert "Redis" in refused.json()["error"]["message"]
            kept = api.get(f"/api/v1/apps/weather/corpora/{corpus}/documents/").json()
            assert [d["source_uri"] for d in kept["results"]] == ["handbook.md"]  # the bytes that arrived are kept
        finally:
            stack.redis.start()
        retried = keyless.post(upload, content=HANDBOOK.encode(), headers=bytes_headers)
        assert retried.status_code == 200 and retried.headers["X-Goog-Upload-Status"] == "final", retried.text
        files = api.get(f"/v1beta1/ragCorpora/{corpus}/ragFiles").json()["ragFiles"]
        assert [f["name"] for f in files] == [retried.json()["ragFile"]["name"]]
        again = keyless.post(upload, content=b"Other bytes.", headers=bytes_headers)
        assert again.status_code == 403  # spent once it finished
