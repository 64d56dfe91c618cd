"""Benchmark: ``cognizes.adk.PostgresSessionService`` against ADK's ``DatabaseSessionService``.

Both services run on the same PostgreSQL server, in one process and one event
loop, each on its own scratch database (``cognizes_bench`` for ours, migrated by
Django; ``cognizes_bench_adk`` for ADK's, whose tables it creates itself under the
same names as ours). Both databases are dropped at the end.

Scenarios (the same calls on both services):

* ``append_500``       500 sequential ``append_event`` calls on one session (appends/s);
* ``get_1000_all``     ``get_session`` of a 1,000-event session, all events (ms/call);
* ``get_1000_last20``  the same with ``num_recent_events=20`` (ms/call);
* ``concurrent_16``    16 sessions of one user appending at once, every event writing
                       its own ``user:`` key (appends/s, then lost ``user:`` keys);
* ``list_200``         ``list_sessions`` of a user with 200 sessions (ms/call);
* ``get_150_all``      ``get_session`` of a 150-event session, all events (ms/call), also
                       against the raw floor: the same two queries sent with psycopg on one
                       connection of its own, prepared as ours are, on the event loop, and the
                       same ADK ``Session`` built from the rows (``Event.model_validate_json``) —
                       what any service on this schema must do; ours must reach 0.9 of it in
                       every round. Ours and the floor take turns call by call (who goes first
                       rotating), so a neighbour's burst of CPU or disk lands on both rather
                       than on whichever batch it happened to meet. A second floor, taking the
                       same turns, builds the events as ours does (``sessions_app.stored_events``,
                       the same objects in half the time): ours against it is what the service
                       itself adds (a database thread, Django's cursor, its checks);
* ``concurrency_ratio`` ours only: the ``concurrent_16`` appends done one after another
                       vs at once; above 1 means concurrent agents in one process do
                       not queue behind each other.

Rounds are interleaved: each round runs every scenario on both services, and the
service that goes first alternates between rounds. Drift during the run (the
server's caches warming, autovacuum, a noisy neighbour, CPU frequency) then hits
both services alike instead of whichever happened to run last, and the median
over rounds drops the odd outlier. Events are built before the clock starts, so
the timings are the services' own work (serialising, SQL, round trips,
building ADK objects).

For a fair concurrency comparison ADK's SQLAlchemy pool gets as many connections
as our database threads (``COGNIZES_DB_THREADS``), with no overflow; everything
else is ADK's default (e.g. ``pool_pre_ping``).

Before each round both databases are ANALYZEd, as autovacuum does on a database
in use: tables filled seconds ago have no statistics yet, and the planner then
sorts all of a session's events to return its last 20 (``--no-analyze`` times
that). Garbage is collected before each timed batch and not during it, as
``timeit`` does; latency calls are timed after one untimed call.

    .venv/bin/python bench/sessions.py [--rounds N] [--quick] [--no-analyze]
"""

from __future__ import annotations

import argparse
import asyncio
import os
import statistics
import sys
import time
import uuid
from collections import Counter
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import unquote, urlsplit

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench.scratch import close_django_connections, recreate_databases, with_database
from bench.timing import no_gc

os.environ["DJANGO_SETTINGS_MODULE"] = "cognizes.settings"

from cognizes.infra import local

BENCH_DB = "cognizes_bench"
ADK_DB = "cognizes_bench_adk"
APP = "bench_app"
OURS = "ours"
ADK = "ADK"

# ---------------------------------------------------------------------------
# Sizes and scenarios
# ---------------------------------------------------------------------------


@dataclass(frozen=True)
class Sizes:
    appends: int = 500
    get_events: int = 1000
    recent: int = 20
    writers: int = 16
    writer_events: int = 25
    list_sessions: int = 200
    floor_events: int = 150
    calls: int = 10
    """Timed calls per round for the latency scenarios (their median is the round's value)."""

    @classmethod
    def quick(cls) -> Sizes:
        return cls(appends=50, get_events=100, writers=16, writer_events=5, list_sessions=20, floor_events=150, calls=3)


@dataclass(frozen=True)
class Scenario:
    name: str
    unit: str
    higher_is_better: bool
    target: float | None
    """Minimum ours-vs-ADK ratio (">1 is better" orientation), or None for no target."""


