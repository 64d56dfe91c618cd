"""Benchmark: what live events cost writers, and how fast a follower hears of an event.

* ``append_cost``   16 writers appending at once (one user, every event writing a
                    ``user:`` key), with the NOTIFY trigger on vs off (the named
                    baseline), interleaved rounds; target: ≤ 10 % slower with it.
* ``latency``       from ``append_event`` returning to a ``sessions_app.live.follow``
                    follower (another event loop, its own LISTEN connection) yielding
                    the event: median and p95.

    .venv/bin/python bench/live.py [--rounds 3] [--quick]
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import sys
import threading
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench.scratch import migrated_database

BENCH_DB = "cognizes_bench_live"


def text_event(text: str, **state):
    from google.adk.events.event import Event
    from google.adk.events.event_actions import EventActions
    from google.genai import types

    return Event(
        author="user",
        invocation_id="bench",
        content=types.Content(role="user", parts=[types.Part(text=text)]),
        actions=EventActions(state_delta=state),
    )


async def concurrent_appends(service, writers: int, per_writer: int) -> float:
    """Appends per second of ``writers`` sessions of one user appending at once."""
    sessions = [await service.create_session(app_name="bench", user_id="u") for _ in range(writers)]

    async def write(index: int) -> None:
        for n in range(per_writer):
            await service.append_event(sessions[index], text_event(f"w{index} e{n}", **{f"user:w{index}": n}))

    start = time.perf_counter()
    await asyncio.gather(*(write(i) for i in range(writers)))
    return writers * per_writer / (time.perf_counter() - start)


def set_trigger(enabled: bool) -> None:
    from django.db import connection

    with connection.cursor() as cursor:
        cursor.execute(f"ALTER TABLE events {'ENABLE' if enabled else 'DISABLE'} TRIGGER events_notify")


async def latency_ms(service, events: int) -> list[float]:
    """Delay from each append returning to a follower in another thread's loop receiving it."""
    from cognizes.infra.db_threads import run_in_db_thread
    from sessions_app import live, services

    session = await service.create_session(app_name="bench", user_id="u")
    pk = await run_in_db_thread(services.get_session_pk, app_name="bench", user_id="u", session_id=session.id)
    received: dict[int, float] = {}
    ready = threading.Event()

    def follower() -> None:
        async def run() -> None:
            stream = live.follow(pk, after_version=1, heartbeat_seconds=0.5)
            ready.set()
            async for item in stream:
                if item is not None:
                    received[item[0]] = time.perf_counter()
                    if len(received) == events:
                        return

        asyncio.run(run())

    thread = threading.Thread(target=follower)
    thread.start()
    ready.wait()
    await asyncio.sleep(0.5)  # LISTEN is on
    sent: dict[int, float] = {}
    for n in range(events):
        await service.append_event(session, text_event(f"e{n}"))
        sent[n + 2] = time.perf_counter()
        await asyncio.sleep(0.005)
    await asyncio.to_thread(thread.join, 60)
    return [(received[v] - sent[v]) * 1000 for v in sent if v in received]


async def benchmark(rounds: int, writers: int, per_writer: int, latency_events: int) -> None:
    from cognizes.adk import PostgresSessionService
    from cognizes.infra.db_threads import run_in_db_thread

    service = PostgresSessionService()
    await concurrent_appends(service, writers, 5)  # warm up
    on, off = [], []
    for round_no in range(rounds):
        order = (True, False) if round_no % 2 == 0 else (False, True)
        for enabled in order:
            await run_in_db_thread(set_trigger, enabled)
            (on if enabled else off).append(await concurrent_appends(service, writers, per_writer))
        print(f"  round {round_no + 1} done", flush=True)
    await run_in_db_thread(set_trigger, True)
    delays = sorted(await latency_ms(service, latency_events))

    with_trigger, without = statistics.median(on), statistics.median(off)
    cost = 1 - with_trigger / without
    print(f"\nMedians over {rounds} interleaved round(s), {writers} writers x {per_writer} appends.\n")
    print(f"{'scenario':<14}{'with NOTIFY':>14}{'without':>12}{'ratio':>9}  target     result")
    print(
        f"{'append_cost':<14}{with_trigger:>10.0f} a/s{without:>8.0f} a/s{with_trigger / without:>8.2f}x"
        f"  ≤10% cost  {'PASS' if cost <= 0.10 else 'MISS'} ({cost:+.1%})"
    )
    p95 = delays[max(0, int(len(delays) * 0.95) - 1)]
    print(
        f"{'latency':<14}median {statistics.median(delays):.1f} ms, p95 {p95:.1f} ms "
        f"({len(delays)} of {latency_events} events heard)"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--quick", action="store_true", help="one small round: a smoke check")
    args = parser.parse_args()
    rounds, per_writer, latency_events = (1, 10, 20) if args.quick else (args.rounds, 50, 200)

    with migrated_database(BENCH_DB):
        asyncio.run(benchmark(rounds, 16, per_writer, latency_events))


if __name__ == "__main__":
    main()
