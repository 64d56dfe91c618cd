"""Benchmark: knowledge search at scale — 1,000,000 chunks over 1,000 corpora.

What is measured
----------------
Search of one corpus in a table holding every app's chunks: p50/p95 latency of
``knowledge_app.search.search_chunks`` (modes ``vector``, ``keyword`` and ``hybrid``; the query's
embedding is given, so no model runs and only the SQL and its round trips are timed)
and recall@10 of ``vector`` mode against exact search over the corpus's chunks.
Targets: p95 ≤ 50 ms and recall@10 ≥ 0.95 (on a 2-core machine). Then the ingestion
rate of one worker on the real path, table and index sizes, and the load phases
(COPY, each index build).

Data (synthetic, numpy, seeded)
-------------------------------
* Corpora spread uniformly over ``--apps`` apps (default 50). Chunks per corpus:
  ``10 + Multinomial(chunks - 10·corpora, p ∝ LogNormal(0, 1.5))``: at the default
  scale the median corpus holds 318 chunks, 12 hold 10,000 or more (the largest
  28,853) and those 12 hold a fifth of all chunks (printed at load).
* Documents: a corpus is cut into documents of 10–50 chunks (uniform; its last one
  holds what is left; 34,029 documents at the default scale). Documents are inserted in random order, each one's chunks
  together, as ingestion writes them: a corpus lies in document-sized runs across
  the heap. A document's ``content`` is its title and its chunks' text, so the
  documents table holds what it would (as bytes; ``status`` active).
* Vectors (384-d, unit length): ``bench.scale``'s topic model (domains → topics →
  subtopics, Zipf-like topic popularity, so popular topics are shared by many corpora
  and a filtered HNSW scan meets other corpora's chunks first). A corpus has
  ``2 + ⌊1.5·log10(count + 1)⌋`` topics with Dirichlet(1) weights; a document is about
  one of them, half its chunks about one subtopic of it, the others about any.
* Text: 150–250 words a chunk (uniform, ~1.1 KB): about a 256-token chunk, the size
  ``bench/knowledge_quality.py`` measures quality at and the ingestion part below
  cuts real documents into; the table's size follows it. 40% of the words are
  English function words (the ``english`` text search configuration drops them, as
  from real text); of the rest, one in three is one of the document topic's 50 words
  (Zipf within the topic), the others from a vocabulary of 20,000 pseudo-words (Zipf,
  so some words are common everywhere). Heading: the document's title (three topic
  words) › a section word, every four chunks a new one; ``search_text`` is heading
  and text, as ingestion writes it, so the generated ``search_vector`` and its GIN
  index have real work.

Loading: the chunks' secondary indexes (btrees, GIN, HNSW) are dropped; corpora,
documents and chunks go in by binary COPY over a raw psycopg connection (pgvector's
psycopg adapter; the foreign keys stay and are checked); the indexes are recreated
with their migration definitions (``--maintenance-work-mem``, default 4GB, and one
parallel maintenance worker), and the tables VACUUM ANALYZEd. Each phase is timed.

Queries and baselines
---------------------
Corpora are put in three groups by chunks: small (< 1,000), medium (1,000–9,999)
and large (≥ 10,000). Queries are split evenly between the groups that exist
(corpora uniform within a group), so the few large corpora, where a filtered HNSW
scan is hardest, weigh as much as the many small ones; every figure is per group
and over all queries. A query takes one of the corpus's chunks: its vector plus
noise of norm 0.5 (cos ≈ 0.89 to it) and three words of its document's topic (Zipf
within the topic), in every mode, searching that one corpus (``top_k`` 10).

* Exact baseline: the corpus's vectors as stored, top 10 by cosine with numpy
  (float64). recall@10 = |returned ∩ exact| / min(10, chunks of the corpus).
* Latency: after a warm-up of separate queries, each query runs once per mode
  (which goes first alternates), timed with ``time.perf_counter`` around
  ``search_chunks``, garbage collection off. The load average is printed with it.
* Plans: for every vector query the index the planner took (EXPLAIN), with recall
  and latency per group and index; EXPLAIN ANALYZE of both modes for the largest
  queried corpus and a small one.

Ingestion rate per worker: ``--ingest-documents`` real documents (default 20: the
first articles of ``--ingest-from``, by default the CMU/Pitt QA articles next to the
repository, ``../shared/data/rag/cmuqa_dev/articles``, each cut to its first
~``--ingest-words`` 2,000 words at a paragraph end) are added to a corpus of 256-token
chunks (overlap 32) in the loaded database and indexed by
``knowledge_app.ingestion.do_ingest`` in this process, one after another, as one
worker does, with the configured embedder (``cognizes.infra.embedders.get_embedder()``, loaded
first). Reported: documents/s and chunks/s, and the time split into parse + chunk,
embed, and the rest (claim, replacing the chunks in the 1M-row indexes, finishing).
The corpus is deleted afterwards.

The scratch database ``cognizes_bench_knowledge_scale`` (``--database``) is created on
the configured (or embedded; ``COGNIZES_VAR_DIR`` chooses where) PostgreSQL and dropped
at the end unless ``--keep``; ``--reuse`` takes an existing one of the same shape
instead of loading (and keeps it).

Diagnostics: ``--force-hnsw`` replays the vector searches of medium and large corpora
as planned and with ``enable_sort = off`` (the planner then orders by the HNSW index,
scanning iteratively past other corpora's chunks): recall@10, p50/p95 and the plans.
``--embedding-storage external`` loads with the embedding column moved out to the TOAST
table, as pgvector's type stores it unless told (a chunk's row is over PostgreSQL's 2 KB
threshold): an exact scan of a corpus then reads each vector from there, chunk by chunk.
The migrations keep it in the row (``knowledge_app`` 0005: ``main``).

    .venv/bin/python bench/knowledge_scale.py [--chunks N] [--corpora N] [--apps N] [--queries N] [--seed N]
        [--keep] [--reuse] [--maintenance-work-mem 4GB] [--ingest-from DIR] [--ingest-documents N]
        [--embedding-storage external] [--force-hnsw]
"""