def scenarios(sizes: Sizes) -> list[Scenario]:
    return [
        Scenario(f"append_{sizes.appends}", "appends/s", True, 4.0),
        Scenario(f"get_{sizes.get_events}_all", "ms/call", False, 2.0),
        Scenario(f"get_{sizes.get_events}_last{sizes.recent}", "ms/call", False, 2.0),
        Scenario(f"concurrent_{sizes.writers}", "appends/s", True, 4.0),
        Scenario(f"list_{sizes.list_sessions}", "ms/call", False, None),
        Scenario(f"get_{sizes.floor_events}_all", "ms/call", False, 2.0),
    ]


FLOOR_TARGET = 0.9
"""Ours against the raw floor (floor ms / ours ms) on get_150_all, in every round."""


# ---------------------------------------------------------------------------
# Databases
# ---------------------------------------------------------------------------


def analyze_databases(server_url: str, names: list[str]) -> None:
    """Refresh the planner's statistics, as autovacuum does on a database in steady use."""
    import psycopg

    for name in names:
        with psycopg.connect(with_database(server_url, name), autocommit=True) as conn:
            conn.execute("ANALYZE")


def asyncpg_url(server_url: str, name: str) -> str:
    """SQLAlchemy ``postgresql+asyncpg`` URL for database ``name`` (unix sockets as ``?host=``)."""
    from sqlalchemy.engine import URL

    parts = urlsplit(server_url)
    host_port = parts.netloc.rpartition("@")[2]
    host = unquote(host_port.rpartition(":")[0] if parts.port is not None else host_port) or None
    port, query = parts.port, {}
    if host and host.startswith("/"):  # a unix socket directory
        host, port, query = None, None, {"host": host, "port": str(parts.port or 5432)}
    url = URL.create(
        "postgresql+asyncpg",
        username=unquote(parts.username) if parts.username else None,
        password=unquote(parts.password) if parts.password else None,
        host=host,
        port=port,
        database=name,
        query=query,
    )
    return url.render_as_string(hide_password=False)


# ---------------------------------------------------------------------------
# Events and timing helpers
# ---------------------------------------------------------------------------


def text_event(text: str, state_delta: dict[str, Any]) -> Any:
    """A model reply as an agent would append it: text content plus a small state delta."""
    from google.adk.events.event import Event
    from google.adk.events.event_actions import EventActions
    from google.genai import types

    return Event(
        author="bench_agent",
        invocation_id=f"e-{uuid.uuid4()}",
        content=types.Content(role="model", parts=[types.Part(text=text)]),
        actions=EventActions(state_delta=state_delta),
    )


REPLY = (
    "Sure, here is a short summary of what we discussed so far, followed by the next "
    "steps I suggest. Let me know if any of it needs more detail."
)


def turn_events(count: int) -> list[Any]:
    return [text_event(f"{REPLY} (turn {i})", {"turn": i}) for i in range(count)]


def writer_events(task: int, count: int) -> list[Any]:
    """Events of one concurrent writer: each sets its own ``user:`` key and a session key."""
    return [text_event(f"{REPLY} (writer {task}, turn {i})", {f"user:w{task}_{i}": i, "turn": i}) for i in range(count)]


async def timed(work: Callable[[], Awaitable[Any]]) -> tuple[float, Any]:
    """Seconds ``work()`` took, and its result."""
    start = time.perf_counter()
    result = await work()
    return time.perf_counter() - start, result


async def median_call_ms(call: Callable[[], Awaitable[Any]], calls: int) -> float:
    """Median of ``calls`` timed calls, after one untimed call (wakes thread and connection)."""
    with no_gc():
        await call()
        durations = [(await timed(call))[0] * 1000 for _ in range(calls)]
    return statistics.median(durations)


def fresh_id(prefix: str) -> str:
    return f"{prefix}-{uuid.uuid4().hex[:12]}"


# ---------------------------------------------------------------------------
# Scenarios
# ---------------------------------------------------------------------------


@dataclass
class Fixtures:
    """Data prepared once per service, outside timing."""

    get_user: str
    get_session_id: str
    list_user: str
    floor_session_id: str = ""


@dataclass
class Writes:
    """Outcome of a batch of concurrent writers."""

    seconds: float
    appends: int
    errors: Counter[str] = field(default_factory=Counter)
    lost: int = 0


