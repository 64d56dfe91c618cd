"""Benchmark: the registry over MCP (``/mcp/{app}/``) against the same tools in-process through ``DatabaseToolset``.

One run, on a scratch database (``cognizes_bench_mcp``) of the project's
PostgreSQL, with the project's ASGI application under uvicorn on loopback (one
process, ``lifespan="off"`` as ``make run``). The registry holds one trivial
Python tool (``convert_currency``). Each figure is the median (and p95) of
``--calls`` sequential requests after a warm-up:

* ``tools/list``: a JSON-RPC POST on one kept-alive HTTP connection, against
  ``DatabaseToolset.get_tools()`` in-process (the registry check and the cached
  tools, what an agent pays per model turn).
* ``tools/call``: the same, against two in-process baselines: the tool's bare
  ``run_async`` (what the agent's function step ends in, no audit), and
  ``tools_app.direct.call_tool`` (ADK's function step with ``AuditPlugin``, the
  work the MCP handler does once it has parsed and authenticated the request).

The ratios say what the protocol (HTTP, JSON-RPC, the SDK's transport, the key
check) adds on top of the tool itself.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import statistics
import sys
import threading
import time
from collections.abc import Awaitable, Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench.scratch import migrated_database
from bench.timing import no_gc
from cognizes.infra import secret_key

os.environ.setdefault("DJANGO_SECRET_KEY", secret_key.ensure())  # it serves the ASGI app, which needs one (issue 41 E)

BENCH_DB = "cognizes_bench_mcp"
APP = "bench_mcp"
ARGS = {"amount": 3, "currency": "USD"}


async def timed(calls: int, step: Callable[[], Awaitable[object]]) -> list[float]:
    for _ in range(20):  # warm up: imports, connections, caches
        await step()
    times = []
    with no_gc():
        for _ in range(calls):
            start = time.perf_counter()
            await step()
            times.append(time.perf_counter() - start)
    return times


def serve() -> tuple[str, Callable[[], None]]:
    import uvicorn

    from cognizes.asgi import application

    server = uvicorn.Server(uvicorn.Config(application, host="127.0.0.1", port=0, log_level="warning", lifespan="off"))
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    while not server.started:
        time.sleep(0.02)
    port = server.servers[0].sockets[0].getsockname()[1]

    def stop() -> None:
        server.should_exit = True
        thread.join(30)

    return f"http://127.0.0.1:{port}/mcp/{APP}/", stop


async def benchmark(calls: int) -> None:
    import httpx
    from django.conf import settings

    from cognizes.access.services import do_create_api_key
    from cognizes.infra.db_threads import run_in_db_thread
    from tools_app import direct, services
    from tools_app.adk import DatabaseToolset
    from tools_app.models import ToolExecution

    settings.COGNIZES_TOOL_CALLABLES = ["tests.tools.callables.convert_currency"]
    await run_in_db_thread(
        services.do_create_tool,
        app_name=APP,
        name="convert_currency",
        kind="python",
        callable_path="tests.tools.callables.convert_currency",
    )
    _, key = await run_in_db_thread(do_create_api_key, name="bench", app_name=APP, user_id="bench")

    toolset = DatabaseToolset(app_name=APP)
    [tool] = await toolset.get_tools()
    caller = direct.Caller(app_name=APP, user_id="bench", client="bench")
    local_list = await timed(calls, toolset.get_tools)
    local_bare = await timed(calls, lambda: tool.run_async(args=ARGS, tool_context=None))
    local_direct = await timed(calls, lambda: direct.call_tool(name="convert_currency", arguments=ARGS, caller=caller))

    url, stop = await asyncio.to_thread(serve)
    headers = {
        "Authorization": f"Bearer {key}",
        "Accept": "application/json, text/event-stream",
        "Content-Type": "application/json",
        "MCP-Protocol-Version": "2025-11-25",
    }
    listing = json.dumps({"jsonrpc": "2.0", "id": 1, "method": "tools/list"})
    call = json.dumps(
        {"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {"name": "convert_currency", "arguments": ARGS}}
    )
    try:
        async with httpx.AsyncClient(headers=headers, timeout=30) as http:

            async def post(body: str) -> None:
                answer = (await http.post(url, content=body)).json()
                assert "result" in answer and not answer["result"].get("isError"), answer

            mcp_list = await timed(calls, lambda: post(listing))
            mcp_call = await timed(calls, lambda: post(call))
    finally:
        await asyncio.to_thread(stop)
    rows = await run_in_db_thread(ToolExecution.objects.filter(app_name=APP).count)

    def ms(times: list[float]) -> str:
        ordered = sorted(times)
        return (
            f"p50={statistics.median(ordered) * 1000:7.3f} ms  p95={ordered[int(len(ordered) * 0.95)] * 1000:7.3f} ms"
        )

    def ratio(over: list[float], base: list[float]) -> float:
        return statistics.median(over) / statistics.median(base)

    print(f"calls={calls} (+20 warm-up each); audit rows written={rows} (expected {2 * (calls + 20)})")
    print(f"tools/list  in-process DatabaseToolset.get_tools   {ms(local_list)}")
    print(
        f"tools/list  over MCP (HTTP, JSON-RPC)              {ms(mcp_list)}   ratio={ratio(mcp_list, local_list):.1f}"
    )
    print(f"tools/call  in-process tool.run_async (no audit)   {ms(local_bare)}")
    print(f"tools/call  in-process direct.call_tool (audited)  {ms(local_direct)}")
    print(
        f"tools/call  over MCP (HTTP, JSON-RPC)              {ms(mcp_call)}   "
        f"ratio={ratio(mcp_call, local_bare):.1f} vs bare, {ratio(mcp_call, local_direct):.2f} vs audited"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--calls", type=int, default=300)
    args = parser.parse_args()
    os.environ.setdefault("COGNIZES_TRACING", "0")
    with migrated_database(BENCH_DB):
        asyncio.run(benchmark(args.calls))


if __name__ == "__main__":
    main()
