"""Benchmark: a turn of a deployed agent through Vertex's ``:streamQuery``, vs the same turn through ``run/stream/``.

The same agent (the weather demo, offline model: ``load_memory``, then the
registry's ``get_weather``, then the answer: three model calls, two tools), the
same server (one ``uvicorn`` process with a pool of 20 connections, as ``make
run`` gives it), the same question, a new session per turn. Three ways:

* ``run/stream/``        Cognizes' own run API (SSE), with a bare ``httpx`` client;
* ``:streamQuery``       Vertex's wire (``stream_query``'s body), with a bare ``httpx`` client;
* ``SDK stream_query``   Google's agentplatform SDK (``runtimes.get`` → ``stream_query``), express mode.

Timed per turn: to the first streamed event (the agent's first event, a tool
call) and to the end of the stream. Rounds are interleaved (each runs the three
ways back to back, the order rotating); the table shows medians over rounds of
the per-turn medians. Ratios are against ``run/stream/``. No Celery worker runs:
each turn's memory job is queued, not consolidated, the same for every way.

    .venv/bin/python bench/deployed.py [--rounds 5] [--turns 10]
"""

from __future__ import annotations

import argparse
import json
import logging
import os
import statistics
import sys
import time
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench.api import start_server, stop_server
from bench.scratch import migrated_database

os.environ["DJANGO_SETTINGS_MODULE"] = "cognizes.settings"
os.environ["DJANGO_DEBUG"] = "false"


BENCH_DB = "cognizes_bench_deployed"
APP, USER = "weather", "bench_user"
QUESTION = "What's the weather in Paris?"
NATIVE, VERTEX, SDK = "run/stream/", ":streamQuery", "SDK stream_query"
WAYS = (NATIVE, VERTEX, SDK)


def native_turn(http, base_url: str) -> Iterator[dict]:
    url = f"{base_url}/api/v1/apps/{APP}/users/{USER}/sessions/{uuid.uuid4().hex}/run/stream/"
    with http.stream("POST", url, json={"message": QUESTION}) as response:
        response.raise_for_status()
        event = None
        for line in response.iter_lines():
            if line.startswith("event: "):
                event = line[7:]
            elif line.startswith("data: ") and event == "event":
                yield json.loads(line[6:])["event"]


def vertex_turn(http, base_url: str, engine: str) -> Iterator[dict]:
    body = {"classMethod": "stream_query", "input": {"user_id": USER, "message": QUESTION}}
    with http.stream("POST", f"{base_url}/v1beta1/{engine}:streamQuery", params={"alt": "sse"}, json=body) as response:
        response.raise_for_status()
        for line in response.iter_lines():
            if line.startswith("data: "):
                yield json.loads(line[6:])


def timed(turn: Callable[[], Iterator[dict]]) -> tuple[float, float]:
    """(seconds to the first event, seconds to the end) of one turn; it must end in the agent's answer."""
    start = time.perf_counter()
    first = None
    events = []
    for event in turn():
        if first is None:
            first = time.perf_counter() - start
        events.append(event)
    whole = time.perf_counter() - start
    answer = [p.get("text") for p in (events[-1].get("content") or {}).get("parts", [])] if events else []
    if not any(text and "Paris" in text for text in answer):
        raise RuntimeError(f"the turn did not end in the answer: {events[-1:]}")
    return first, whole


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--turns", type=int, default=10, help="turns per way per round")
    args = parser.parse_args()

    with migrated_database(BENCH_DB):
        import agentplatform
        import httpx
        from django.conf import settings

        from cognizes.access.services import do_create_api_key
        from demo_agents.weather.tools import register
        from vertex_app.services import do_get_or_create_engine

        logging.getLogger("httpx").setLevel(logging.WARNING)
        register()
        engine = f"reasoningEngines/{do_get_or_create_engine(app_name=APP).engine_id}"
        _, key = do_create_api_key(name="bench", app_name=APP)
        server = start_server(
            os.environ["DATABASE_URL"],
            settings.REDIS_URL,
            conn_max_age=0,
            pool_size=20,
            workers=1,
            extra_env={
                "COGNIZES_AGENTS": "weather=demo_agents.weather.agent.runner",
                "GOOGLE_API_KEY": "",
                "GOOGLE_GENAI_USE_VERTEXAI": "",
            },
        )
        try:
            base = server.base_url
            native = httpx.Client(headers={"Authorization": f"Bearer {key}"}, timeout=60)
            vertex = httpx.Client(headers={"x-goog-api-key": key}, timeout=60)
            remote = agentplatform.Client(api_key=key, http_options={"base_url": base + "/"}).runtimes.get(name=engine)
            turns = {
                NATIVE: lambda: native_turn(native, base),
                VERTEX: lambda: vertex_turn(vertex, base, engine),
                SDK: lambda: iter(remote.stream_query(user_id=USER, message=QUESTION)),
            }
            for way in WAYS:  # warm-up: the Runner built, connections open
                timed(turns[way])
            firsts: dict[str, list[float]] = {way: [] for way in WAYS}
            wholes: dict[str, list[float]] = {way: [] for way in WAYS}
            for round_ in range(args.rounds):
                order = WAYS[round_ % 3 :] + WAYS[: round_ % 3]
                for way in order:
                    runs = [timed(turns[way]) for _ in range(args.turns)]
                    firsts[way].append(statistics.median(first for first, _ in runs))
                    wholes[way].append(statistics.median(whole for _, whole in runs))
        finally:
            stop_server(server)
        print(
            f"\n{args.rounds} interleaved rounds of {args.turns} turns per way ({QUESTION!r}, weather demo agent, "
            "offline model, a new session per turn). Medians over rounds of per-turn medians.\n"
        )
        print(
            f"{'way':<18} {'first event ms':>15} {'whole turn ms':>14} {'first vs run/stream/':>21} "
            f"{'whole vs run/stream/':>21}"
        )
        base_first, base_whole = statistics.median(firsts[NATIVE]), statistics.median(wholes[NATIVE])
        for way in WAYS:
            first, whole = statistics.median(firsts[way]), statistics.median(wholes[way])
            print(
                f"{way:<18} {first * 1000:>15.1f} {whole * 1000:>14.1f} {first / base_first:>20.2f}x "
                f"{whole / base_whole:>20.2f}x"
            )


if __name__ == "__main__":
    main()