async def prepare(service: Any, sizes: Sizes) -> Fixtures:
    fixtures = Fixtures(get_user=fresh_id("get"), get_session_id="", list_user=fresh_id("list"))
    session = await service.create_session(app_name=APP, user_id=fixtures.get_user, state={"turn": 0})
    fixtures.get_session_id = session.id
    for event in turn_events(sizes.get_events):
        await service.append_event(session, event)
    for _ in range(sizes.list_sessions):
        await service.create_session(app_name=APP, user_id=fixtures.list_user, state={"topic": "bench"})
    floor = await service.create_session(app_name=APP, user_id=fixtures.get_user, state={"turn": 0})
    fixtures.floor_session_id = floor.id
    for event in turn_events(sizes.floor_events):
        await service.append_event(floor, event)
    return fixtures


async def append_sequential(service: Any, sizes: Sizes) -> float:
    """Appends/s of one session written turn after turn."""
    session = await service.create_session(app_name=APP, user_id=fresh_id("seq"), state={"turn": 0})
    events = turn_events(sizes.appends)

    async def work() -> None:
        for event in events:
            await service.append_event(session, event)

    with no_gc():
        seconds, _ = await timed(work)
    return sizes.appends / seconds


async def get_session_ms(
    service: Any, fixtures: Fixtures, sizes: Sizes, recent: int | None, *, floor: bool = False
) -> float:
    from google.adk.sessions.base_session_service import GetSessionConfig

    config = GetSessionConfig(num_recent_events=recent) if recent is not None else None
    expected = sizes.floor_events if floor else (recent if recent is not None else sizes.get_events)
    session_id = fixtures.floor_session_id if floor else fixtures.get_session_id

    async def call() -> None:
        session = await service.get_session(
            app_name=APP, user_id=fixtures.get_user, session_id=session_id, config=config
        )
        assert session is not None and len(session.events) == expected, "wrong number of events"

    return await median_call_ms(call, sizes.calls)


class RawFloor:
    """``get_session`` as the least any service on this schema does: psycopg, two queries, ADK objects.

    Its events are built by ``build_events`` (stored texts to ADK events): by default ADK's own
    ``Event.model_validate_json`` each.
    """

    def __init__(self, database_url: str, build_events: Callable[[list[str]], list[Any]] | None = None) -> None:
        import psycopg

        # Its statements prepared (prepare=True below), as ours are (cognizes.infra.postgres.prepared_cursor).
        self.conn = psycopg.connect(database_url, autocommit=True)
        self.build_events = build_events

    async def get_session(self, *, app_name: str, user_id: str, session_id: str, config: Any = None) -> Any:
        from google.adk.events.event import Event
        from google.adk.sessions.session import Session

        row = self.conn.execute(
            "SELECT s.id, s.state, s.last_update_time, COALESCE(a.state, '{}'), COALESCE(u.state, '{}') "
            "FROM sessions s LEFT JOIN app_states a ON a.app_name = s.app_name "
            "LEFT JOIN user_states u ON u.app_name = s.app_name AND u.user_id = s.user_id "
            "WHERE s.app_name = %s AND s.user_id = %s AND s.session_id = %s",
            [app_name, user_id, session_id],
            prepare=True,
        ).fetchone()
        pk, state, last_update_time, app_state, user_state = row
        data = self.conn.execute(
            "SELECT data::text FROM events WHERE session_id = %s ORDER BY version", [pk], prepare=True
        ).fetchall()
        merged = {
            **state,
            **{f"app:{k}": v for k, v in app_state.items()},
            **{f"user:{k}": v for k, v in user_state.items()},
        }
        texts = [text for (text,) in data]
        events = self.build_events(texts) if self.build_events else [Event.model_validate_json(t) for t in texts]
        return Session(
            id=session_id,
            app_name=app_name,
            user_id=user_id,
            state=merged,
            events=events,
            last_update_time=last_update_time,
        )

    def close(self) -> None:
        self.conn.close()


async def floors_and_ours_ms(
    floor: RawFloor, fast_floor: RawFloor, service: Any, fixtures: Fixtures, sizes: Sizes
) -> dict[str, float]:
    """Median ms of the two floors' and our get_150_all, timed in turns, who goes first rotating."""
    from functools import partial

    async def call(target: Any) -> None:
        session = await target.get_session(
            app_name=APP, user_id=fixtures.get_user, session_id=fixtures.floor_session_id
        )
        assert session is not None and len(session.events) == sizes.floor_events, "wrong number of events"

    targets = [("floor", floor), ("fast_floor", fast_floor), ("ours", service)]
    times: dict[str, list[float]] = {name: [] for name, _ in targets}
    with no_gc():
        for _, target in targets:
            await call(target)
        for i in range(3 * sizes.calls):  # the round's verdict is on these turns alone: 3x the usual calls
            for name, target in targets[i % 3 :] + targets[: i % 3]:
                times[name].append((await timed(partial(call, target)))[0] * 1000)
    return {name: statistics.median(values) for name, values in times.items()}


