"""Benchmark: ADK's Vertex AI session client against Cognizes, vs the same calls in-process.

An agent written for Vertex AI reaches Cognizes over HTTP through ADK's own
``VertexAiSessionService`` (``cognizes.vertex``, express mode); an agent written
for Cognizes calls ``PostgresSessionService`` in its own process. Both store the
same rows. Two operations of every agent turn are timed, on one scratch database
(``cognizes_bench_vertex``) of the same PostgreSQL:

* ``append``  ``append_event`` of a user text event with a state delta, one
  session per run, sequentially.
* ``get``     ``get_session`` of a session holding ``--events`` events (ADK's
  Vertex client always downloads every event: it GETs the session and its
  events in parallel and pages through the events).

The baseline the Vertex ways answer to is ``native HTTP``: the same operation over
Cognizes' own API on the same server, with the same bare ``httpx.AsyncClient``
(append: ``POST .../sessions/{id}/events/`` with the version last returned; get:
``GET .../sessions/{id}/``, the session with its events in one request). Each
Vertex way's ``cost vs native`` is native ops/s over its ops/s (issue 29's goal:
at most 1.3x).

To say where the time goes, a third line sends the same HTTP requests with a
bare ``httpx.AsyncClient`` (the JSON the Vertex client sends, built once):
``raw HTTP − in-process`` is the server (uvicorn, Django, DRF, the Vertex
translation) and the loopback; ``Vertex client − raw HTTP`` is Google's client
library (pydantic models, request building, aiohttp/httpx) and ADK's conversion.
``REST as Java`` sends what ADK for Java sends (project mode, a ``{seconds,
nanos}`` timestamp, no ``rawEvent``); ``gRPC (GAPIC)`` is Google's Python client
over gRPC, sending what ADK for Go sends (no ``rawEvent``; get = GetSession and
ListEvents at once), to ``manage.py serve_grpc``. ADK for Go itself is not timed
here (its client would need a Go harness of its own).

The servers are one ``uvicorn`` process and one gRPC process, each with a pool of
20 connections as ``make run`` gives them. Rounds are interleaved (each round runs the three ways back to
back, the order rotating); the table shows medians over rounds of the per-call
median and p95, and operations/s over each run. Ratios are against in-process.
``server CPU`` is what the two server processes' threads ran per call (``/proc``
schedstat), and ``CPU vs native`` its ratio to the native call's: on a machine
shared with other work the latencies move from run to run, the CPU a call costs
hardly at all.

    .venv/bin/python bench/vertex.py [--rounds 5] [--appends 200] [--gets 100] [--events 50]
"""

from __future__ import annotations

import argparse
import asyncio
import datetime
import json
import logging
import os
import statistics
import subprocess
import sys
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench.http_load import SERVER_RATE, free_port, start_server, stop_server
from bench.scratch import close_django_connections, recreate_databases, with_database
from bench.timing import no_gc

os.environ["DJANGO_SETTINGS_MODULE"] = "cognizes.settings"
os.environ["DJANGO_DEBUG"] = "false"

from cognizes.infra import local

BENCH_DB = "cognizes_bench_vertex"
APP = "bench_vertex"
USER = "bench_user"
IN_PROCESS, NATIVE, RAW, VERTEX, JAVA, GRPC = (
    "in-process",
    "native HTTP",
    "raw HTTP",
    "Vertex client",
    "REST as Java",
    "gRPC (GAPIC)",
)
MODES = (IN_PROCESS, NATIVE, RAW, VERTEX, JAVA, GRPC)
VERTEX_WAYS = (RAW, VERTEX, JAVA, GRPC)
TARGET = 1.3
"""Goal of issue 29: a Vertex call costs at most this many times the same call over the native API."""


