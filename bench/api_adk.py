"""Cognizes' HTTP API against ADK's own ``adk api_server``, process for process (``bench/api.py --adk``).

Both servers are one web process on the same PostgreSQL: Cognizes under ``uvicorn``
(``--workers 1``, a pool of 20 connections as ``make run`` gives it), ADK's FastAPI app as
``adk api_server --session_service_uri postgresql+asyncpg://…`` starts it (its
``DatabaseSessionService`` on a scratch database of its own, ``cognizes_bench_adk_api``).
The same client (``httpx``, one keep-alive connection per thread) sends the same calls
to both, ``--concurrency`` clients at once and one alone:

* ``create``        create a session with a small state;
* ``get_empty``     get a session without events;
* ``get_50``        get a session with 50 events (what an agent loads every turn);
* ``list_50``       list a user's 50 sessions.

ADK's api_server has no endpoint that appends an event (events come from ``/run``), so the
50 events are stored beforehand through each side's own service. Besides req/s and p50,
each row shows the server's CPU per request (user + system time of its process over the
run, divided by the requests): a figure that should stay flat from one client to many.
Rounds interleave the two servers, the one that goes first alternating; medians over rounds.
Issue 29's goal: ours at least 1.5x ADK's req/s on every operation with 4 clients.
"""

from __future__ import annotations

import asyncio
import os
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

from bench.http_load import free_port, run_load, start_server, stop_server
from bench.scratch import recreate_databases
from bench.sessions import asyncpg_url, text_event

ADK_DB = "cognizes_bench_adk_api"
APP = "bench_api"
OURS, ADK = "Cognizes", "adk api_server"
USER = "api_user"
OPERATIONS = ("create", "get_empty", "get_50", "list_50")
TARGET = 1.5
AGENT = """from google.adk.agents import Agent

root_agent = Agent(name="bench_agent", model="gemini-2.0-flash", instruction="Answer briefly.")
"""


@dataclass
class Target:
    """A server and the ids its calls use."""

    name: str
    pid: int
    base: str
    headers: dict[str, str]
    sessions_url: str
    empty_id: str = ""
    full_id: str = ""
    list_user_url: str = ""

    def session_url(self, session_id: str) -> str:
        return f"{self.sessions_url.rstrip('/')}/{session_id}" + ("/" if self.sessions_url.endswith("/") else "")


@dataclass
class Results:
    runs: dict[tuple[str, str, int], list[tuple[float, float, float]]] = field(default_factory=dict)
    """(operation, server, clients) -> [(req/s, p50 ms, CPU ms per request)] per round."""

    def add(self, key: tuple[str, str, int], value: tuple[float, float, float]) -> None:
        self.runs.setdefault(key, []).append(value)

    def median(self, key: tuple[str, str, int], index: int) -> float:
        return statistics.median(run[index] for run in self.runs[key])


class Caller:
    """One client thread's keep-alive connection and the operation it repeats."""

    def __init__(self, target: Target, operation: str) -> None:
        import httpx

        self.http = httpx.Client(base_url=target.base, headers=target.headers, timeout=30.0)
        self.target, self.operation = target, operation
        self.call(-1)

    def call(self, index: int) -> None:
        t = self.target
        if self.operation == "create":
            response = self.http.post(t.sessions_url, json={"state": {"turn": 0}})
        elif self.operation == "get_empty":
            response = self.http.get(t.session_url(t.empty_id))
        elif self.operation == "get_50":
            response = self.http.get(t.session_url(t.full_id))
        else:
            response = self.http.get(t.list_user_url)
        if response.status_code >= 300:
            raise RuntimeError(f"{t.name} {self.operation}: {response.status_code} {response.text[:300]}")
        if self.operation == "get_50":
            assert len(response.json()["events"]) == 50
        elif self.operation == "list_50":
            body = response.json()
            sessions = body.get("results", body.get("sessions")) if isinstance(body, dict) else body
            assert len(sessions) == 50, len(sessions)

    def close(self) -> None:
        self.http.close()


def cpu_seconds(pid: int) -> float:
    import psutil

    process = psutil.Process(pid)
    times = [process.cpu_times()] + [child.cpu_times() for child in process.children(recursive=True)]
    return sum(t.user + t.system for t in times)


def measure(target: Target, operation: str, clients: int, requests: int) -> tuple[float, float, float]:
    before = cpu_seconds(target.pid)
    load = run_load(lambda number, count: Caller(target, operation), clients, requests)
    cpu = cpu_seconds(target.pid) - before  # includes each client's one untimed call
    count = len(load.latencies)
    return count / load.seconds, statistics.median(load.latencies) * 1000, cpu * 1000 / (count + clients)


def start_adk(server_url: str) -> tuple[subprocess.Popen, str, Path]:
    agents = Path(tempfile.mkdtemp(prefix="bench_adk_agents_"))
    (agents / APP).mkdir()
    (agents / APP / "__init__.py").write_text("from . import agent\n")
    (agents / APP / "agent.py").write_text(AGENT)
    port = free_port()
    log = agents / "server.log"
    command = [
        str(Path(sys.executable).parent / "adk"),
        "api_server",
        "--host",
        "127.0.0.1",
        "--port",
        str(port),
        "--session_service_uri",
        asyncpg_url(server_url, ADK_DB),
        "--no-reload",
        "--log_level",
        "warning",
        str(agents),
    ]
    with log.open("wb") as out:
        process = subprocess.Popen(command, stdout=out, stderr=subprocess.STDOUT, cwd=agents)
    import httpx

    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise RuntimeError(f"adk api_server exited:\n{log.read_text()[-3000:]}")
        try:
            httpx.get(f"http://127.0.0.1:{port}/list-apps", timeout=2.0)
            return process, f"http://127.0.0.1:{port}", agents
        except httpx.TransportError:
            time.sleep(0.2)
    process.kill()
    raise RuntimeError(f"adk api_server did not answer:\n{log.read_text()[-3000:]}")