async def list_sessions_ms(service: Any, fixtures: Fixtures, sizes: Sizes) -> float:
    async def call() -> None:
        response = await service.list_sessions(app_name=APP, user_id=fixtures.list_user)
        assert len(response.sessions) == sizes.list_sessions, "wrong number of sessions"

    return await median_call_ms(call, sizes.calls)


async def run_writer(service: Any, session: Any, events: list[Any], errors: Counter[str]) -> None:
    """Append ``events`` in order; on an error count it, reload the session and go on."""
    for event in events:
        try:
            await service.append_event(session, event)
        except Exception as error:
            errors[type(error).__name__] += 1
            reloaded = await service.get_session(
                app_name=session.app_name, user_id=session.user_id, session_id=session.id
            )
            if reloaded is not None:
                session = reloaded


async def concurrent_writes(service: Any, sizes: Sizes, *, concurrent: bool = True) -> Writes:
    """``writers`` sessions of one fresh user, each appending ``writer_events`` events.

    All at once (one asyncio task per session) or one writer after another.
    Afterwards every ``user:`` key must be in the user state; missing ones are lost.
    """
    user_id = fresh_id("conc" if concurrent else "serial")
    sessions = [
        await service.create_session(app_name=APP, user_id=user_id, state={"turn": 0}) for _ in range(sizes.writers)
    ]
    batches = [writer_events(task, sizes.writer_events) for task in range(sizes.writers)]
    errors: Counter[str] = Counter()

    async def work() -> None:
        if concurrent:
            await asyncio.gather(
                *(run_writer(service, s, batch, errors) for s, batch in zip(sessions, batches, strict=True))
            )
        else:
            for s, batch in zip(sessions, batches, strict=True):
                await run_writer(service, s, batch, errors)

    with no_gc():
        seconds, _ = await timed(work)
    user_state = await service.get_user_state(app_name=APP, user_id=user_id)
    expected = {f"w{task}_{i}" for task in range(sizes.writers) for i in range(sizes.writer_events)}
    appends = sizes.writers * sizes.writer_events
    return Writes(seconds=seconds, appends=appends, errors=errors, lost=len(expected - set(user_state)))


async def warm_up(service: Any, fixtures: Fixtures, sizes: Sizes) -> None:
    """Open every connection (our thread pool, ADK's SQLAlchemy pool) before timing."""
    await service.get_session(app_name=APP, user_id=fixtures.get_user, session_id=fixtures.get_session_id)
    await service.list_sessions(app_name=APP, user_id=fixtures.list_user)
    await concurrent_writes(service, Sizes(writers=sizes.writers, writer_events=2))


# ---------------------------------------------------------------------------
# Rounds
# ---------------------------------------------------------------------------


@dataclass
class Results:
    values: dict[str, dict[str, list[float]]] = field(default_factory=dict)
    lost: Counter[str] = field(default_factory=Counter)
    errors: dict[str, Counter[str]] = field(default_factory=lambda: {OURS: Counter(), ADK: Counter()})
    serial_seconds: list[float] = field(default_factory=list)
    concurrent_seconds: list[float] = field(default_factory=list)
    floor: list[float] = field(default_factory=list)
    """The raw floor's get_150_all ms, one per round."""
    floor_ratios: list[float] = field(default_factory=list)
    """floor ms / ours ms on get_150_all, one per round (measured in turns, call by call)."""
    fast_floor: list[float] = field(default_factory=list)
    """The floor building events as ours does (sessions_app.stored_events), ms, one per round."""
    fast_floor_ratios: list[float] = field(default_factory=list)
    """fast floor ms / ours ms, one per round (the same turns)."""

    def add(self, scenario: str, service: str, value: float) -> None:
        self.values.setdefault(scenario, {}).setdefault(service, []).append(value)

    def median(self, scenario: str, service: str) -> float:
        return statistics.median(self.values[scenario][service])


