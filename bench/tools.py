"""Benchmark: what AuditPlugin costs an agent's tool call (the issue's "small bound").

An ADK Runner (offline scripted model, ``PostgresSessionService``, a
``DatabaseToolset`` offering one Python tool) runs ``--turns`` turns, each one
tool call, with and without ``AuditPlugin``, on a scratch database
(``cognizes_bench_tools``) of the same PostgreSQL. Rounds alternate which side
goes first; medians over rounds.

Two figures:

* ``on-path µs/call``: wall time spent inside the plugin's before/after
  callbacks, which the agent awaits — the added latency of a call. The row is
  written afterwards on a database thread, off the agent's path.
* ``ms/turn`` with and without the plugin: the whole turn (two model calls, one
  tool call, three event appends, the registry check), so the background write
  shows up here only as contention for the machine.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import statistics
import time

from bench.scratch import migrated_database

BENCH_DB = "cognizes_bench_tools"
APP = "bench_tools"


async def run_turns(turns: int, *, audit: bool) -> tuple[float, list[float]]:
    from google.adk.agents import LlmAgent
    from google.adk.apps import App
    from google.adk.runners import Runner
    from google.genai import types

    from cognizes.adk import AuditPlugin, DatabaseToolset, PostgresSessionService
    from tests.tools.fake_llm import ToolCallingLlm

    on_path: list[float] = []

    class TimedAudit(AuditPlugin):
        async def before_tool_callback(self, **kwargs):
            start = time.perf_counter()
            await super().before_tool_callback(**kwargs)
            on_path.append(time.perf_counter() - start)

        async def after_tool_callback(self, **kwargs):
            start = time.perf_counter()
            await super().after_tool_callback(**kwargs)
            on_path[-1] += time.perf_counter() - start

    plugins = [TimedAudit()] if audit else []
    agent = LlmAgent(name="bench_agent", model=ToolCallingLlm(), tools=[DatabaseToolset()])
    sessions = PostgresSessionService()
    runner = Runner(app=App(name=APP, root_agent=agent, plugins=plugins), session_service=sessions)
    session = await sessions.create_session(app_name=APP, user_id="bench")
    message = types.Content(role="user", parts=[types.Part(text='convert_currency {"amount": 3, "currency": "USD"}')])
    start = time.perf_counter()
    for _ in range(turns):
        async for _ in runner.run_async(user_id="bench", session_id=session.id, new_message=message):
            pass
    elapsed = time.perf_counter() - start
    await runner.close()  # waits for the audit rows
    return elapsed / turns, on_path


async def benchmark(turns: int, rounds: int) -> None:
    from django.conf import settings

    from cognizes.infra.db_threads import run_in_db_thread
    from tools_app import services
    from tools_app.models import ToolExecution

    settings.COGNIZES_TOOL_CALLABLES = ["tests.tools.callables.convert_currency"]
    await run_in_db_thread(
        services.do_create_tool,
        app_name=APP,
        name="convert_currency",
        kind="python",
        callable_path="tests.tools.callables.convert_currency",
    )
    await run_turns(5, audit=True)  # warm up: imports, connections
    with_audit, without_audit, on_path_all = [], [], []
    for round_ in range(rounds):
        for audit in [True, False] if round_ % 2 == 0 else [False, True]:
            per_turn, on_path = await run_turns(turns, audit=audit)
            (with_audit if audit else without_audit).append(per_turn)
            on_path_all.extend(on_path)
    rows = await run_in_db_thread(ToolExecution.objects.filter(app_name=APP).count)
    expected = 5 + turns * rounds
    on_path_us = sorted(x * 1e6 for x in on_path_all)
    print(f"turns/round={turns} rounds={rounds} audit rows written={rows} (expected {expected})")
    print(
        f"on-path µs/call   p50={statistics.median(on_path_us):.0f}  p95={on_path_us[int(len(on_path_us) * 0.95)]:.0f}"
        f"  max={on_path_us[-1]:.0f}"
    )
    a, b = statistics.median(with_audit) * 1000, statistics.median(without_audit) * 1000
    print(f"ms/turn           with audit={a:.2f}  without={b:.2f}  ratio={a / b:.3f}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--turns", type=int, default=200)
    parser.add_argument("--rounds", type=int, default=5)
    args = parser.parse_args()
    os.environ.setdefault("COGNIZES_TRACING", "0")
    with migrated_database(BENCH_DB):
        asyncio.run(benchmark(args.turns, args.rounds))


if __name__ == "__main__":
    main()