def fill_adk(server_url: str, target: Target) -> None:
    """ADK's side: an empty session, one with 50 events, a user with 50 sessions (through its own service)."""
    from google.adk.sessions import DatabaseSessionService

    async def fill() -> None:
        service = DatabaseSessionService(asyncpg_url(server_url, ADK_DB))
        empty = await service.create_session(app_name=APP, user_id=USER, state={"turn": 0})
        full = await service.create_session(app_name=APP, user_id=USER, state={"turn": 0})
        for turn in range(50):
            await service.append_event(full, text_event(f"turn {turn}", {"turn": turn}))
        for _ in range(50):
            await service.create_session(app_name=APP, user_id="lister", state={"topic": "bench"})
        target.empty_id, target.full_id = empty.id, full.id
        await service.close()

    asyncio.run(fill())


def fill_ours(target: Target) -> None:
    from sessions_app import adk, services

    def create(user: str) -> str:
        session_id = os.urandom(8).hex()
        services.do_create_session(
            app_name=APP, user_id=user, session_id=session_id, delta=adk.split_delta({"turn": 0}), now=time.time()
        )
        return session_id

    target.empty_id, target.full_id = create(USER), create(USER)
    version = 1
    for turn in range(50):
        version = services.do_append_event(
            app_name=APP,
            user_id=USER,
            session_id=target.full_id,
            expected_version=version,
            event=adk.to_new_event(text_event(f"turn {turn}", {"turn": turn})),
        )
    for _ in range(50):
        create("lister")


def compare(database_url: str, server_url: str, redis_url: str, rounds: int, concurrency: int, requests: int) -> None:
    """Both servers on the same calls, ``rounds`` times interleaved, then the table (Django set up on ``database_url``,
    an empty scratch database: it is migrated here)."""
    from django.core.management import call_command

    from cognizes.access.services import do_create_api_key

    call_command("migrate", verbosity=0)
    key = do_create_api_key(name="bench", app_name=APP)[1]
    recreate_databases(server_url, [ADK_DB])
    ours_server = start_server(database_url, redis_url, conn_max_age=0, pool_size=20, workers=1)
    adk_process, adk_base, _agents = start_adk(server_url)
    try:
        ours = Target(
            OURS,
            ours_server.process.pid,
            ours_server.base_url,
            {"Authorization": f"Bearer {key}"},
            f"/api/v1/apps/{APP}/users/{USER}/sessions/",
            list_user_url=f"/api/v1/apps/{APP}/users/lister/sessions/",
        )
        theirs = Target(
            ADK,
            adk_process.pid,
            adk_base,
            {},
            f"/apps/{APP}/users/{USER}/sessions",
            list_user_url=f"/apps/{APP}/users/lister/sessions",
        )
        fill_ours(ours)
        fill_adk(server_url, theirs)
        for target in (ours, theirs):  # untimed: imports, connections, plans
            for operation in OPERATIONS:
                run_load(lambda n, c, target=target, operation=operation: Caller(target, operation), 2, 10)
        results = Results()
        client_counts = sorted({1, concurrency})
        for round_no in range(rounds):
            for case_no, (operation, clients) in enumerate((o, c) for o in OPERATIONS for c in client_counts):
                order = (ours, theirs) if (round_no + case_no) % 2 == 0 else (theirs, ours)
                for target in order:
                    results.add((operation, target.name, clients), measure(target, operation, clients, requests))
            print(f"  round {round_no + 1} done (Cognizes vs adk api_server)", flush=True)
        report(results, client_counts, rounds)
    finally:
        stop_server(ours_server)
        adk_process.terminate()
        adk_process.wait(30)
        recreate_databases(server_url, [ADK_DB], create=False)


def report(results: Results, client_counts: list[int], rounds: int) -> None:
    print(f"\nCognizes vs adk api_server, one web process each, same PostgreSQL; medians over {rounds} rounds.")
    print("ratio = our req/s over ADK's; cpu/req = the server process's CPU ms per request.\n")
    header = (
        f"{'operation':<11}{'clients':>7}{'ours req/s':>12}{'ADK req/s':>11}{'ratio':>8}  {'target':<7}"
        f"{'ours p50':>9}{'ADK p50':>9}{'ours cpu/req':>13}{'ADK cpu/req':>12}"
    )
    print(header)
    print("-" * len(header))
    for operation in OPERATIONS:
        for clients in client_counts:
            ours = [results.median((operation, OURS, clients), i) for i in range(3)]
            theirs = [results.median((operation, ADK, clients), i) for i in range(3)]
            ratio = ours[0] / theirs[0]
            verdict = ("PASS" if ratio >= TARGET else "MISS") if clients == client_counts[-1] else ""
            print(
                f"{operation:<11}{clients:>7}{ours[0]:>12.1f}{theirs[0]:>11.1f}{ratio:>7.2f}x  {verdict:<7}"
                f"{ours[1]:>9.2f}{theirs[1]:>9.2f}{ours[2]:>13.2f}{theirs[2]:>12.2f}"
            )
    if len(client_counts) > 1:

        def growth(operation: str, target: str) -> float:
            return results.median((operation, target, client_counts[-1]), 2) / results.median((operation, target, 1), 2)

        flat = ", ".join(
            f"{operation} {growth(operation, OURS):.2f}x (ADK {growth(operation, ADK):.2f}x)"
            for operation in OPERATIONS
        )
        print(f"\nCPU per request with {client_counts[-1]} clients over 1 client (flat = 1.00x): {flat}")