async def run_round(
    round_no: int,
    services: dict[str, Any],
    fixtures: dict[str, Fixtures],
    sizes: Sizes,
    results: Results,
    floor: RawFloor,
    fast_floor: RawFloor,
) -> None:
    order = [OURS, ADK] if round_no % 2 == 0 else [ADK, OURS]
    names = [s.name for s in scenarios(sizes)]
    steps: list[tuple[str, Callable[[str], Awaitable[float]]]] = [
        (names[0], lambda n: append_sequential(services[n], sizes)),
        (names[1], lambda n: get_session_ms(services[n], fixtures[n], sizes, None)),
        (names[2], lambda n: get_session_ms(services[n], fixtures[n], sizes, sizes.recent)),
        (names[3], lambda n: concurrent_appends_per_second(n, services[n], sizes, results)),
        (names[4], lambda n: list_sessions_ms(services[n], fixtures[n], sizes)),
        (names[5], lambda n: get_session_ms(services[n], fixtures[n], sizes, None, floor=True)),
    ]
    for scenario, measure in steps:
        for name in order:
            results.add(scenario, name, await measure(name))
        if scenario == names[5]:
            ms = await floors_and_ours_ms(floor, fast_floor, services[OURS], fixtures[OURS], sizes)
            results.floor.append(ms["floor"])
            results.floor_ratios.append(ms["floor"] / ms["ours"])
            results.fast_floor.append(ms["fast_floor"])
            results.fast_floor_ratios.append(ms["fast_floor"] / ms["ours"])
    await concurrency_ratio(round_no, services[OURS], sizes, results)
    print(f"  round {round_no + 1} done ({' first, '.join(order)} second)", flush=True)


async def concurrent_appends_per_second(name: str, service: Any, sizes: Sizes, results: Results) -> float:
    writes = await concurrent_writes(service, sizes)
    results.lost[name] += writes.lost
    results.errors[name].update(writes.errors)
    return writes.appends / writes.seconds


async def concurrency_ratio(round_no: int, service: Any, sizes: Sizes, results: Results) -> None:
    """Ours only: the same writers one after another, and at once (order alternating)."""
    for concurrent in (False, True) if round_no % 2 == 0 else (True, False):
        writes = await concurrent_writes(service, sizes, concurrent=concurrent)
        results.errors[OURS].update(writes.errors)
        results.lost[OURS] += writes.lost
        (results.concurrent_seconds if concurrent else results.serial_seconds).append(writes.seconds)


# ---------------------------------------------------------------------------
# Report
# ---------------------------------------------------------------------------


def verdict(ratio: float, target: float | None) -> tuple[str, str]:
    if target is None:
        return "—", ""
    return f"≥{target:g}x", "PASS" if ratio >= target else "MISS"


