"""Benchmark: how well knowledge search answers questions about documents, against BM25 over the same chunks.

On the CMU/Pitt Question-Answer data (``../shared/data/rag/cmuqa_dev/``, scored as its README
says): every article is a document of one corpus, indexed on the real path
(``knowledge_app.ingestion``: parse, chunk, embed); for each question the top 10 chunks; a
chunk *answers* when it comes from the question's article and its lower-cased,
punctuation-free text holds one of the answers as whole words. Prints answer-hit@1, @5,
@10 and MRR@10 of hybrid search, vector only and keyword (BM25) only over the same chunks
in the same run, and hybrid / BM25 ratios, over all the questions and over each of two
fixed halves (by the parity of the question's id). ``--sweep`` adds other fusions and, for
each half, the one chosen on the other half, scored on this one: only this development half
of the data is here, so whatever is chosen on it must be shown to hold on questions it was
not chosen on. The data is not part of the project (GFDL): its path is an argument. Runs on
a scratch database, dropped at the end unless ``--keep``; ``--reuse`` searches the corpus a
kept one holds, if it was loaded the same way (articles, chunking, embedder; after a change
to ingestion, run without it), instead of the minutes of embedding.

    .venv/bin/python bench/knowledge_quality.py PATH/cmuqa_dev [--chunk-size 256] [--chunk-overlap 32]
        [--sweep] [--keep] [--reuse]
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

from bench.scratch import migrated_database

BENCH_DB = "cognizes_bench_knowledge"
APP = "bench"


def normalised(text: str) -> str:
    return " " + " ".join(re.sub(r"[^\w\s]", " ", text.lower()).split()) + " "


def answers(chunk_text: str, chunk_article: str, question: dict) -> bool:
    text = normalised(chunk_text)
    return chunk_article == question["article"] and any(
        normalised(answer).strip() and normalised(answer) in text for answer in question["answers"]
    )


def corpus_name(folder: Path, chunk_size: int, chunk_overlap: int) -> str:
    """What a loaded corpus holds, as its name, so ``--reuse`` takes only one loaded the same way."""
    from cognizes.infra.embedders import get_embedder

    articles = len(list((folder / "articles").glob("*.txt")))
    return f"cmuqa articles={articles} chunk_size={chunk_size} overlap={chunk_overlap} embedder={get_embedder().id}"


def loaded_corpus(name: str) -> int | None:
    """The corpus of that name whose every document is indexed, if the (reused) database has one."""
    from knowledge_app.models import Corpus, DocumentStatus

    for corpus in Corpus.objects.filter(app_name=APP, display_name=name):
        documents = corpus.documents.all()
        if documents.exists() and not documents.exclude(status=DocumentStatus.ACTIVE).exists():
            return corpus.id
    return None


def ingest(folder: Path, chunk_size: int, chunk_overlap: int) -> tuple[int, float, int]:
    """Every article a document of one corpus, indexed inline; (corpus id, seconds, chunks)."""
    import hashlib

    from knowledge_app.ingestion import do_ingest
    from knowledge_app.models import Chunk, Corpus, Document

    corpus = Corpus.objects.create(
        app_name=APP,
        display_name=corpus_name(folder, chunk_size, chunk_overlap),
        chunk_size=chunk_size,
        chunk_overlap=chunk_overlap,
    )
    started = time.perf_counter()
    for path in sorted((folder / "articles").glob("*.txt")):
        data = path.read_bytes()
        document = Document.objects.create(
            corpus=corpus,
            app_name=APP,
            display_name=path.stem,
            source_uri=path.name,
            mime_type="text/plain",
            size_bytes=len(data),
            content_hash=hashlib.sha256(data).hexdigest(),
            content=data,
        )
        outcome = do_ingest(document.id)
        if outcome.startswith("failed"):
            print(f"  {path.name}: {outcome}")
    return corpus.id, time.perf_counter() - started, Chunk.objects.filter(corpus=corpus).count()


Ranks = dict[str, int | None]
"""Per question id, the place of the first answering chunk in a line's top 10 (None: none answers)."""
FIGURES = ("hit@1", "hit@5", "hit@10", "MRR@10")