from __future__ import annotations

import argparse
import hashlib
import itertools
import os
import statistics
import sys
import time
from collections import defaultdict
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any
from unittest import mock

import numpy as np
from psycopg.types.json import Jsonb

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench import scale
from bench.scale import (
    PLAN_LINES,
    HnswBuild,
    StatementLog,
    TopicModel,
    admin,
    connect,
    copy_rows,
    create_index,
    database_exists,
    draw_topics,
    embeddings,
    exact_top,
    index_definitions,
    index_taken,
    migrate,
    near,
    percentiles,
    print_notices,
    replay,
    report_phases,
    scope_topics,
    topic_model,
    zipf_weights,
)
from bench.scratch import close_django_connections, with_database
from bench.timing import no_gc

os.environ["DJANGO_SETTINGS_MODULE"] = "cognizes.settings"

from cognizes.infra import local

BENCH_DB = "cognizes_bench_knowledge_scale"
K = 10
SMALL_BELOW, LARGE_FROM = 1_000, 10_000
GROUPS = ("small", "medium", "large")
MODES = ("vector", "keyword", "hybrid")
CHUNKS, DOCUMENTS, CORPORA = "knowledge_chunks", "knowledge_documents", "knowledge_corpora"
HNSW = "chunks_embedding_hnsw"
PLAN_INDEXES = (HNSW, "chunks_by_corpus", "knowledge_chunks_corpus_id_d57d14b1", "chunks_search_vector")
"""What a vector search's plan is told apart by (the first of them the plan names)."""
BATCH = 20_000
"""Chunks generated and sent per COPY batch (whole documents)."""
CHUNK_SIZE, CHUNK_OVERLAP = 256, 32
"""Of every corpus: the synthetic chunks' length in words is about this many tokens, and ingestion cuts so."""
INGEST_APP = "kscale-ingest"
DEFAULT_INGEST_FROM = ROOT.parent / "shared" / "data" / "rag" / "cmuqa_dev" / "articles"
FUNCTION_WORDS = [
    "the",
    "of",
    "and",
    "to",
    "in",
    "a",
    "is",
    "that",
    "for",
    "it",
    "as",
    "with",
    "was",
    "on",
    "be",
    "by",
    "this",
    "are",
    "or",
    "from",
    "at",
    "which",
    "an",
    "not",
    "have",
    "has",
    "but",
    "were",
    "their",
    "its",
    "can",
    "been",
    "more",
    "these",
    "other",
    "into",
    "than",
    "only",
    "such",
    "most",
    "between",
    "he",
    "they",
    "all",
    "there",
    "when",
    "about",
]
"""Frequent English words of PostgreSQL's ``english`` stop list: in the text, not in its ``search_vector``."""

# ---------------------------------------------------------------------------
# Synthetic data
# ---------------------------------------------------------------------------


@dataclass(frozen=True)
class Shape:
    chunks: int
    corpora: int
    apps: int = 50
    seed: int = 20240601
    domains: int = 100
    topics: int = 2000
    subtopics: int = 20
    vocabulary: int = 20_000
    topic_words: int = 50
    count_sigma: float = 1.5
    topic_zipf: float = 0.7
    subtopic_weight: float = 0.6
    noise: float = 0.7
    query_noise: float = 0.5
    min_chunks: int = 10
    document_chunks: tuple[int, int] = (10, 50)
    words: tuple[int, int] = (150, 250)
    function_share: float = 0.4
    topic_share: float = 1 / 3
    """Of the words that are not function words."""
    embedding_storage: str | None = None
    """``ALTER COLUMN embedding SET STORAGE`` before loading; None: the migrations' (``main``)."""

    def tag(self) -> str:
        """What the loaded tables are, kept as the chunks table's comment so ``--reuse`` takes only the same data."""
        storage = f" embedding_storage={self.embedding_storage}" if self.embedding_storage else ""
        return (
            f"knowledge_scale chunks={self.chunks} corpora={self.corpora} apps={self.apps} seed={self.seed}" + storage
        )


@dataclass(frozen=True)
class Layout:
    """Corpus ``c`` has id ``c + 1``, document ``d`` id ``d + 1`` and chunk ``k`` id ``k + 1``, in insertion order."""

    counts: np.ndarray  # chunks per corpus
    corpus_app: np.ndarray  # app index per corpus
    document_corpus: np.ndarray
    document_topic: np.ndarray
    first: np.ndarray  # first chunk of each document, and the number of chunks at the end
    chunk_subtopic: np.ndarray

    @property
    def sizes(self) -> np.ndarray:
        return np.diff(self.first)

    def chunk_topic(self) -> np.ndarray:
        return np.repeat(self.document_topic, self.sizes)


def app_name(index: int) -> str:
    return f"kscale-{index:03d}"


def chunk_counts(shape: Shape, rng: np.random.Generator) -> np.ndarray:
    """Chunks per corpus: ``min_chunks`` each, the rest shared out in lognormal proportions."""
    shares = rng.lognormal(0.0, shape.count_sigma, size=shape.corpora)
    return shape.min_chunks + rng.multinomial(shape.chunks - shape.min_chunks * shape.corpora, shares / shares.sum())