def report(results: Results, sizes: Sizes, rounds: int) -> None:
    header = f"{'scenario':<22}{'unit':<11}{'ours':>11}{'ADK':>11}{'ratio':>9}  {'target':<10}{'result'}"
    print(f"\nMedians over {rounds} round(s); ratio > 1 means ours is better.\n")
    print(header)
    print("-" * len(header))
    for scenario in scenarios(sizes):
        ours, adk = results.median(scenario.name, OURS), results.median(scenario.name, ADK)
        ratio = ours / adk if scenario.higher_is_better else adk / ours
        target, result = verdict(ratio, scenario.target)
        print(f"{scenario.name:<22}{scenario.unit:<11}{ours:>11.1f}{adk:>11.1f}{ratio:>8.2f}x  {target:<10}{result}")
    lost_result = "PASS" if results.lost[OURS] == 0 else "MISS"
    print(
        f"{'lost_user_keys':<22}{'keys':<11}{results.lost[OURS]:>11}{results.lost[ADK]:>11}"
        f"{'':>9}  {'ours = 0':<10}{lost_result}"
    )
    serial = statistics.median(results.serial_seconds)
    concurrent = statistics.median(results.concurrent_seconds)
    ratio = serial / concurrent
    print(
        f"{'concurrency_ratio':<22}{'seq/conc':<11}{ratio:>10.2f}x{'n/a':>11}{'':>9}  {'>1x':<10}"
        f"{'PASS' if ratio > 1 else 'MISS'}"
    )
    floor_name = f"{scenarios(sizes)[5].name} floor"
    worst = min(results.floor_ratios)
    print(
        f"{floor_name:<22}{'floor/ours':<11}{statistics.median(results.floor):>10.1f}*{'':>11}{worst:>8.2f}x  "
        f"{'≥' + format(FLOOR_TARGET, 'g') + 'x':<10}{'PASS' if worst >= FLOOR_TARGET else 'MISS'}"
    )
    print(
        f"  (* the raw floor's median ms; ratio: the worst round of floor ms / ours ms, "
        f"rounds: {', '.join(f'{r:.2f}' for r in results.floor_ratios)})"
    )
    print(
        f"{'  fast floor':<22}{'floor/ours':<11}{statistics.median(results.fast_floor):>10.1f}*{'':>11}"
        f"{min(results.fast_floor_ratios):>8.2f}x  {'—':<10}"
    )
    print(
        f"  (the floor building its events as ours does, sessions_app.stored_events: what the service adds; "
        f"rounds: {', '.join(f'{r:.2f}' for r in results.fast_floor_ratios)})"
    )
    appends = sizes.writers * sizes.writer_events
    print(
        f"\nconcurrency_ratio (ours): {appends} appends by {sizes.writers} writers take "
        f"{serial * 1000:.0f} ms one after another, {concurrent * 1000:.0f} ms at once."
    )
    per_round = appends * rounds
    for name in (OURS, ADK):
        errors = ", ".join(f"{kind} x{count}" for kind, count in results.errors[name].items()) or "none"
        print(
            f"{name}: lost user: keys: {results.lost[name]} "
            f"(of {per_round} in concurrent_{sizes.writers}"
            + (f" + {2 * per_round} in concurrency_ratio" if name == OURS else "")
            + f"); append errors: {errors}"
        )


# ---------------------------------------------------------------------------
# Main
# ---------------------------------------------------------------------------


async def benchmark(server_url: str, sizes: Sizes, rounds: int, *, analyze: bool) -> Results:
    from django.conf import settings
    from google.adk.sessions import DatabaseSessionService

    from cognizes.adk import PostgresSessionService

    adk = DatabaseSessionService(
        asyncpg_url(server_url, ADK_DB), pool_size=settings.COGNIZES_DB_THREADS, max_overflow=0
    )
    services: dict[str, Any] = {OURS: PostgresSessionService(), ADK: adk}
    results = Results()
    from sessions_app.stored_events import events_from_json

    floor = RawFloor(with_database(server_url, BENCH_DB))
    fast_floor = RawFloor(with_database(server_url, BENCH_DB), build_events=events_from_json)
    try:
        fixtures: dict[str, Fixtures] = {}
        for name, service in services.items():
            print(f"preparing {name}: a {sizes.get_events}-event session, {sizes.list_sessions} sessions", flush=True)
            fixtures[name] = await prepare(service, sizes)
            await warm_up(service, fixtures[name], sizes)
        for round_no in range(rounds):
            if analyze:
                analyze_databases(server_url, [BENCH_DB, ADK_DB])
            await run_round(round_no, services, fixtures, sizes, results, floor, fast_floor)
    finally:
        floor.close()
        fast_floor.close()
        await adk.close()
    return results


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=None, help="interleaved rounds (default 5; 1 with --quick)")
    parser.add_argument("--quick", action="store_true", help="one round with small sizes: a smoke check")
    parser.add_argument(
        "--no-analyze",
        dest="analyze",
        action="store_false",
        help="skip ANALYZE before each round: time queries planned without statistics (a fresh database)",
    )
    args = parser.parse_args()
    sizes = Sizes.quick() if args.quick else Sizes()
    rounds = args.rounds or (1 if args.quick else 5)

    server_url = local.database_url()
    recreate_databases(server_url, [BENCH_DB, ADK_DB])
    # Before Django is set up, so its one connection setting names the scratch database.
    os.environ["DATABASE_URL"] = with_database(server_url, BENCH_DB)
    try:
        from django.core.management import call_command
        from django.db import connections

        import cognizes.adk  # noqa: F401  (sets Django up)

        call_command("migrate", verbosity=0)
        connections.close_all()
        results = asyncio.run(benchmark(server_url, sizes, rounds, analyze=args.analyze))
        report(results, sizes, rounds)
    finally:
        close_django_connections()
        recreate_databases(server_url, [BENCH_DB, ADK_DB], create=False)


if __name__ == "__main__":
    main()
