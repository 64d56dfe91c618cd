"""Benchmark: the session service on big tables against the same operations on small ones.

A session service is judged when its tables are big. Two scratch databases of
the same PostgreSQL are loaded with COPY: a big one (``--events``, default
10,000,000 events over 100,000 sessions of 10,000 users) and a small one with
10,000 events. Both hold the same "probe" sessions — a heavy user with
``--heavy-sessions`` sessions of ``events / sessions`` events each — so every
operation reads and writes the same amount in both; only the tables around
them differ. Through ``PostgresSessionService`` (what agents call):

* ``append``            an event appended to a probe session;
* ``get last 20``       ``get_session`` with the last 20 events;
* ``get whole``         ``get_session`` with every event of the session;
* ``list heavy user``   ``list_sessions`` of the heavy user;
* ``user-state merge``  an event whose ``user:`` delta is merged into the user's state;
* ``admin overview``    what the admin's first page reads (``cognizes.overview``: per app sessions,
  today's events, memories; jobs by state; failures; failing runs): counts stop at 10,000 rows.

Each is timed ``--samples`` times per round on each database, rounds alternating
which database goes first; the table shows p50/p95 (medians over rounds) and the
big/small ratio, which should stay at most 1.5x: indexes, not scans. Then the
load time, table and index sizes, and the plans of the statements behind the
reads on the big database.

    .venv/bin/python bench/sessions_scale.py                    # the full 10,000,000 (long; ~10 GB)
    .venv/bin/python bench/sessions_scale.py --events 1000000   # a smaller try
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import random
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench.scratch import close_django_connections, recreate_databases, with_database
from cognizes.infra import local

APP = "scale"
HEAVY = "heavy_user"
SMALL_EVENTS = 10_000
DATABASES = {"small": "cognizes_bench_scale_small", "big": "cognizes_bench_scale_big"}
OPERATIONS = ["append", "get last 20", "get whole", "list heavy user", "user-state merge", "admin overview"]


def event_json(event_id: str, author: str, text: str, timestamp: float, invocation: str) -> dict:
    """An ADK event as the service stores it (a user message or an agent's answer)."""
    return {
        "id": event_id,
        "author": author,
        "invocation_id": invocation,
        "timestamp": timestamp,
        "content": {"role": "user" if author == "user" else "model", "parts": [{"text": text}]},
        "actions": {
            "state_delta": {},
            "artifact_delta": {},
            "requested_auth_configs": {},
            "requested_tool_confirmations": {},
        },
    }


def load(url: str, events: int, sessions: int, users: int, heavy_sessions: int) -> float:
    """Fill a migrated scratch database with COPY; the seconds it took (indexes kept, as in production)."""
    import psycopg

    per_session = events // sessions
    started = time.perf_counter()
    base = time.time() - 86_400 * 30
    with psycopg.connect(url) as conn:
        with conn.cursor().copy(
            "COPY sessions (app_name, user_id, session_id, state, version, create_time, update_time,"
            " last_update_time, display_name, labels) FROM STDIN"
        ) as copy:
            for s in range(sessions):
                user = HEAVY if s < heavy_sessions else f"u{s % users}"
                last = base + s * 10 + per_session
                copy.write_row(
                    (APP, user, f"s{s}", "{}", per_session + 1, _ts(base + s * 10), _ts(last), last, "", "{}")
                )
        ids = dict(conn.execute("SELECT session_id, id FROM sessions").fetchall())
        with conn.cursor().copy(
            "COPY events (session_id, event_id, version, invocation_id, author, branch, timestamp, data, preview)"
            " FROM STDIN"
        ) as copy:
            for s in range(sessions):
                pk, start = ids[f"s{s}"], base + s * 10
                for n in range(per_session):
                    author = "user" if n % 2 == 0 else "assistant"
                    text = f"message {n} of session {s}: what is the weather in city {n % 97}?"
                    event_id, invocation, at = f"e{s}-{n}", f"i{s}-{n // 2}", start + n * 0.01
                    copy.write_row(
                        (
                            pk,
                            event_id,
                            n + 2,
                            invocation,
                            author,
                            None,
                            at,
                            json.dumps(event_json(event_id, author, text, at, invocation)),
                            text[:200],
                        )
                    )
        conn.execute(
            "INSERT INTO user_states (app_name, user_id, state, version, update_time) "
            "SELECT DISTINCT app_name, user_id, '{}'::jsonb, 0, now() FROM sessions ON CONFLICT DO NOTHING"
        )
        conn.commit()
        conn.autocommit = True
        conn.execute("VACUUM ANALYZE")
    return time.perf_counter() - started


def _ts(epoch: float) -> str:
    return time.strftime("%Y-%m-%d %H:%M:%S+00", time.gmtime(epoch))


async def measure(samples: int, heavy_sessions: int) -> dict[str, list[float]]:
    """Time each operation ``samples`` times on the probe sessions of the database Django points at."""
    from asgiref.sync import sync_to_async
    from google.adk.events import Event, EventActions
    from google.adk.sessions.base_session_service import GetSessionConfig
    from google.genai import types

    from cognizes.adk import PostgresSessionService

    service, rng = PostgresSessionService(), random.Random(7)
    times: dict[str, list[float]] = {name: [] for name in OPERATIONS}

    async def timed(name: str, call):
        started = time.perf_counter()
        result = await call
        times[name].append(time.perf_counter() - started)
        return result

    for n in range(samples):
        session_id = f"s{rng.randrange(heavy_sessions)}"
        await timed(
            "get last 20",
            service.get_session(
                app_name=APP, user_id=HEAVY, session_id=session_id, config=GetSessionConfig(num_recent_events=20)
            ),
        )
        session = await timed("get whole", service.get_session(app_name=APP, user_id=HEAVY, session_id=session_id))
        await timed("list heavy user", service.list_sessions(app_name=APP, user_id=HEAVY))
        text = types.Content(role="user", parts=[types.Part(text=f"sample {n}")])
        await timed("append", service.append_event(session, Event(author="user", invocation_id=f"b{n}", content=text)))
        delta = EventActions(state_delta={"user:last_sample": n})
        await timed(
            "user-state merge",
            service.append_event(session, Event(author="user", invocation_id=f"b{n}", content=text, actions=delta)),
        )
        await timed("admin overview", sync_to_async(_overview, thread_sensitive=False)())
    return times


def _overview() -> None:
    from django.db import connection

    from cognizes import overview

    overview.app_rows(), overview.job_counts(), overview.recent_failures(), overview.failing_traces()
    connection.close()


def plans() -> list[str]:
    """The plans (EXPLAIN ANALYZE) of the statements behind get_session (last 20) and list_sessions.

    The ADK service runs them on its database threads; the same service functions
    are called here on this thread so that their SQL can be captured.
    """
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    from sessions_app import services

    with CaptureQueriesContext(connection) as queries:
        services.get_session(app_name=APP, user_id=HEAVY, session_id="s1", num_recent_events=20)
        services.list_sessions(app_name=APP, user_id=HEAVY)
    out = []
    with connection.cursor() as cursor:
        for query in queries.captured_queries:
            cursor.execute("EXPLAIN (ANALYZE, BUFFERS, COSTS OFF, SUMMARY OFF) " + query["sql"])
            sql = " ".join(query["sql"].split())
            out.append(
                sql[:200]
                + ("…" if len(sql) > 200 else "")
                + "\n    "
                + "\n    ".join(row[0] for row in cursor.fetchall())
            )
    return out


def sizes(url: str) -> list[tuple[str, int, int]]:
    """(table, table bytes, index bytes) of the session tables."""
    import psycopg

    with psycopg.connect(url) as conn:
        return conn.execute(
            "SELECT relname, pg_table_size(oid), pg_indexes_size(oid) FROM pg_class "
            "WHERE relname IN ('sessions', 'events', 'user_states') ORDER BY relname"
        ).fetchall()


def child(kind: str, samples: int, heavy_sessions: int, explain: bool) -> None:
    """Runs in a process of its own, Django pointed at one scratch database: prints its timings as JSON."""
    os.environ.setdefault("COGNIZES_TRACING", "0")
    import cognizes.adk  # noqa: F401  (sets Django up)

    result = {"times": asyncio.run(measure(samples, heavy_sessions))}
    if explain:
        result["plans"] = plans()
    close_django_connections()
    print(json.dumps(result))


def run_child(url: str, kind: str, args: argparse.Namespace, explain: bool = False) -> dict:
    env = {**os.environ, "DATABASE_URL": url, "DJANGO_DEBUG": "false"}
    command = [
        sys.executable,
        __file__,
        "--child",
        kind,
        "--samples",
        str(args.samples),
        "--heavy-sessions",
        str(args.heavy_sessions),
    ] + (["--explain"] if explain else [])
    output = subprocess.run(command, env=env, cwd=ROOT, check=True, capture_output=True, text=True).stdout
    return json.loads(output.strip().splitlines()[-1])


def pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))] * 1000


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--events", type=int, default=10_000_000)
    parser.add_argument("--sessions", type=int, default=100_000)
    parser.add_argument("--users", type=int, default=10_000)
    parser.add_argument("--heavy-sessions", type=int, default=50, help="sessions of the heavy (probe) user")
    parser.add_argument("--samples", type=int, default=100, help="timings per operation, round and database")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--keep", action="store_true", help="keep the scratch databases (to run again with --reuse)")
    parser.add_argument("--reuse", action="store_true", help="measure on databases a --keep run left")
    parser.add_argument("--child", choices=list(DATABASES), help=argparse.SUPPRESS)
    parser.add_argument("--explain", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        return child(args.child, args.samples, args.heavy_sessions, args.explain)

    server = local.database_url()
    urls = {kind: with_database(server, name) for kind, name in DATABASES.items()}
    per_session = args.events // args.sessions
    shapes = {
        "small": (SMALL_EVENTS, SMALL_EVENTS // per_session, max(1, args.users // 1000)),
        "big": (args.events, args.sessions, args.users),
    }
    try:
        if not args.reuse:
            recreate_databases(server, list(DATABASES.values()))
            for kind, url in urls.items():
                subprocess.run(
                    [sys.executable, "manage.py", "migrate", "-v", "0"],
                    cwd=ROOT,
                    check=True,
                    env={**os.environ, "DATABASE_URL": url},
                )
                events, sessions, users = shapes[kind]
                seconds = load(url, events, sessions, users, args.heavy_sessions)
                print(
                    f"{kind}: {events:,} events, {sessions:,} sessions, {users:,} users loaded in {seconds:.1f} s",
                    flush=True,
                )
        rounds: dict[str, list[dict[str, list[float]]]] = {"small": [], "big": []}
        for r in range(args.rounds):
            for kind in ["small", "big"] if r % 2 == 0 else ["big", "small"]:
                rounds[kind].append(run_child(urls[kind], kind, args)["times"])
            print(f"  round {r + 1} done", flush=True)
        print(
            f"\np50/p95 ms, medians over {args.rounds} rounds of {args.samples}; "
            f"{per_session} events per session, {args.heavy_sessions} sessions of the heavy user"
        )
        print(
            f"{'operation':<18}{'small p50':>10}{'p95':>8}{'big p50':>10}{'p95':>8}{'p50 ratio':>11}{'p95 ratio':>11}"
        )
        for name in OPERATIONS:
            row = {
                kind: [statistics.median(pct(r[name], q) for r in rounds[kind]) for q in (0.5, 0.95)] for kind in rounds
            }
            print(
                f"{name:<18}{row['small'][0]:>10.2f}{row['small'][1]:>8.2f}{row['big'][0]:>10.2f}"
                f"{row['big'][1]:>8.2f}{row['big'][0] / row['small'][0]:>10.2f}x"
                f"{row['big'][1] / row['small'][1]:>10.2f}x"
            )
        for kind, url in urls.items():
            for table, table_bytes, index_bytes in sizes(url):
                print(
                    f"{kind:>5} {table:<12} table {table_bytes / 2**20:9.1f} MB  indexes {index_bytes / 2**20:9.1f} MB"
                )
        print("\nPlans on the big database:")
        for plan in run_child(
            urls["big"], "big", argparse.Namespace(samples=1, heavy_sessions=args.heavy_sessions), explain=True
        )["plans"]:
            print(plan)
    finally:
        if not args.keep:
            recreate_databases(server, list(DATABASES.values()), create=False)


if __name__ == "__main__":
    main()
