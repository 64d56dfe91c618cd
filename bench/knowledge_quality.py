"""Benchmark: how well knowledge search answers questions about documents, against BM25 over the same chunks.

On the CMU/Pitt Question-Answer data (``../shared/data/rag/cmuqa_dev/``, scored as its README
says): every article is a document of one corpus, indexed on the real path
(``knowledge_app.ingestion``: parse, chunk, embed); for each question the top 10 chunks; a
chunk *answers* when it comes from the question's article and its lower-cased,
punctuation-free text holds one of the answers as whole words. Prints answer-hit@1, @5,
@10 and MRR@10 of hybrid search, vector only and keyword (BM25) only over the same chunks
in the same run, and hybrid / BM25 ratios; then ingestion time. The data is not part of
the project (GFDL): its path is an argument. Runs on a scratch database, dropped at the end.

    .venv/bin/python bench/knowledge_quality.py PATH/cmuqa_dev [--chunk-size 256] [--chunk-overlap 32]
"""

from __future__ import annotations

import argparse
import itertools
import json
import re
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench.scratch import migrated_database  # noqa: E402

BENCH_DB = "cognizes_bench_knowledge"
APP = "bench"


def normalised(text: str) -> str:
    return " " + " ".join(re.sub(r"[^\w\s]", " ", text.lower()).split()) + " "


def answers(chunk_text: str, chunk_article: str, question: dict) -> bool:
    text = normalised(chunk_text)
    return chunk_article == question["article"] and any(
        normalised(answer).strip() and normalised(answer) in text for answer in question["answers"])


def ingest(folder: Path, chunk_size: int, chunk_overlap: int) -> tuple[int, float, int]:
    """Every article a document of one corpus, indexed inline; (corpus id, seconds, chunks)."""
    import hashlib

    from knowledge_app.ingestion import do_ingest
    from knowledge_app.models import Chunk, Corpus, Document

    corpus = Corpus.objects.create(app_name=APP, display_name="cmuqa", chunk_size=chunk_size,
                                   chunk_overlap=chunk_overlap)
    started = time.perf_counter()
    for path in sorted((folder / "articles").glob("*.txt")):
        data = path.read_bytes()
        document = Document.objects.create(corpus=corpus, app_name=APP, display_name=path.stem, source_uri=path.name,
                                           mime_type="text/plain", size_bytes=len(data),
                                           content_hash=hashlib.sha256(data).hexdigest(), content=data)
        outcome = do_ingest(document.id)
        if outcome.startswith("failed"):
            print(f"  {path.name}: {outcome}")
    return corpus.id, time.perf_counter() - started, Chunk.objects.filter(corpus=corpus).count()


def score(corpus_id: int, questions: list[dict], lines: dict[str, tuple[str, Any]]) -> dict[str, dict[str, float]]:
    """Each line (name -> (mode, fusion)) over every question; the query embedded once per question."""
    from infra.embedders import get_embedder
    from knowledge_app.search import search_chunks

    embedded = {q["id"]: list(get_embedder().embed_query(q["question"])) for q in questions}
    figures = {}
    for name, (mode, fusion) in lines.items():
        ranks, elapsed = [], []
        for question in questions:
            started = time.perf_counter()
            hits = search_chunks(app_name=APP, corpus_ids=[corpus_id], query=question["question"], top_k=10,
                                 mode=mode, fusion=fusion, embedding=embedded[question["id"]])
            elapsed.append(time.perf_counter() - started)
            ranks.append(next((n for n, hit in enumerate(hits, 1)
                               if answers(hit.text, hit.source_uri.removesuffix(".txt"), question)), None))
        n = len(questions)
        figures[name] = {
            **{f"hit@{k}": sum(r is not None and r <= k for r in ranks) / n for k in (1, 5, 10)},
            "MRR@10": sum(1 / r for r in ranks if r is not None) / n,
            "median ms": sorted(elapsed)[n // 2] * 1000,  # the SQL, the query's embedding not included
        }
    return figures


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("path", type=Path, help="the cmuqa_dev folder (articles/, questions.jsonl)")
    parser.add_argument("--chunk-size", type=int, default=256, help="tokens per chunk (Vertex's chunk_size)")
    parser.add_argument("--chunk-overlap", type=int, default=32)
    parser.add_argument("--sweep", action="store_true", help="also other fusion weights (to choose the default)")
    args = parser.parse_args()
    questions = [json.loads(line) for line in (args.path / "questions.jsonl").read_text().splitlines() if line]
    with migrated_database(BENCH_DB):
        corpus_id, seconds, chunks = ingest(args.path, args.chunk_size, args.chunk_overlap)
        print(f"{len(list((args.path / 'articles').glob('*.txt')))} articles -> {chunks} chunks of at most "
              f"{args.chunk_size} tokens (overlap {args.chunk_overlap}) in {seconds:.1f} s "
              f"({chunks / seconds:.1f} chunks/s, one process); {len(questions)} questions")
        figures = score(corpus_id, questions, lines(args.sweep))
    columns = ["hit@1", "hit@5", "hit@10", "MRR@10", "median ms"]
    print(f"\n{'line':<26}" + "".join(f"{c:>11}" for c in columns))
    for name, row in figures.items():
        print(f"{name:<26}" + "".join(f"{row[c]:>11.1f}" if c == "median ms" else f"{row[c]:>11.3f}" for c in columns))
    print(f"{'hybrid / BM25':<26}" + "".join(f"{figures['hybrid'][c] / max(figures['BM25'][c], 1e-9):>10.2f}x"
                                              for c in columns[:4]))


def lines(sweep: bool) -> dict[str, tuple[str, Any]]:
    """The lines compared: hybrid as configured, each list alone, and with ``--sweep`` other fusions."""
    from knowledge_app.search import FUSION, Fusion

    shown = {"hybrid": ("hybrid", FUSION), "vector": ("vector", FUSION), "BM25": ("keyword", FUSION)}
    if sweep:
        for rrf_k, keyword in itertools.product((5, 20, 60), (1.0, 1.5, 2.0)):
            shown[f"hybrid k={rrf_k} keyword×{keyword:g}"] = ("hybrid", Fusion(vector=1.0, keyword=keyword, rrf_k=rrf_k))
    return shown


if __name__ == "__main__":
    main()
