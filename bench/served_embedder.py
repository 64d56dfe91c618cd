"""Benchmark: what ``ServedEmbedder`` (LiteLLM) costs on this side of the wire, against a plain HTTP post.

What is measured, and why
-------------------------
A served model's rate is the server's; a worker embedding through it should add little to it (issue 44 items 6
and 7). Against the stand-in of the tests (tests/embedding_server.py, on loopback: no network, and the same
server work in every line), the median wall time of one request of ``--batch`` texts at 384 dimensions:

* **plain, base64**: ``httpx`` posting the request and decoding the answer with numpy: the floor;
* **ServedEmbedder**: the embedder as a worker runs it (LiteLLM, base64 asked for, decoded, normalised);
* **LiteLLM, floats**: LiteLLM without ``encoding_format`` (what the embedder did first): the OpenAI SDK under it
  builds every number of the JSON answer one by one.

Ratios are to the floor, measured in the same run. One query (``embed_query``) is timed the same way.

    .venv/bin/python bench/served_embedder.py [--batch 64] [--rounds 30]
"""

from __future__ import annotations

import argparse
import base64
import os
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))


def median_ms(call: Callable[[], object], rounds: int) -> float:
    times = []
    for _ in range(rounds):
        started = time.perf_counter()
        call()
        times.append(time.perf_counter() - started)
    return 1000 * statistics.median(times)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--batch", type=int, default=64)
    parser.add_argument("--rounds", type=int, default=30)
    args = parser.parse_args()
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "cognizes.settings")
    import django

    django.setup()
    import httpx
    import numpy as np

    from cognizes.infra.served_embedder import ServedEmbedder, _litellm
    from tests.embedding_server import embedding_server

    texts = [
        f"Chunk {i}: every employee gets 25 days of paid leave a year. 员工每年享有二十五天带薪假期。"
        for i in range(64)
    ]
    texts = (texts * (args.batch // len(texts) + 1))[: args.batch]
    with embedding_server() as server, httpx.Client() as client:
        embedder = ServedEmbedder(
            "openai/text-embedding-3-small", base_url=server.url, api_key="bench", batch_size=args.batch
        )
        embedder.embed_query("warm-up")  # LiteLLM's import, the connection

        def plain(batch: list[str]) -> np.ndarray:
            body = {"model": "m", "input": batch, "dimensions": 384, "encoding_format": "base64"}
            answer = client.post(f"{server.url}/embeddings", json=body, headers={"Authorization": "Bearer bench"})
            return np.stack([np.frombuffer(base64.b64decode(row["embedding"]), "<f4") for row in answer.json()["data"]])

        def floats() -> object:
            return _litellm().embedding(
                model="openai/text-embedding-3-small", input=texts, api_base=server.url, api_key="bench", dimensions=384
            )

        floor = median_ms(lambda: plain(texts), args.rounds)
        lines = [
            ("plain, base64", floor),
            ("ServedEmbedder", median_ms(lambda: embedder.embed_documents(texts), args.rounds)),
            ("LiteLLM, floats", median_ms(floats, args.rounds)),
        ]
        query_floor = median_ms(lambda: plain(["How many days of leave?"]), args.rounds)
        query = median_ms(lambda: embedder.embed_query("How many days of leave?"), args.rounds)
    print(f"batch of {args.batch} texts, 384 dimensions, median of {args.rounds} (stand-in server on loopback)")
    for name, ms in lines:
        print(f"  {name:16} {ms:8.1f} ms  {ms / floor:5.2f}x the floor  {ms / args.batch:6.2f} ms a text")
    print(f"one query: plain {query_floor:.1f} ms, ServedEmbedder {query:.1f} ms")


if __name__ == "__main__":
    main()
