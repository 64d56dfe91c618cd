"""Benchmark: what tracing to PostgreSQL adds to an agent run.

A 50-step run: a fake offline model calls a tool 49 times, one call per step,
then answers (50 model calls, 49 tool calls, ~101 spans per run). The model and
the tool take no time, so this is the worst case: any real model call dwarfs it.

Each round runs two child processes, one traced (``COGNIZES_TRACING=1``: the
PostgreSQL exporter behind a ``BatchSpanProcessor``) and one untraced
(``COGNIZES_TRACING=0``: ADK's spans go to OpenTelemetry's no-op provider); which
goes first alternates between rounds, so drift hits both alike. A child warms up
with one run, then times ``--runs`` runs; the median over rounds is reported.
The traced child then flushes (timed apart: it is not agent latency), checks
that every span was stored, and deletes its traces (service.name
``cognizes-bench``). Sessions are ADK's in-memory ones, so the database work
timed is the exporter's alone.

    .venv/bin/python bench/tracing.py [--rounds N] [--runs N]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import statistics
import subprocess
import sys
import time
from collections.abc import AsyncGenerator
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
STEPS = 50


def child(runs: int) -> dict:
    sys.path.insert(0, str(ROOT))
    from google.adk.agents import LlmAgent
    from google.adk.models.base_llm import BaseLlm
    from google.adk.models.llm_request import LlmRequest
    from google.adk.models.llm_response import LlmResponse
    from google.adk.runners import Runner
    from google.adk.sessions import InMemorySessionService
    from google.genai import types

    import cognizes.adk  # noqa: F401  (sets Django up, and tracing when COGNIZES_TRACING is on)

    class StepLlm(BaseLlm):
        """Calls ``step`` until it has been called STEPS - 1 times, then answers."""

        model: str = "bench-offline"

        async def generate_content_async(
            self, llm_request: LlmRequest, stream: bool = False
        ) -> AsyncGenerator[LlmResponse, None]:
            done = sum(1 for c in llm_request.contents for p in c.parts or [] if p.function_response)
            if done >= STEPS - 1:
                part = types.Part(text=f"finished after {done} steps")
            else:
                part = types.Part(function_call=types.FunctionCall(name="step", args={"n": done}))
            usage = types.GenerateContentResponseUsageMetadata(prompt_token_count=100, candidates_token_count=10)
            yield LlmResponse(content=types.Content(role="model", parts=[part]), usage_metadata=usage)

    def step(n: int) -> dict:
        """Do one step."""
        return {"n": n}

    service = InMemorySessionService()
    runner = Runner(
        agent=LlmAgent(name="bench_agent", model=StepLlm(), tools=[step]), app_name="bench", session_service=service
    )

    async def one_run() -> None:
        session = await service.create_session(app_name="bench", user_id="u")
        message = types.Content(role="user", parts=[types.Part(text="go")])
        async for _ in runner.run_async(user_id="u", session_id=session.id, new_message=message):
            pass

    async def timed() -> list[float]:
        await one_run()  # warm-up
        times = []
        for _ in range(runs):
            start = time.perf_counter()
            await one_run()
            times.append(time.perf_counter() - start)
        return times

    times = asyncio.run(timed())
    result: dict = {"run_s": statistics.median(times)}
    from tracing_app.setup import database_exporter

    exporter = database_exporter()
    if exporter is not None:
        from opentelemetry import trace

        from tracing_app.models import Trace

        start = time.perf_counter()
        trace.get_tracer_provider().force_flush(60_000)
        result["flush_s"] = time.perf_counter() - start
        stored = Trace.objects.filter(service_name="cognizes-bench")
        result.update(
            traces=stored.count(),
            spans=sum(stored.values_list("span_count", flat=True)),
            failures=exporter.failures,
        )
        stored.delete()
    return result


def run_child(traced: bool, runs: int) -> dict:
    env = {**os.environ, "COGNIZES_TRACING": "1" if traced else "0", "OTEL_SERVICE_NAME": "cognizes-bench"}
    out = subprocess.run(
        [sys.executable, __file__, "--child", "--runs", str(runs)],
        env=env,
        cwd=ROOT,
        check=True,
        capture_output=True,
        text=True,
    ).stdout
    return json.loads(out.strip().splitlines()[-1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=5, help="interleaved rounds (default 5)")
    parser.add_argument("--runs", type=int, default=10, help="timed 50-step runs per child (default 10)")
    parser.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        print(json.dumps(child(args.runs)))
        return
    traced, untraced = [], []
    for round_ in range(args.rounds):
        order = [True, False] if round_ % 2 == 0 else [False, True]
        for is_traced in order:
            (traced if is_traced else untraced).append(run_child(is_traced, args.runs))
    t = statistics.median(r["run_s"] for r in traced)
    u = statistics.median(r["run_s"] for r in untraced)
    last = traced[-1]
    print(f"50-step run, untraced: {u * 1000:8.1f} ms (median of {args.rounds} rounds × {args.runs} runs)")
    print(f"50-step run, traced:   {t * 1000:8.1f} ms")
    print(f"tracing overhead:      {(t / u - 1) * 100:+8.1f} %   (target < 10 %)")
    print(f"flush after the runs:  {statistics.median(r['flush_s'] for r in traced) * 1000:8.1f} ms (not agent time)")
    print(f"stored per traced child: {last['traces']} traces, {last['spans']} spans, {last['failures']} failed batches")


if __name__ == "__main__":
    main()
