"""Benchmark: PostgresArtifactService against ADK's own artifact services, in one run on one machine.

Run: ``.venv/bin/python bench/artifacts.py``. For payloads of 1 KB, 1 MB and
20 MB, each service saves ``--count`` versions of one artifact, loads the latest
that many times, and lists versions and keys. Anchors: ADK's
``InMemoryArtifactService`` (a dict: the floor) and ``FileArtifactService``
(local disk, a temporary directory). PostgreSQL is the project's server, on a
scratch database (``cognizes_bench_artifacts``). Medians per operation, and the
ratio of Cognizes' to the file service's.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench.scratch import migrated_database

BENCH_DB = "cognizes_bench_artifacts"
SIZES = {"1 KB": 1024, "1 MB": 1024 * 1024, "20 MB": 20 * 1024 * 1024}


async def measure(service, size: int, count: int) -> dict[str, float]:
    """Median milliseconds of save, load, list_versions and list_artifact_keys."""
    from google.genai import types

    part = types.Part(inline_data=types.Blob(data=os.urandom(size), mime_type="application/octet-stream"))
    scope = {"app_name": "bench", "user_id": "ada", "session_id": "s1"}
    times: dict[str, list[float]] = {"save": [], "load": [], "list versions": [], "list keys": []}
    filename = f"blob-{size}"
    for _ in range(count):
        started = time.perf_counter()
        await service.save_artifact(**scope, filename=filename, artifact=part)
        times["save"].append(time.perf_counter() - started)
    for _ in range(count):
        started = time.perf_counter()
        loaded = await service.load_artifact(**scope, filename=filename)
        times["load"].append(time.perf_counter() - started)
        assert loaded.inline_data.data == part.inline_data.data
        started = time.perf_counter()
        await service.list_versions(**scope, filename=filename)
        times["list versions"].append(time.perf_counter() - started)
        started = time.perf_counter()
        await service.list_artifact_keys(**scope)
        times["list keys"].append(time.perf_counter() - started)
    return {operation: statistics.median(values) * 1000 for operation, values in times.items()}


async def benchmark(count: int) -> None:
    from google.adk.artifacts import FileArtifactService, InMemoryArtifactService

    from cognizes.adk import PostgresArtifactService

    print(f"median ms per operation, {count} versions per payload; ratio = Cognizes / FileArtifactService")
    for label, size in SIZES.items():
        with tempfile.TemporaryDirectory() as directory:
            results = {
                "in memory": await measure(InMemoryArtifactService(), size, count),
                "file": await measure(FileArtifactService(root_dir=directory), size, count),
                "cognizes": await measure(PostgresArtifactService(), size, count),
            }
        for operation in results["file"]:
            line = "  ".join(f"{name}={values[operation]:8.2f}" for name, values in results.items())
            ratio = results["cognizes"][operation] / results["file"][operation]
            print(f"{label:>6} {operation:<14} {line}  ratio={ratio:.2f}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--count", type=int, default=10)
    args = parser.parse_args()
    os.environ.setdefault("COGNIZES_TRACING", "0")
    with migrated_database(BENCH_DB):
        asyncio.run(benchmark(args.count))


if __name__ == "__main__":
    main()