@dataclass
class Runs:
    latencies: dict[tuple[str, str], list[list[float]]] = field(default_factory=dict)
    throughput: dict[tuple[str, str], list[float]] = field(default_factory=dict)
    server_cpu: dict[tuple[str, str], list[float]] = field(default_factory=dict)
    """CPU seconds per call of the two server processes together (uvicorn's and the gRPC server's)."""

    def add(self, operation: str, mode: str, latencies: list[float], seconds: float) -> None:
        self.latencies.setdefault((operation, mode), []).append(latencies)
        self.throughput.setdefault((operation, mode), []).append(len(latencies) / seconds)


def process_cpu(pids: list[int]) -> float:
    """CPU seconds the processes' threads have run so far (``/proc/…/task/*/schedstat``, nanoseconds): unlike
    time, other helpers' load barely moves it, so it says what a call costs the server when latencies are
    noisy. (The server threads live as long as their process: a pool's, uvicorn's, grpc's.)"""
    total = 0
    for pid in pids:
        for task in os.listdir(f"/proc/{pid}/task"):
            try:
                with open(f"/proc/{pid}/task/{task}/schedstat") as stat:
                    total += int(stat.read().split()[0])
            except (FileNotFoundError, ProcessLookupError):  # a thread that ended meanwhile
                continue
    return total / 1e9


def event(text: str, turn: int):
    from google.adk.events.event import Event
    from google.adk.events.event_actions import EventActions
    from google.genai import types

    return Event(
        author="user",
        invocation_id=f"inv-{turn}",
        content=types.Content(role="user", parts=[types.Part(text=text)]),
        actions=EventActions(state_delta={"turn": turn, "user:last_seen": turn}),
    )


def append_body(adk_event) -> dict:
    """What ADK's Vertex client sends for an appendEvent (see ../shared/vertex-wire.md)."""
    return {
        "author": adk_event.author,
        "invocationId": adk_event.invocation_id,
        "timestamp": datetime.datetime.fromtimestamp(adk_event.timestamp, tz=datetime.UTC).isoformat(),
        "content": adk_event.content.model_dump(exclude_none=True, mode="json"),
        "actions": {"state_delta": adk_event.actions.state_delta, "artifact_delta": {}, "requested_auth_configs": {}},
        "eventMetadata": {},
        "rawEvent": adk_event.model_dump(exclude_none=True, mode="json", by_alias=True),
    }