def document_sizes(count: int, low: int, high: int, rng: np.random.Generator) -> np.ndarray:
    """``count`` chunks as documents of ``low``–``high`` chunks; the last holds what is left."""
    sizes = rng.integers(low, high + 1, size=count // low + 1)
    last = int(np.searchsorted(np.cumsum(sizes), count))
    sizes = sizes[: last + 1]
    sizes[-1] -= sizes.sum() - count
    return sizes


def layout(shape: Shape, model: TopicModel) -> Layout:
    """Who holds what; depends on the shape only, so ``--reuse`` rebuilds it to know each chunk's topic."""
    rng = np.random.default_rng(shape.seed + 1)
    counts = chunk_counts(shape, rng)
    corpus_app = rng.integers(shape.apps, size=shape.corpora)
    topics, cumulative = scope_topics(counts, model, rng)
    sizes_by_corpus = [document_sizes(int(n), *shape.document_chunks, rng) for n in counts]
    corpus = np.repeat(np.arange(shape.corpora), [len(s) for s in sizes_by_corpus])
    sizes = np.concatenate(sizes_by_corpus)
    order = rng.permutation(len(sizes))
    corpus, sizes = corpus[order], sizes[order]
    topic = draw_topics(corpus, topics, cumulative, rng)
    main = np.repeat(rng.integers(shape.subtopics, size=len(sizes)), sizes)
    subtopic = np.where(rng.random(shape.chunks) < 0.5, main, rng.integers(shape.subtopics, size=shape.chunks))
    first = np.concatenate([[0], np.cumsum(sizes)])
    return Layout(counts, corpus_app, corpus, topic, first, subtopic.astype(np.int32))


def batches(plan: Layout) -> list[tuple[int, int]]:
    """Document ranges of about ``BATCH`` chunks each."""
    bounds, start = [], 0
    while start < len(plan.document_corpus):
        stop = int(np.searchsorted(plan.first, plan.first[start] + BATCH, side="left"))
        stop = min(max(stop, start + 1), len(plan.document_corpus))
        bounds.append((start, stop))
        start = stop
    return bounds


@dataclass(frozen=True)
class Texts:
    titles: list[str]  # per document of the batch
    headings: list[str]  # per chunk
    texts: list[str]


def batch_texts(shape: Shape, model: TopicModel, plan: Layout, batch: int, documents: tuple[int, int]) -> Texts:
    """The words of a batch of documents; seeded by the batch, so the documents' and the chunks' COPY (and a
    re-run) draw the same."""
    rng = np.random.default_rng([shape.seed, 3, batch])
    d0, d1 = documents
    k0, k1 = int(plan.first[d0]), int(plan.first[d1])
    n, longest = k1 - k0, shape.words[1]
    sizes = plan.sizes[d0:d1]
    topic = np.repeat(plan.document_topic[d0:d1], sizes)
    words = model.words + FUNCTION_WORDS
    vocabulary = len(model.words)
    own = model.topic_words[
        topic[:, None], rng.choice(shape.topic_words, (n, longest), p=zipf_weights(shape.topic_words))
    ]
    common = rng.choice(vocabulary, (n, longest), p=zipf_weights(vocabulary))
    function = vocabulary + rng.choice(len(FUNCTION_WORDS), (n, longest), p=zipf_weights(len(FUNCTION_WORDS)))
    kind = rng.random((n, longest))
    chosen = np.where(
        kind < shape.function_share,
        function,
        np.where(kind < shape.function_share + (1 - shape.function_share) * shape.topic_share, own, common),
    ).tolist()
    lengths = rng.integers(shape.words[0], longest + 1, size=n).tolist()
    texts = [" ".join([words[w] for w in row[:length]]) for row, length in zip(chosen, lengths, strict=True)]
    document_topics = plan.document_topic[d0:d1]
    title_words = model.topic_words[document_topics[:, None], rng.choice(shape.topic_words, (d1 - d0, 3))].tolist()
    titles = [" ".join(words[w].capitalize() for w in row) for row in title_words]
    section = model.topic_words[topic, rng.integers(shape.topic_words, size=n)]
    ordinal = np.arange(n) - np.repeat(plan.first[d0:d1] - k0, sizes)
    section = section[np.arange(n) - ordinal % 4].tolist()  # a new section every four chunks
    document = np.repeat(np.arange(d1 - d0), sizes).tolist()
    headings = [f"{titles[d]} › {words[w].capitalize()}" for d, w in zip(document, section, strict=True)]
    return Texts(titles, headings, texts)


CORPUS_COLUMNS = [
    ("id", "int8"),
    ("app_name", "varchar"),
    ("display_name", "varchar"),
    ("description", "text"),
    ("chunk_size", "int4"),
    ("chunk_overlap", "int4"),
    ("created_at", "timestamptz"),
    ("updated_at", "timestamptz"),
]
DOCUMENT_COLUMNS = [
    ("id", "int8"),
    ("corpus_id", "int8"),
    ("app_name", "varchar"),
    ("display_name", "varchar"),
    ("source_uri", "varchar"),
    ("mime_type", "varchar"),
    ("size_bytes", "int8"),
    ("content_hash", "varchar"),
    ("content", "bytea"),
    ("status", "varchar"),
    ("error", "text"),
    ("chunk_count", "int4"),
    ("attempts", "int4"),
    ("lease_until", "timestamptz"),
    ("created_at", "timestamptz"),
    ("updated_at", "timestamptz"),
    ("indexed_at", "timestamptz"),
    ("description", "text"),
    ("metadata", "jsonb"),
    ("progress", "int2"),
]
CHUNK_COLUMNS = [
    ("id", "int8"),
    ("document_id", "int8"),
    ("corpus_id", "int8"),
    ("app_name", "varchar"),
    ("ordinal", "int4"),
    ("text", "text"),
    ("heading", "text"),
    ("start", "int4"),
    ("end", "int4"),
    ("search_text", "text"),
    ("embedding", "vector"),
]
SEPARATOR = "\n\n"


def document_text(title: str, texts: Sequence[str]) -> str:
    return f"# {title}{SEPARATOR}" + SEPARATOR.join(texts)


def corpus_rows(shape: Shape, plan: Layout) -> Iterator[list[tuple[Any, ...]]]:
    now = datetime.now(UTC)
    yield [
        (c + 1, app_name(int(a)), f"corpus {c + 1:04d}", "", CHUNK_SIZE, CHUNK_OVERLAP, now, now)
        for c, a in enumerate(plan.corpus_app.tolist())
    ]


def document_rows(shape: Shape, model: TopicModel, plan: Layout) -> Iterator[list[tuple[Any, ...]]]:
    now = datetime.now(UTC)
    for b, (d0, d1) in enumerate(batches(plan)):
        words = batch_texts(shape, model, plan, b, (d0, d1))
        rows, k = [], 0
        for d, title in zip(range(d0, d1), words.titles, strict=True):
            size = int(plan.first[d + 1] - plan.first[d])
            content = document_text(title, words.texts[k : k + size]).encode()
            k += size
            corpus = int(plan.document_corpus[d])
            rows.append(
                (
                    d + 1,
                    corpus + 1,
                    app_name(int(plan.corpus_app[corpus])),
                    title,
                    title.lower().replace(" ", "-") + ".md",
                    "text/markdown",
                    len(content),
                    hashlib.sha256(content).hexdigest(),
                    content,
                    "active",
                    "",
                    size,
                    1,
                    None,
                    now,
                    now,
                    now,
                    "",
                    Jsonb({}),
                    100,
                )
            )
        yield rows


def chunk_rows(shape: Shape, model: TopicModel, plan: Layout) -> Iterator[list[tuple[Any, ...]]]:
    for b, (d0, d1) in enumerate(batches(plan)):
        words = batch_texts(shape, model, plan, b, (d0, d1))
        k0, k1 = int(plan.first[d0]), int(plan.first[d1])
        topic = np.repeat(plan.document_topic[d0:d1], plan.sizes[d0:d1])
        vectors = embeddings(model, shape, topic, plan.chunk_subtopic[k0:k1], np.random.default_rng([shape.seed, 4, b]))
        rows, k = [], 0
        for d, title in zip(range(d0, d1), words.titles, strict=True):
            corpus = int(plan.document_corpus[d])
            app = app_name(int(plan.corpus_app[corpus]))
            start = len(f"# {title}{SEPARATOR}")
            for ordinal in range(int(plan.first[d + 1] - plan.first[d])):
                text, heading = words.texts[k], words.headings[k]
                rows.append(
                    (
                        k0 + k + 1,
                        d + 1,
                        corpus + 1,
                        app,
                        ordinal,
                        text,
                        heading,
                        start,
                        start + len(text),
                        f"{heading}\n{text}",
                        vectors[k],
                    )
                )
                start += len(text) + len(SEPARATOR)
                k += 1
        yield rows


# ---------------------------------------------------------------------------
# Database
# ---------------------------------------------------------------------------


def migrated_hnsw_build() -> HnswBuild:
    from knowledge_app.models import Chunk

    return HnswBuild.migrated(Chunk, HNSW)


def loaded_shape_matches(url: str, shape: Shape, indexes: Sequence[str]) -> bool:
    """The database holds exactly this shape's chunks, indexed."""
    with connect(url) as conn:
        comment = conn.execute(f"SELECT obj_description('{CHUNKS}'::regclass, 'pg_class')").fetchone()[0]
        if comment != shape.tag():
            return False
        rows = conn.execute(f"SELECT count(*) FROM {CHUNKS}").fetchone()[0]
        present = set(index_definitions(conn, CHUNKS))
    return rows == shape.chunks and set(indexes) <= present


def load(url: str, shape: Shape, memory: str) -> dict[str, float]:
    """Generate and load corpora, documents and chunks; returns seconds per phase."""
    timings: dict[str, float] = {}
    model = topic_model(shape)
    plan = layout(shape, model)
    describe_counts(plan)
    with connect(url) as conn:
        print_notices(conn)
        definitions = index_definitions(conn, CHUNKS)
        for name in definitions:
            conn.execute(f"DROP INDEX {name}")
        conn.execute(f"TRUNCATE {CORPORA} CASCADE")
        if shape.embedding_storage:
            conn.execute(f"ALTER TABLE {CHUNKS} ALTER COLUMN embedding SET STORAGE {shape.embedding_storage}")
        print(
            f"loading {shape.corpora:,} corpora, {len(plan.document_corpus):,} documents and "
            f"{shape.chunks:,} chunks by binary COPY",
            flush=True,
        )
        copy_rows(conn, CORPORA, CORPUS_COLUMNS, corpus_rows(shape, plan), shape.corpora, timings)
        copy_rows(
            conn, DOCUMENTS, DOCUMENT_COLUMNS, document_rows(shape, model, plan), len(plan.document_corpus), timings
        )
        copy_rows(conn, CHUNKS, CHUNK_COLUMNS, chunk_rows(shape, model, plan), shape.chunks, timings)
        for table in (CORPORA, DOCUMENTS, CHUNKS):  # the loaded ids were given: what the ORM inserts comes after
            conn.execute(f"SELECT setval(pg_get_serial_sequence('{table}', 'id'), (SELECT max(id) FROM {table}))")
        for name, definition in definitions.items():
            create_index(conn, url, name, definition, timings, memory)
        print("VACUUM ANALYZE", flush=True)
        began = time.perf_counter()
        for table in (CORPORA, DOCUMENTS, CHUNKS):
            conn.execute(f"VACUUM (ANALYZE) {table}")
        timings["vacuum analyze"] = time.perf_counter() - began
        conn.execute(f"COMMENT ON TABLE {CHUNKS} IS '{shape.tag()}'")
    return timings


def describe_counts(plan: Layout) -> None:
    counts = plan.counts
    ordered = np.sort(counts)
    large = counts >= LARGE_FROM
    sizes = plan.sizes
    print(
        f"chunks per corpus: min {ordered[0]}, median {int(np.median(ordered))}, mean {counts.mean():.0f}, "
        f"p90 {int(np.percentile(ordered, 90))}, p99 {int(np.percentile(ordered, 99))}, max {ordered[-1]:,}; "
        f"{large.sum()} corpora with ≥ {LARGE_FROM:,} hold {counts[large].sum() / counts.sum():.0%}; "
        f"corpora by group: "
        + ", ".join(f"{g} {sum(group_of(int(n)) == g for n in counts)}" for g in GROUPS)
        + f"; {len(sizes):,} documents of {sizes.min()}–{sizes.max()} chunks (mean {sizes.mean():.1f})",
        flush=True,
    )


def sizes(url: str) -> tuple[list[tuple[str, int, int, int, int]], list[tuple[str, str, int]]]:
    """Per table: heap, TOAST (and maps), indexes, total bytes; per index: its table and bytes."""
    with connect(url) as conn:
        tables = conn.execute(
            "SELECT relname, pg_relation_size(oid), pg_table_size(oid) - pg_relation_size(oid),"
            " pg_indexes_size(oid), pg_total_relation_size(oid)"
            " FROM pg_class WHERE relname = ANY(%s) ORDER BY pg_total_relation_size(oid) DESC",
            [[CHUNKS, DOCUMENTS, CORPORA]],
        ).fetchall()
        indexes = conn.execute(
            "SELECT i.indexrelid::regclass::text, t.relname, pg_relation_size(i.indexrelid) FROM pg_index i"
            " JOIN pg_class t ON t.oid = i.indrelid WHERE t.relname = ANY(%s)"
            " ORDER BY pg_relation_size(i.indexrelid) DESC",
            [[CHUNKS, DOCUMENTS, CORPORA]],
        ).fetchall()
    return tables, indexes


def mb(size: int) -> str:
    return f"{size / 2**20:,.1f} MB"


def report_sizes(url: str, chunks: int) -> None:
    tables, indexes = sizes(url)
    header = f"{'table':<22}{'heap':>12}{'TOAST etc.':>12}{'indexes':>12}{'total':>12}"
    print("\nsizes:\n" + header + "\n" + "-" * len(header))
    for name, heap, toast, index, total in tables:
        print(f"{name:<22}{mb(heap):>12}{mb(toast):>12}{mb(index):>12}{mb(total):>12}")
    total = sum(row[4] for row in tables)
    print(f"{'all':<22}{'':>36}{mb(total):>12}  ({total / chunks:,.0f} bytes per chunk)")
    for name, table, size in indexes:
        print(f"  {name:<46}{table:<22}{mb(size):>12}")


# ---------------------------------------------------------------------------
# Queries and exact baseline
# ---------------------------------------------------------------------------


@dataclass
class Query:
    corpus: int
    app: str
    group: str
    size: int
    vector: np.ndarray
    text: str
    exact: set[int]
    expected: int  # min(K, chunks of the corpus)


def group_of(count: int) -> str:
    return "small" if count < SMALL_BELOW else "large" if count >= LARGE_FROM else "medium"


def corpus_counts(conn: Any) -> dict[int, tuple[str, int]]:
    """Per loaded corpus: its app and chunks (the ingestion corpus, if one was left, is not among them)."""
    return {
        corpus: (app, n)
        for corpus, app, n in conn.execute(
            f"SELECT corpus_id, app_name, count(*) FROM {CHUNKS} WHERE app_name <> %s GROUP BY corpus_id, app_name",
            [INGEST_APP],
        ).fetchall()
    }


def make_queries(url: str, shape: Shape, count: int, rng: np.random.Generator) -> list[Query]:
    """``count`` queries, split evenly over the corpus groups present, with their exact top 10.

    Each corpus's vectors are fetched once, for all its queries, and let go.
    """
    model = topic_model(shape)
    chunk_topic = layout(shape, model).chunk_topic()
    word_weights = zipf_weights(shape.topic_words)
    with connect(url) as conn:
        counts = corpus_counts(conn)
        by_group: dict[str, list[int]] = defaultdict(list)
        for corpus, (_, n) in sorted(counts.items()):
            by_group[group_of(n)].append(corpus)
        present = [g for g in GROUPS if by_group[g]]
        picks: dict[int, list[int]] = defaultdict(list)  # corpus → the places of its queries
        for i in range(count):
            group = by_group[present[i % len(present)]]
            picks[group[rng.integers(len(group))]].append(i)
        queries: list[Query | None] = [None] * count
        for corpus, places in sorted(picks.items()):
            app, n = counts[corpus]
            rows = conn.execute(
                f"SELECT id, embedding FROM {CHUNKS} WHERE app_name = %s AND corpus_id = %s ORDER BY id", [app, corpus]
            ).fetchall()
            ids = [r[0] for r in rows]
            vectors = np.stack([r[1].to_numpy() for r in rows]).astype(np.float32)
            for i in places:
                source = int(rng.integers(len(ids)))
                vector = near(vectors[source], shape.query_noise, rng)
                topic = chunk_topic[ids[source] - 1]
                words = model.topic_words[topic, rng.choice(shape.topic_words, 3, p=word_weights)]
                text = " ".join(model.words[w] for w in words)
                queries[i] = Query(
                    corpus, app, group_of(n), n, vector, text, exact_top(ids, vectors, vector, K), min(K, n)
                )
    return [q for q in queries if q is not None]


# ---------------------------------------------------------------------------
# Measurement
# ---------------------------------------------------------------------------


@dataclass
class Measurement:
    """Per query (in ``queries`` order): latency of each mode, recall@10 of vector mode, and the statements
    each mode ran (SET LOCALs, the count, then the search) for EXPLAIN."""

    latency_ms: dict[str, list[float]] = field(default_factory=lambda: {mode: [] for mode in MODES})
    recall: list[float] = field(default_factory=list)
    statements: dict[str, list[list[tuple[str, Any]]]] = field(default_factory=lambda: {mode: [] for mode in MODES})


def search(query: Query, mode: str) -> list[Any]:
    from knowledge_app.search import search_chunks

    return search_chunks(
        app_name=query.app, corpus_ids=[query.corpus], query=query.text, top_k=K, mode=mode, embedding=query.vector
    )


def measure(queries: list[Query], warmup: list[Query]) -> Measurement:
    from django.db import connection

    for query in warmup:
        for mode in MODES:
            search(query, mode)
    result = Measurement()
    with no_gc():
        for i, query in enumerate(queries):
            for mode in MODES if i % 2 == 0 else MODES[::-1]:
                log = StatementLog()
                with connection.execute_wrapper(log):
                    began = time.perf_counter()
                    hits = search(query, mode)
                    result.latency_ms[mode].append((time.perf_counter() - began) * 1000)
                result.statements[mode].append(log.statements)
                if mode == "vector":
                    result.recall.append(len({hit.chunk_id for hit in hits[:K]} & query.exact) / query.expected)
    return result


def report_plans(queries: list[Query], measurement: Measurement) -> None:
    """Per group and index taken: how many vector searches, their recall@10 and latency."""
    plans = [index_taken(statements, PLAN_INDEXES) for statements in measurement.statements["vector"]]
    print("\nvector searches by the index the planner took:")
    for group in GROUPS:
        for index in sorted({p for p, q in zip(plans, queries, strict=True) if q.group == group}):
            chosen = [i for i, (p, q) in enumerate(zip(plans, queries, strict=True)) if q.group == group and p == index]
            p50, p95 = percentiles([measurement.latency_ms["vector"][i] for i in chosen])
            found = statistics.fmean(measurement.recall[i] for i in chosen)
            print(
                f"  {group:<7}{index:<36}×{len(chosen):<5}recall@10 {found:.3f}  p50 {p50:6.1f} ms  p95 {p95:6.1f} ms"
            )


def explain_examples(queries: list[Query], measurement: Measurement) -> None:
    """EXPLAIN ANALYZE of every mode's searches of the largest queried corpus and of a small one."""
    by_corpus = {q.corpus: i for i, q in enumerate(queries)}
    ordered = sorted(by_corpus, key=lambda c: queries[by_corpus[c]].size)
    for corpus in dict.fromkeys([ordered[-1], ordered[len(ordered) // 4]]):
        i = by_corpus[corpus]
        for mode in MODES:
            _, rows = replay(measurement.statements[mode][i], {}, "EXPLAIN (ANALYZE, COSTS OFF) ")
            print(f"EXPLAIN ANALYZE {mode} search of corpus {corpus} ({queries[i].size:,} chunks, {queries[i].group}):")
            lines = [line for (line,) in rows]
            for before, line in itertools.pairwise(["", *lines]):
                if any(
                    word in line for word in (*PLAN_LINES, "Function Scan on unnest t")
                ) or before.lstrip().startswith("CTE "):
                    print(f"  {line.strip()[:150]}")


FORCE_HNSW = {"enable_sort": "off"}
"""With sorting priced out, the planner orders by the HNSW index (scanning on past other corpora's chunks)."""
FORCED_GROUPS = ("medium", "large")
"""A forced HNSW scan of a small corpus wades through ``hnsw.max_scan_tuples`` rows: a plan no planner takes."""


def force_hnsw(queries: list[Query], measurement: Measurement) -> None:
    """recall@10 and p50/p95 of medium and large corpora's vector searches replayed as planned and with the
    HNSW index forced, and the index each replay's plan takes."""
    chosen = [
        (q, s) for q, s in zip(queries, measurement.statements["vector"], strict=True) if q.group in FORCED_GROUPS
    ]
    if not chosen:
        return
    header = f"{'replayed':<34}{'group':<8}{'plans':<40}{'recall@10':>10}{'p50 ms':>9}{'p95 ms':>9}"
    print("\nvector searches replayed (recall target ≥ 0.95, p95 ≤ 50 ms):\n" + header + "\n" + "-" * len(header))
    for label, overrides in (("as planned", {}), ("HNSW forced (enable_sort=off)", FORCE_HNSW)):
        found: dict[str, list[float]] = defaultdict(list)
        elapsed: dict[str, list[float]] = defaultdict(list)
        plans: dict[str, list[str]] = defaultdict(list)
        with no_gc():
            for query, statements in chosen:
                ms, rows = replay(statements, overrides)
                found[query.group].append(len({row[0] for row in rows[:K]} & query.exact) / query.expected)
                elapsed[query.group].append(ms)
        for query, statements in chosen:
            plans[query.group].append(index_taken(statements, PLAN_INDEXES, overrides))
        for group in [g for g in FORCED_GROUPS if g in found]:
            taken = ", ".join(f"{name} ×{plans[group].count(name)}" for name in sorted(set(plans[group])))
            print(
                f"{label:<34}{group:<8}{taken:<40}{statistics.fmean(found[group]):>10.3f}"
                + "".join(f"{v:>9.1f}" for v in percentiles(elapsed[group]))
            )


def report(measurement: Measurement, queries: list[Query]) -> None:
    scale.report(
        measurement.recall,
        measurement.latency_ms,
        queries,
        groups=GROUPS,
        scope=lambda q: f"corpus {q.corpus}",
        scopes="corpora",
    )


# ---------------------------------------------------------------------------
# Ingestion rate per worker
# ---------------------------------------------------------------------------


def real_documents(folder: Path, count: int, words: int) -> list[tuple[str, str]]:
    """``count`` (name, text) of the folder's ``.txt`` files with at least ``words`` words, by name, each cut at
    the first paragraph end past ``words`` words."""
    chosen = []
    for path in sorted(folder.glob("*.txt")):
        paragraphs = path.read_text(encoding="utf-8").split("\n\n")
        kept, total = [], 0
        for paragraph in paragraphs:
            if total >= words:
                break
            kept.append(paragraph)
            total += len(paragraph.split())
        if total >= words:
            chosen.append((path.name, "\n\n".join(kept)))
        if len(chosen) == count:
            break
    return chosen


class Stopwatch:
    """Seconds spent in wrapped callables, by label."""

    def __init__(self) -> None:
        self.seconds: dict[str, float] = defaultdict(float)

    def wrap(self, label: str, function: Callable[..., Any]) -> Callable[..., Any]:
        def timed(*args: Any, **kwargs: Any) -> Any:
            began = time.perf_counter()
            try:
                return function(*args, **kwargs)
            finally:
                self.seconds[label] += time.perf_counter() - began

        return timed


class TimedEmbedder:
    """The embedder in use, its ``embed_documents`` timed."""

    def __init__(self, embedder: Any, watch: Stopwatch) -> None:
        self._embedder = embedder
        self.embed_documents = watch.wrap("embed", embedder.embed_documents)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._embedder, name)


def ingest(folder: Path, count: int, words: int) -> None:
    """Index real documents one after another on the real path, as one worker does; print the rate and split."""
    from cognizes.infra.embedders import get_embedder
    from knowledge_app import ingestion
    from knowledge_app.models import Chunk, Document
    from knowledge_app.services import do_create_corpus, do_delete_corpus

    documents = real_documents(folder, count, words) if folder.is_dir() else []
    if not documents:
        print(f"\ningestion not measured: no .txt documents of {words}+ words in {folder} (--ingest-from)")
        return
    began = time.perf_counter()
    embedder = get_embedder()
    embedder.embed_documents(["warm-up"])
    loaded = time.perf_counter() - began
    corpus = do_create_corpus(
        app_name=INGEST_APP, display_name="ingestion rate", chunk_size=CHUNK_SIZE, chunk_overlap=CHUNK_OVERLAP
    )
    watch, total, outcomes = Stopwatch(), 0.0, []
    try:
        with (
            mock.patch.object(ingestion, "parse", watch.wrap("parse + chunk", ingestion.parse)),
            mock.patch.object(ingestion, "chunk", watch.wrap("parse + chunk", ingestion.chunk)),
            mock.patch.object(ingestion, "get_embedder", lambda: TimedEmbedder(embedder, watch)),
        ):
            for name, text in documents:
                data = text.encode()
                document = Document.objects.create(
                    corpus=corpus,
                    app_name=INGEST_APP,
                    display_name=name,
                    source_uri=name,
                    mime_type="text/plain",
                    size_bytes=len(data),
                    content_hash=hashlib.sha256(data).hexdigest(),
                    content=data,
                )
                started = time.perf_counter()
                outcomes.append(ingestion.do_ingest(document.id))
                total += time.perf_counter() - started
        chunks = Chunk.objects.filter(corpus=corpus).count()
    finally:
        do_delete_corpus(corpus)
    failed = [o for o in outcomes if not o.endswith(" chunks")]
    n_words = sum(len(text.split()) for _, text in documents)
    threads = os.environ.get("COGNIZES_EMBEDDER_THREADS") or "the library's default"
    print(
        f"\ningestion, one worker (this process; embedder {embedder.id}, threads: {threads}, {os.cpu_count()} CPUs;"
        f" loaded in {loaded:.2f} s, not counted):"
    )
    print(
        f"  {len(documents)} documents of {folder} ({n_words:,} words, ~{n_words // len(documents):,} each) →"
        f" {chunks} chunks of ≤ {CHUNK_SIZE} tokens (overlap {CHUNK_OVERLAP}) in {total:.1f} s"
        + (f"; not indexed: {failed}" if failed else "")
    )
    print(f"  {len(documents) / total:.2f} documents/s, {chunks / total:.2f} chunks/s per worker")
    other = total - sum(watch.seconds.values())
    for label, seconds in [*watch.seconds.items(), ("claim, write chunks + indexes, finish", other)]:
        print(
            f"  {label:<40}{seconds:>8.1f} s  {seconds / total:>5.0%}  ({seconds / max(chunks, 1) * 1000:,.1f} ms"
            " a chunk)"
        )


# ---------------------------------------------------------------------------
# Main
# ---------------------------------------------------------------------------


def prepare_database(server_url: str, database: str, shape: Shape, reuse: bool, memory: str) -> dict[str, float]:
    """Create, migrate and load the scratch database, or reuse it; returns the seconds of what was done."""
    url = with_database(server_url, database)
    if (
        reuse
        and database_exists(server_url, database)
        and loaded_shape_matches(url, shape, [HNSW, "chunks_by_corpus", "chunks_search_vector"])
    ):
        print(f"reusing {database} ({shape.tag()})", flush=True)
        return {}
    admin(server_url, f'DROP DATABASE IF EXISTS "{database}" WITH (FORCE)')
    admin(server_url, f'CREATE DATABASE "{database}"')
    migrate()
    return load(url, shape, memory)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--chunks", type=int, default=1_000_000)
    parser.add_argument("--corpora", type=int, default=1_000)
    parser.add_argument("--apps", type=int, default=50, help="apps the corpora are spread over (default 50)")
    parser.add_argument("--queries", type=int, default=600)
    parser.add_argument("--warmup", type=int, default=100, help="untimed queries first (default 100)")
    parser.add_argument("--seed", type=int, default=Shape.seed)
    parser.add_argument("--database", default=BENCH_DB, help=f"scratch database (default {BENCH_DB})")
    parser.add_argument("--keep", action="store_true", help="keep the database for re-runs")
    parser.add_argument("--reuse", action="store_true", help="use an existing database of this shape (implies --keep)")
    parser.add_argument(
        "--maintenance-work-mem",
        default="4GB",
        help="for the index builds (default 4GB, room for the HNSW graph of 1M chunks; "
        "pgvector prints a notice when the graph outgrows it)",
    )
    parser.add_argument(
        "--embedding-storage",
        choices=["external", "main", "plain"],
        default=None,
        help="load with the chunks' embedding column stored so (default: the migrations', main)",
    )
    parser.add_argument(
        "--force-hnsw",
        action="store_true",
        help="also replay medium and large corpora's vector searches with the HNSW index forced",
    )
    parser.add_argument(
        "--ingest-from",
        type=Path,
        default=DEFAULT_INGEST_FROM,
        help="folder of .txt documents for the ingestion rate (default: the CMU/Pitt QA articles)",
    )
    parser.add_argument("--ingest-documents", type=int, default=20, help="documents ingested (default 20; 0: none)")
    parser.add_argument("--ingest-words", type=int, default=2000, help="words per ingested document (default 2000)")
    args = parser.parse_args()
    shape = Shape(
        chunks=args.chunks,
        corpora=args.corpora,
        apps=args.apps,
        seed=args.seed,
        embedding_storage=args.embedding_storage,
    )

    server_url = local.database_url()
    url = with_database(server_url, args.database)
    # Before Django is set up, so its one connection setting names the scratch database.
    os.environ["DATABASE_URL"] = url
    keep = args.keep or args.reuse
    try:
        import django

        django.setup()
        timings = prepare_database(server_url, args.database, shape, args.reuse, args.maintenance_work_mem)
        with connect(url) as conn:
            print(
                f"HNSW index: {HnswBuild.of(index_definitions(conn, CHUNKS, [HNSW])[HNSW])} "
                f"(the migration's: {migrated_hnsw_build()})",
                flush=True,
            )
        rng = np.random.default_rng(shape.seed + 2)
        began = time.perf_counter()
        queries = make_queries(url, shape, args.queries + args.warmup, rng)
        warmup, queries = queries[: args.warmup], queries[args.warmup :]
        print(
            f"{len(queries)} queries (+{len(warmup)} warm-up) with exact top {K}: {time.perf_counter() - began:.1f} s",
            flush=True,
        )
        before = os.getloadavg()[0]
        measurement = measure(queries, warmup)
        print(
            f"load average (1 min) before/after timing: {before:.1f}/{os.getloadavg()[0]:.1f} on {os.cpu_count()} CPUs"
        )
        report_plans(queries, measurement)
        explain_examples(queries, measurement)
        if timings:
            report_phases(timings)
            index_seconds = {k.removeprefix("index "): v for k, v in timings.items() if k.startswith("index ")}
            print(
                f"  HNSW build rate: {shape.chunks / index_seconds[HNSW]:,.0f} chunks/s; COPY of chunks: "
                f"{shape.chunks / timings[f'copy {CHUNKS}']:,.0f} chunks/s"
            )
        report_sizes(url, shape.chunks)
        report(measurement, queries)
        if args.force_hnsw:
            force_hnsw(queries, measurement)
        if args.ingest_documents:
            ingest(args.ingest_from, args.ingest_documents, args.ingest_words)
    finally:
        close_django_connections()
        if keep:
            print(f"\nkept database {args.database}")
        else:
            admin(server_url, f'DROP DATABASE IF EXISTS "{args.database}" WITH (FORCE)')


if __name__ == "__main__":
    main()