def score(
    corpus_id: int, questions: list[dict], lines: dict[str, tuple[str, Any]]
) -> tuple[dict[str, Ranks], dict[str, float]]:
    """Each line (name -> (mode, fusion)) over every question, the query embedded once per question: the ranks of
    each line, and its median milliseconds per search (the SQL, the query's embedding not included)."""
    from cognizes.infra.embedders import get_embedder
    from knowledge_app.search import search_chunks

    embedded = {q["id"]: list(get_embedder().embed_query(q["question"])) for q in questions}
    ranks: dict[str, Ranks] = {}
    median_ms = {}
    for name, (mode, fusion) in lines.items():
        ranks[name], elapsed = {}, []
        for question in questions:
            started = time.perf_counter()
            hits = search_chunks(
                app_name=APP,
                corpus_ids=[corpus_id],
                query=question["question"],
                top_k=10,
                mode=mode,
                fusion=fusion,
                embedding=embedded[question["id"]],
            )
            elapsed.append(time.perf_counter() - started)
            ranks[name][question["id"]] = next(
                (
                    n
                    for n, hit in enumerate(hits, 1)
                    if answers(hit.text, hit.source_uri.removesuffix(".txt"), question)
                ),
                None,
            )
        median_ms[name] = sorted(elapsed)[len(elapsed) // 2] * 1000
    return ranks, median_ms


def figures(ranks: Ranks, ids: list[str]) -> dict[str, float]:
    """answer-hit@1/5/10 and MRR@10 over these questions."""
    found = [ranks[i] for i in ids]
    return {
        **{f"hit@{k}": sum(r is not None and r <= k for r in found) / len(found) for k in (1, 5, 10)},
        "MRR@10": sum(1 / r for r in found if r is not None) / len(found),
    }


def folds(questions: list[dict]) -> dict[str, list[str]]:
    """Two fixed halves of the questions, by the parity of their id's number: one to choose on, one to score."""
    return {
        parity: [q["id"] for q in questions if int(q["id"].lstrip("q")) % 2 == remainder]
        for parity, remainder in (("odd ids", 1), ("even ids", 0))
    }


def print_table(title: str, rows: dict[str, dict[str, float]]) -> None:
    columns = [c for c in (*FIGURES, "median ms") if any(c in row for row in rows.values())]
    print(f"\n{title}\n{'line':<30}" + "".join(f"{c:>11}" for c in columns))
    for name, row in rows.items():
        print(f"{name:<30}" + "".join(f"{row[c]:>11.1f}" if c == "median ms" else f"{row[c]:>11.3f}" for c in columns))


def report(ranks: dict[str, Ranks], median_ms: dict[str, float], questions: list[dict]) -> None:
    """The full set, each fold, and with ``--sweep`` each hybrid line chosen on one fold and scored on the other."""
    every = [q["id"] for q in questions]
    print_table(
        f"all {len(every)} questions",
        {name: {**figures(line, every), "median ms": median_ms[name]} for name, line in ranks.items()},
    )
    print(
        f"{'hybrid / BM25':<30}"
        + "".join(
            f"{figures(ranks['hybrid'], every)[c] / max(figures(ranks['BM25'], every)[c], 1e-9):>10.2f}x"
            for c in FIGURES
        )
    )
    halves = folds(questions)
    for fold, ids in halves.items():
        print_table(f"fold {fold} ({len(ids)} questions)", {name: figures(line, ids) for name, line in ranks.items()})
    swept = [name for name in ranks if name.startswith("hybrid ")]
    if not swept:
        return
    print("\nchosen on one fold (best MRR@10, then the sum of the figures), scored on the other:")
    for (chosen_on, tuning), (scored_on, held_out) in ((list(halves.items())), list(halves.items())[::-1]):
        best = max(
            swept, key=lambda name: (figures(ranks[name], tuning)["MRR@10"], sum(figures(ranks[name], tuning).values()))
        )
        print_table(
            f"on {scored_on}, {best!r} chosen on {chosen_on}",
            {
                "chosen": figures(ranks[best], held_out),
                "hybrid (default)": figures(ranks["hybrid"], held_out),
                "vector": figures(ranks["vector"], held_out),
                "BM25": figures(ranks["BM25"], held_out),
            },
        )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("path", type=Path, help="the cmuqa_dev folder (articles/, questions.jsonl)")
    parser.add_argument("--chunk-size", type=int, default=256, help="tokens per chunk (Vertex's chunk_size)")
    parser.add_argument("--chunk-overlap", type=int, default=32)
    parser.add_argument(
        "--sweep",
        action="store_true",
        help="also other fusions, each chosen on one fold of the questions and scored on the other",
    )
    parser.add_argument("--keep", action="store_true", help=f"keep the scratch database ({BENCH_DB}) for re-runs")
    parser.add_argument(
        "--reuse",
        action="store_true",
        help="search the corpus a kept database holds, loaded the same way (implies --keep)",
    )
    args = parser.parse_args()
    questions = [json.loads(line) for line in (args.path / "questions.jsonl").read_text().splitlines() if line]
    with migrated_database(BENCH_DB, keep=args.keep, reuse=args.reuse) as reused:
        from knowledge_app.models import Chunk

        corpus_id = loaded_corpus(corpus_name(args.path, args.chunk_size, args.chunk_overlap)) if reused else None
        if corpus_id is None:
            corpus_id, seconds, chunks = ingest(args.path, args.chunk_size, args.chunk_overlap)
            rate = f"in {seconds:.1f} s ({chunks / seconds:.1f} chunks/s, one process)"
        else:
            chunks, rate = Chunk.objects.filter(corpus_id=corpus_id).count(), f"reused from {BENCH_DB}"
        print(
            f"{len(list((args.path / 'articles').glob('*.txt')))} articles -> {chunks} chunks of at most "
            f"{args.chunk_size} tokens (overlap {args.chunk_overlap}) {rate}; {len(questions)} questions",
            flush=True,
        )
        ranks, median_ms = score(corpus_id, questions, lines(args.sweep))
    report(ranks, median_ms, questions)


def lines(sweep: bool) -> dict[str, tuple[str, Any]]:
    """The lines compared: hybrid as configured, each list alone, and with ``--sweep`` other fusions: the score
    fusion's weight of meaning, and reciprocal rank fusion (the fusion before, ``vector 1 keyword 1.5 k=5``)."""
    from knowledge_app.search import FUSION, Fusion

    shown = {"hybrid": ("hybrid", FUSION), "vector": ("vector", FUSION), "BM25": ("keyword", FUSION)}
    if sweep:
        for tenths in range(1, 10):
            shown[f"hybrid scores vector={tenths / 10:g}"] = (
                "hybrid",
                Fusion(vector=tenths / 10, keyword=1 - tenths / 10),
            )
        for rrf_k, keyword in itertools.product((5, 20, 60), (1.0, 1.5, 2.0)):
            shown[f"hybrid ranks k={rrf_k} keyword×{keyword:g}"] = (
                "hybrid",
                Fusion(vector=1.0, keyword=keyword, rrf_k=rrf_k, method="ranks"),
            )
    return shown


if __name__ == "__main__":
    main()