def java_body(adk_event) -> dict:
    """What ADK for Java sends for an appendEvent: a {seconds, nanos} timestamp, camelCase actions, no rawEvent."""
    millis = int(adk_event.timestamp * 1000)
    return {
        "author": adk_event.author,
        "invocationId": adk_event.invocation_id,
        "timestamp": {"seconds": millis // 1000, "nanos": millis % 1000 * 1_000_000},
        "content": adk_event.content.model_dump(exclude_none=True, mode="json", by_alias=True),
        "actions": {"stateDelta": adk_event.actions.state_delta},
        "eventMetadata": {},
    }


def grpc_event(adk_event):
    """The SessionEvent ADK for Go sends (no raw_event), as Google's Python GAPIC client builds it."""
    from google.cloud.aiplatform_v1beta1.types import SessionEvent
    from google.protobuf import struct_pb2

    delta = struct_pb2.Struct()
    delta.update(adk_event.actions.state_delta)
    return SessionEvent(
        author=adk_event.author,
        invocation_id=adk_event.invocation_id,
        timestamp=datetime.datetime.fromtimestamp(adk_event.timestamp, tz=datetime.UTC),
        content=adk_event.content.model_dump(exclude_none=True, mode="json"),
        actions={"state_delta": delta},
    )


async def timed(calls: int, call: Callable[[int], Awaitable[object]]) -> tuple[list[float], float]:
    latencies = []
    started = time.perf_counter()
    with no_gc():
        for i in range(calls):
            begin = time.perf_counter()
            await call(i)
            latencies.append(time.perf_counter() - begin)
    return latencies, time.perf_counter() - started


class Bench:
    def __init__(self, base_url: str, grpc_target: str, engine_id: int, key: str, args: argparse.Namespace) -> None:
        import grpc
        import httpx
        from google.cloud.aiplatform_v1beta1.services.session_service import SessionServiceAsyncClient
        from google.cloud.aiplatform_v1beta1.services.session_service.transports import (
            SessionServiceGrpcAsyncIOTransport,
        )

        from cognizes.adk import PostgresSessionService
        from cognizes.vertex import VertexAiSessionService

        self.args = args
        self.services = {
            IN_PROCESS: PostgresSessionService(),
            VERTEX: VertexAiSessionService(base_url=base_url, engine_id=engine_id, api_key=key),
        }
        self.engine = f"{base_url}/v1beta1/reasoningEngines/{engine_id}"
        self.http = httpx.AsyncClient(headers={"x-goog-api-key": key}, timeout=30)
        self.java_engine = f"{base_url}/v1beta1/projects/p/locations/us-central1/reasoningEngines/{engine_id}"
        self.java = httpx.AsyncClient(headers={"Authorization": f"Bearer {key}"}, timeout=30)  # OkHttp, project mode
        self.native_user = f"{base_url}/api/v1/apps/{APP}/users/{USER}/sessions"
        self.native = httpx.AsyncClient(headers={"Authorization": f"Bearer {key}"}, timeout=30)
        self.grpc_engine = f"projects/p/locations/us-central1/reasoningEngines/{engine_id}"
        self.grpc = SessionServiceAsyncClient(
            transport=SessionServiceGrpcAsyncIOTransport(channel=grpc.aio.insecure_channel(grpc_target))
        )
        self.grpc_key = [("x-goog-api-key", key)]

    async def session_with_events(self, count: int) -> str:
        service = self.services[IN_PROCESS]
        session = await service.create_session(app_name=APP, user_id=USER)
        for turn in range(count):
            await service.append_event(session, event(f"event {turn} of the history", turn))
        return session.id

    async def append(self, mode: str, runs: Runs) -> None:
        service = self.services[mode if mode == VERTEX else IN_PROCESS]
        session = await service.create_session(app_name=APP, user_id=USER)
        if mode == NATIVE:
            url, version = f"{self.native_user}/{session.id}/events/", [int(session._storage_update_marker)]

            async def call(i: int) -> None:
                payload = event(f"message {i}", i).model_dump(mode="json", exclude_none=True)
                response = await self.native.post(url, json={"event": payload, "expected_version": version[0]})
                response.raise_for_status()
                version[0] = response.json()["version"]
        elif mode in (RAW, JAVA):
            client, engine, body = (
                (self.http, self.engine, append_body) if mode == RAW else (self.java, self.java_engine, java_body)
            )
            url = f"{engine}/sessions/{session.id}:appendEvent"

            async def call(i: int) -> None:
                (await client.post(url, json=body(event(f"message {i}", i)))).raise_for_status()
        elif mode == GRPC:
            name = f"{self.grpc_engine}/sessions/{session.id}"

            async def call(i: int) -> None:
                await self.grpc.append_event(
                    name=name, event=grpc_event(event(f"message {i}", i)), metadata=self.grpc_key
                )
        else:

            async def call(i: int) -> None:
                await service.append_event(session, event(f"message {i}", i))

        runs.add("append", mode, *await timed(self.args.appends, call))

    async def get(self, mode: str, session_id: str, runs: Runs) -> None:
        if mode == NATIVE:
            url = f"{self.native_user}/{session_id}/"

            async def call(i: int) -> None:
                response = await self.native.get(url)
                response.raise_for_status()
                assert len(json.loads(response.content)["events"]) == self.args.events
        elif mode in (RAW, JAVA):
            client, engine = (self.http, self.engine) if mode == RAW else (self.java, self.java_engine)
            session_url = f"{engine}/sessions/{session_id}"

            async def call(i: int) -> None:
                session, events = await asyncio.gather(client.get(session_url), client.get(session_url + "/events"))
                session.raise_for_status()
                events.raise_for_status()
                json.loads(events.content)
        elif mode == GRPC:
            name = f"{self.grpc_engine}/sessions/{session_id}"

            async def events() -> list:
                return [e async for e in await self.grpc.list_events(parent=name, metadata=self.grpc_key)]

            async def call(i: int) -> None:  # as ADK for Go: the session and its events at once
                _, loaded = await asyncio.gather(self.grpc.get_session(name=name, metadata=self.grpc_key), events())
                assert len(loaded) == self.args.events
        else:
            service = self.services[mode]

            async def call(i: int) -> None:
                loaded = await service.get_session(app_name=APP, user_id=USER, session_id=session_id)
                assert len(loaded.events) == self.args.events

        runs.add("get", mode, *await timed(self.args.gets, call))


async def benchmark(
    base_url: str, grpc_target: str, engine_id: int, key: str, args: argparse.Namespace, server_pids: list[int]
) -> Runs:
    bench = Bench(base_url, grpc_target, engine_id, key, args)
    history = await bench.session_with_events(args.events)
    runs = Runs()
    bench.args = argparse.Namespace(**{**vars(args), "appends": 10, "gets": 5})
    for mode in MODES:  # untimed: imports, connections, the client's first requests
        await bench.append(mode, Runs())
        await bench.get(mode, history, Runs())
    bench.args = args
    for round_no in range(args.rounds):
        order = MODES[round_no % len(MODES) :] + MODES[: round_no % len(MODES)]
        for mode in order:
            before = process_cpu(server_pids)
            await bench.append(mode, runs)
            runs.server_cpu.setdefault(("append", mode), []).append((process_cpu(server_pids) - before) / args.appends)
        for mode in order:
            before = process_cpu(server_pids)
            await bench.get(mode, history, runs)
            runs.server_cpu.setdefault(("get", mode), []).append((process_cpu(server_pids) - before) / args.gets)
        print(f"round {round_no + 1}/{args.rounds} done", flush=True)
    for client in (bench.http, bench.java, bench.native):
        await client.aclose()
    return runs


def report(runs: Runs, args: argparse.Namespace) -> None:
    print(
        f"\n{args.rounds} interleaved rounds; append: {args.appends} calls, get: {args.gets} calls of a session "
        f"with {args.events} events. Medians over rounds.\n"
    )
    print(
        f"{'operation':<8} {'way':<14} {'ops/s':>8} {'p50 ms':>8} {'p95 ms':>8} {'vs in-process':>14} "
        f"{'cost vs native':>15}  {'server CPU ms':>13} {'CPU vs native':>13}"
    )
    for operation in ("append", "get"):
        base = statistics.median(runs.throughput[operation, IN_PROCESS])
        native = statistics.median(runs.throughput[operation, NATIVE])
        native_cpu = statistics.median(runs.server_cpu[operation, NATIVE])
        for mode in MODES:
            rate = statistics.median(runs.throughput[operation, mode])
            p50 = statistics.median(statistics.median(run) for run in runs.latencies[operation, mode]) * 1000
            p95 = (
                statistics.median(statistics.quantiles(run, n=20)[-1] for run in runs.latencies[operation, mode]) * 1000
            )
            cost = f"{native / rate:>14.2f}x" if mode in VERTEX_WAYS else f"{'':>15}"
            verdict = ("  PASS" if native / rate <= TARGET else "  MISS") if mode in (RAW, GRPC) else ""
            cpu = statistics.median(runs.server_cpu[operation, mode])
            cpu_cost = f"{cpu / native_cpu:>12.2f}x" if mode in VERTEX_WAYS and native_cpu else f"{'':>13}"
            print(
                f"{operation:<8} {mode:<14} {rate:>8.1f} {p50:>8.2f} {p95:>8.2f} {rate / base:>13.2f}x {cost}"
                f"{verdict or '      '} {cpu * 1000:>13.2f} {cpu_cost}"
            )
    print(
        f"\ncost vs native = native HTTP ops/s / the way's ops/s; goal (issue 29): raw HTTP and gRPC <= {TARGET}x. "
        "A Vertex get is two requests at once (the session, its events), the native one is one.\n"
        "server CPU = CPU time of the uvicorn and gRPC processes' threads per call (/proc schedstat, median over "
        "rounds): what "
        "a call costs the server, barely moved by the machine's other load, which makes the latencies noisy."
    )
    print(
        "where a call's time goes (p50): in-process = the service; raw HTTP - in-process = server and loopback; "
        "Vertex client - raw HTTP = Google's client library and ADK's conversion; gRPC - in-process = the gRPC "
        "server, transcoding and the same views, with Google's thin GAPIC client"
    )
    for operation in ("append", "get"):
        p50 = {
            mode: statistics.median(statistics.median(run) for run in runs.latencies[operation, mode]) * 1000
            for mode in MODES
        }
        print(
            f"  {operation}: service {p50[IN_PROCESS]:.2f} ms, server+loopback {p50[RAW] - p50[IN_PROCESS]:.2f} ms "
            f"(native {p50[NATIVE] - p50[IN_PROCESS]:.2f} ms), "
            f"client library {p50[VERTEX] - p50[RAW]:.2f} ms; "
            f"gRPC over the service {p50[GRPC] - p50[IN_PROCESS]:.2f} ms"
            f" ({p50[GRPC] / p50[RAW]:.2f}x raw HTTP's p50), REST as Java {p50[JAVA] / p50[RAW]:.2f}x raw HTTP's"
        )


def start_grpc_server(database_url: str, redis_url: str) -> tuple[subprocess.Popen, str]:
    """``manage.py serve_grpc`` as ``make run`` starts it (pool of 20), answering once this returns."""
    import grpc

    port = free_port()
    env = {
        **os.environ,
        "DATABASE_URL": database_url,
        "REDIS_URL": redis_url,
        "DATABASE_POOL_SIZE": "20",
        "DATABASE_CONN_MAX_AGE": "0",
        "COGNIZES_API_RATE": SERVER_RATE,
        "DJANGO_DEBUG": "false",
    }
    process = subprocess.Popen(
        [sys.executable, "manage.py", "serve_grpc", "--port", str(port), "--verbosity", "0"], env=env, cwd=ROOT
    )
    target = f"127.0.0.1:{port}"
    grpc.channel_ready_future(grpc.insecure_channel(target)).result(timeout=60)
    return process, target


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--appends", type=int, default=200)
    parser.add_argument("--gets", type=int, default=100)
    parser.add_argument("--events", type=int, default=50, help="events of the session that get loads")
    args = parser.parse_args()

    server_url = local.database_url()
    database_url = with_database(server_url, BENCH_DB)
    recreate_databases(server_url, [BENCH_DB])
    os.environ["DATABASE_URL"] = database_url
    try:
        import django

        django.setup()
        from django.conf import settings
        from django.core.management import call_command

        from cognizes.access.services import do_create_api_key
        from vertex_app.services import do_get_or_create_engine

        logging.getLogger("httpx").setLevel(logging.WARNING)
        call_command("migrate", verbosity=0)
        engine_id = do_get_or_create_engine(app_name=APP).engine_id
        _, key = do_create_api_key(name="bench", app_name=APP)
        server = start_server(database_url, settings.REDIS_URL, conn_max_age=0, pool_size=20, workers=1)
        grpc_server, grpc_target = start_grpc_server(database_url, settings.REDIS_URL)
        try:
            runs = asyncio.run(
                benchmark(server.base_url, grpc_target, engine_id, key, args, [server.process.pid, grpc_server.pid])
            )
        finally:
            stop_server(server)
            grpc_server.terminate()
            grpc_server.wait(30)
        report(runs, args)
    finally:
        close_django_connections()
        recreate_databases(server_url, [BENCH_DB], create=False)


if __name__ == "__main__":
    main()
