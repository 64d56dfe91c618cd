"""Benchmark: memory search at scale — 1,000,000 memories over 10,000 users.

What is measured
----------------
Search for one user's scope in a table holding everyone's memories: p50/p95
latency of ``memory_app.search.search_memories`` (modes ``vector`` and
``hybrid``; the query's embedding is given, so no model runs and only the SQL
and its round trips are timed) and recall@10 of ``vector`` mode against exact
search. Targets: recall@10 ≥ 0.95 and p95 ≤ 50 ms (on a 2-core machine).

Data (synthetic, numpy, seeded)
-------------------------------
* Users' memory counts: ``1 + Multinomial(memories - users, p ∝ LogNormal(0, 1.5))``,
  i.e. lognormal shares (σ = 1.5) with a floor of one memory. At the default
  scale the median user has 33 memories, 1% of users have 1,000 or more (the
  largest ~14,000), and they hold a fifth of all memories.
* Vectors (384-d, unit length): 100 domains → 2,000 topics (centre = domain +
  own direction, so topics of a domain are related, cos ≈ 0.5) → 20 subtopics
  per topic; memory = centre + 0.6·subtopic + isotropic noise of norm 0.7.
  Cosine ≈ 0.73 within a subtopic, ≈ 0.54 within a topic, ≈ 0.27 within a
  domain, ≈ 0 otherwise. Topic popularity is Zipf-like (rank^-0.7), so popular
  topics are shared by many users and crowd the neighbourhood of a query with
  other users' memories — the hard case for a filtered HNSW scan.
  Each user has ``2 + ⌊1.5·log10(count + 1)⌋`` topics with Dirichlet(1) weights.
* Text: a vocabulary of 4,000 pseudo-words (three consonant-vowel syllables);
  each topic has 30 words of its own (Zipf within the topic). A memory has
  6–14 words, each a topic word with probability ½, else a word of the whole
  vocabulary (Zipf, so some words are common everywhere). ``search_text`` is
  the text, so the generated ``search_vector`` and its GIN index have work.
  A tenth of the topic words after the first are capitalised, names to
  ``memory_app.names``; ``event_time`` is the creation time.
* 5% of memories are ``superseded`` (outside every scope); rows are inserted
  in random order, so one user's memories are spread over the whole heap.

Loading: the secondary indexes (scope btree, GIN, HNSW) are dropped, rows go
in by binary COPY over a raw psycopg connection (pgvector's psycopg adapter),
then the indexes are recreated with their migration definitions
(``maintenance_work_mem = 2GB``, one parallel maintenance worker) and the table
is VACUUM ANALYZEd. Each phase is timed.

Queries and baselines
---------------------
Users are put in three groups by active memories: light (< 100), medium
(100–999) and heavy (≥ 1,000). Queries are split evenly between the groups
that exist (users uniform within a group), so heavy users — few, but where a
filtered HNSW scan is hardest — weigh as much as light ones; every figure is
reported per group and over all queries. A query takes one of the user's
memories: its vector plus noise of norm 0.5 (cos ≈ 0.89 to it) and three words
of its topic. In ``hybrid`` mode the second word is capitalised (a name) and
"last month" is added, so every rank list search has (vector, keyword, names,
time) runs; ``vector`` mode keeps the plain words, so its recall is the index's.

* Exact baseline: the user's active vectors are fetched once and the top 10 by
  cosine distance computed with numpy (float64). recall@10 = |returned ∩
  exact| / min(10, active memories of the user).
* Latency: after a warm-up of separate queries, each query runs once per mode
  (which mode goes first alternates), timed with ``time.perf_counter`` around
  ``search_memories`` (``reinforce=False``), garbage collection off. The load
  average is printed with it: on a shared 2-core machine it matters.
* Plans: for every vector query, the index the planner took (EXPLAIN), with
  recall and latency per group and index; EXPLAIN ANALYZE of the heaviest
  queried user's search and of a light user's.

Diagnostics (options)
---------------------
* ``--ef-search 40,100,…``: the statements ``search_memories`` ran for the
  vector queries (caught with Django's ``execute_wrapper``) are replayed with
  ``hnsw.ef_search`` (and ``--max-scan-tuples``) changed — what a setting change
  would give, without editing ``memory_app/search.py``. With ``--force-hnsw``,
  heavy users' statements are replayed with ``enable_sort = off`` (the planner
  then orders by the HNSW index), plus once as an exact scan for comparison.
* ``--graph-check N``: unfiltered HNSW recall@10 over the whole table against a
  sequential scan — how navigable the graph is on this data at all.
* ``--hnsw-m`` / ``--hnsw-ef-construction``: build the HNSW index with other
  parameters than the migration's (with ``--reuse``, only the index is rebuilt).

The scratch database ``cognizes_bench_scale`` (``--database``) is created on the
configured (or embedded) PostgreSQL and dropped at the end unless ``--keep``;
``--reuse`` takes an existing one of the same shape instead of loading (and
keeps it).

    .venv/bin/python bench/memory_scale.py [--memories N] [--users N] [--queries N] [--keep] [--reuse]
        [--ef-search 40,100,400 [--force-hnsw] [--max-scan-tuples N]] [--graph-check N]
        [--hnsw-m M --hnsw-ef-construction EF [--maintenance-work-mem 4GB]]
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
import uuid
from collections import defaultdict
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import numpy as np

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
from memory_app.names import names

BENCH_DB = "cognizes_bench_scale"
APP = "scale_bench"
K = 10
LIGHT_BELOW, HEAVY_FROM = 100, 1000
GROUPS = ("light", "medium", "heavy")
MODES = ("vector", "hybrid")
HNSW = "memories_embedding_hnsw"
SECONDARY_INDEXES = ("memories_by_scope_names", "memories_search_vector", HNSW)
CHUNK = 50_000
NAMED = 0.1
"""Share of a memory's topic words written capitalised: names (memory_app.names), so a query's name matches some."""

# ---------------------------------------------------------------------------
# Synthetic data
# ---------------------------------------------------------------------------


@dataclass(frozen=True)
class Shape:
    memories: int
    users: int
    seed: int = 20240601
    domains: int = 100
    topics: int = 2000
    subtopics: int = 20
    vocabulary: int = 4000
    topic_words: int = 30
    count_sigma: float = 1.5
    topic_zipf: float = 0.7
    subtopic_weight: float = 0.6
    noise: float = 0.7
    query_noise: float = 0.5
    superseded: float = 0.05

    def tag(self) -> str:
        """What the loaded table is, kept as its comment so ``--reuse`` takes only the same data."""
        return f"memory_scale memories={self.memories} users={self.users} seed={self.seed} named={NAMED}"


def memory_counts(shape: Shape, rng: np.random.Generator) -> np.ndarray:
    """Memories per user: one each, the rest shared out in lognormal proportions."""
    shares = rng.lognormal(0.0, shape.count_sigma, size=shape.users)
    return 1 + rng.multinomial(shape.memories - shape.users, shares / shares.sum())


@dataclass(frozen=True)
class Layout:
    """Who owns each memory (in insertion order) and which topic and subtopic it is about."""

    counts: np.ndarray
    user: np.ndarray
    topic: np.ndarray
    subtopic: np.ndarray


def layout(shape: Shape, model: TopicModel, rng: np.random.Generator) -> Layout:
    counts = memory_counts(shape, rng)
    user_topics, cumulative = scope_topics(counts, model, rng)
    user = rng.permutation(np.repeat(np.arange(shape.users, dtype=np.int32), counts))
    topic = draw_topics(user, user_topics, cumulative, rng)
    subtopic = rng.integers(shape.subtopics, size=len(user), dtype=np.int32)
    return Layout(counts, user, topic, subtopic)


def texts(model: TopicModel, shape: Shape, topic: np.ndarray, rng: np.random.Generator) -> list[str]:
    n = len(topic)
    longest = 14
    lengths = rng.integers(6, longest + 1, size=n)
    own = model.topic_words[
        topic[:, None], rng.choice(shape.topic_words, (n, longest), p=zipf_weights(shape.topic_words))
    ]
    common = rng.choice(shape.vocabulary, (n, longest), p=zipf_weights(shape.vocabulary))
    is_own = rng.random((n, longest)) < 0.5
    chosen = np.where(is_own, own, common).tolist()
    named = (is_own & (rng.random((n, longest)) < NAMED)).tolist()
    return [
        sentence(model.words, row[:length], flags[:length])
        for row, flags, length in zip(chosen, named, lengths.tolist(), strict=True)
    ]


def sentence(words: list[str], chosen: list[int], named: list[bool]) -> str:
    """The words, those ``named`` capitalised (a name, after the first word)."""
    return " ".join(
        words[w].capitalize() if name and i else words[w] for i, (w, name) in enumerate(zip(chosen, named, strict=True))
    )


def user_id(index: int) -> str:
    return f"user-{index:05d}"


# ---------------------------------------------------------------------------
# Database
# ---------------------------------------------------------------------------


def loaded_shape_matches(url: str, shape: Shape) -> bool:
    """The database holds exactly this shape's rows, indexed."""
    with connect(url) as conn:
        comment = conn.execute("SELECT obj_description('memories'::regclass, 'pg_class')").fetchone()[0]
        if comment != shape.tag():
            return False
        rows = conn.execute("SELECT count(*) FROM memories").fetchone()[0]
        indexes = conn.execute(
            "SELECT count(*) FROM pg_indexes WHERE tablename = 'memories' AND indexname = ANY(%s)",
            [list(SECONDARY_INDEXES)],
        ).fetchone()[0]
    return rows == shape.memories and indexes == len(SECONDARY_INDEXES)


COPY_COLUMNS = [
    ("id", "uuid"),
    ("app_name", "varchar"),
    ("user_id", "varchar"),
    ("text", "text"),
    ("author", "varchar"),
    ("kind", "varchar"),
    ("importance", "float8"),
    ("strength", "float8"),
    ("access_count", "int4"),
    ("source_session_id", "varchar"),
    ("source_event_ids", "varchar[]"),
    ("metadata", "jsonb"),
    ("status", "varchar"),
    ("embedding", "vector"),
    ("embedder", "varchar"),
    ("search_text", "text"),
    ("created_at", "timestamptz"),
    ("updated_at", "timestamptz"),
    ("event_time", "timestamptz"),
    ("valid_from", "timestamptz"),
    ("context", "text"),
    ("names", "varchar[]"),
    ("topic", "varchar"),
    ("source_session_ids", "varchar[]"),
]


def row_chunks(
    shape: Shape, model: TopicModel, plan: Layout, rng: np.random.Generator
) -> Iterator[list[tuple[Any, ...]]]:
    """COPY rows, ``CHUNK`` at a time."""
    now = datetime.now(UTC)
    for start in range(0, shape.memories, CHUNK):
        stop = min(start + CHUNK, shape.memories)
        topic, subtopic = plan.topic[start:stop], plan.subtopic[start:stop]
        vectors = embeddings(model, shape, topic, subtopic, rng)
        sentences = texts(model, shape, topic, rng)
        status = np.where(rng.random(stop - start) < shape.superseded, "superseded", "active").tolist()
        ages = rng.integers(0, 365 * 24 * 3600, size=stop - start).tolist()
        rows = [
            (
                uuid.uuid4(),
                APP,
                user_id(u),
                text,
                "user",
                "fact",
                0.5,
                1.0,
                0,
                "",
                [],
                {"topic": t},
                st,
                vector,
                "bench",
                text,
                created,
                created,
                created,
                created,
                "",
                names(text),
                "",
                [],
            )
            for u, t, text, st, vector, created in zip(
                plan.user[start:stop].tolist(),
                topic.tolist(),
                sentences,
                status,
                vectors,
                (now - timedelta(seconds=age) for age in ages),
                strict=True,
            )
        ]
        yield rows


def migrated_hnsw_build() -> HnswBuild:
    """The HNSW parameters of the model (what the migrations create)."""
    from memory_app.models import Memory

    return HnswBuild.migrated(Memory, HNSW)


def memory_indexes(conn: Any) -> dict[str, str]:
    return index_definitions(conn, "memories", SECONDARY_INDEXES)


def rebuild_hnsw(url: str, build: HnswBuild, memory: str) -> dict[str, float]:
    """Rebuild the HNSW index with other parameters (``--reuse`` with ``--hnsw-m``/``--hnsw-ef-construction``)."""
    timings: dict[str, float] = {}
    with connect(url) as conn:
        print_notices(conn)
        definition = build.applied_to(memory_indexes(conn)[HNSW])
        conn.execute(f"DROP INDEX {HNSW}")
        create_index(conn, url, HNSW, definition, timings, memory)
        conn.execute("ANALYZE memories")
    return timings


def load(url: str, shape: Shape, build: HnswBuild, memory: str) -> dict[str, float]:
    """Generate and load the memories; returns seconds per phase."""
    timings: dict[str, float] = defaultdict(float)
    model = topic_model(shape)
    rng = np.random.default_rng(shape.seed + 1)
    plan = layout(shape, model, rng)
    describe_counts(plan.counts)
    with connect(url) as conn:
        print_notices(conn)
        definitions = memory_indexes(conn)
        definitions[HNSW] = build.applied_to(definitions[HNSW])
        for name in SECONDARY_INDEXES:
            conn.execute(f"DROP INDEX IF EXISTS {name}")
        conn.execute("TRUNCATE memories CASCADE")
        print(f"loading {shape.memories:,} memories by binary COPY", flush=True)
        copy_rows(conn, "memories", COPY_COLUMNS, row_chunks(shape, model, plan, rng), shape.memories, timings)
        for name in SECONDARY_INDEXES:
            create_index(conn, url, name, definitions[name], timings, memory)
        print("VACUUM ANALYZE", flush=True)
        began = time.perf_counter()
        conn.execute("VACUUM (ANALYZE) memories")
        timings["vacuum analyze"] = time.perf_counter() - began
        conn.execute(f"COMMENT ON TABLE memories IS '{shape.tag()}'")
    return timings


def describe_counts(counts: np.ndarray) -> None:
    ordered = np.sort(counts)
    heavy = counts >= HEAVY_FROM
    print(
        f"memories per user: min {ordered[0]}, median {int(np.median(ordered))}, mean {counts.mean():.0f}, "
        f"p90 {int(np.percentile(ordered, 90))}, p99 {int(np.percentile(ordered, 99))}, max {ordered[-1]}; "
        f"{heavy.sum()} users with ≥ {HEAVY_FROM:,} hold {counts[heavy].sum() / counts.sum():.0%}",
        flush=True,
    )


def sizes(url: str) -> list[tuple[str, str]]:
    with connect(url) as conn:
        return conn.execute(
            "SELECT relname, pg_size_pretty(pg_table_size(oid)) FROM pg_class"
            " WHERE relname = 'memories' OR relname = ANY(%s) ORDER BY relname",
            [list(SECONDARY_INDEXES)],
        ).fetchall()


# ---------------------------------------------------------------------------
# Queries and exact baseline
# ---------------------------------------------------------------------------


@dataclass
class Scope:
    """One user's active memories, fetched once: the exact baseline's corpus."""

    user: str
    ids: list[uuid.UUID]
    vectors: np.ndarray  # float32, rows as stored
    topics: list[int]

    def exact_top(self, query: np.ndarray, k: int = K) -> set[uuid.UUID]:
        return exact_top(self.ids, self.vectors, query, k)


@dataclass
class Query:
    user: str
    group: str
    vector: np.ndarray
    text: str
    exact: set[uuid.UUID]
    expected: int  # min(K, the user's active memories)


def group_of(count: int) -> str:
    return "light" if count < LIGHT_BELOW else "heavy" if count >= HEAVY_FROM else "medium"


def active_counts(conn: Any) -> dict[str, int]:
    return dict(
        conn.execute(
            "SELECT user_id, count(*) FROM memories WHERE app_name = %s AND status = 'active' GROUP BY user_id",
            [APP],
        ).fetchall()
    )


def fetch_scope(conn: Any, user: str) -> Scope:
    rows = conn.execute(
        "SELECT id, embedding, (metadata->>'topic')::int FROM memories"
        " WHERE app_name = %s AND user_id = %s AND status = 'active' AND embedding IS NOT NULL ORDER BY id",
        [APP, user],
    ).fetchall()
    vectors = np.stack([r[1].to_numpy() for r in rows]).astype(np.float32)
    return Scope(user, [r[0] for r in rows], vectors, [r[2] for r in rows])


def make_queries(url: str, shape: Shape, count: int, rng: np.random.Generator) -> list[Query]:
    """``count`` queries, split evenly over the user groups present, with their exact top 10."""
    model = topic_model(shape)
    word_weights = zipf_weights(shape.topic_words)
    with connect(url) as conn:
        counts = active_counts(conn)
        by_group: dict[str, list[str]] = defaultdict(list)
        for user, n in sorted(counts.items()):
            by_group[group_of(n)].append(user)
        present = [g for g in GROUPS if by_group[g]]
        scopes: dict[str, Scope] = {}
        queries = []
        for i in range(count):
            group = present[i % len(present)]
            user = by_group[group][rng.integers(len(by_group[group]))]
            if user not in scopes:
                scopes[user] = fetch_scope(conn, user)
            scope = scopes[user]
            source = rng.integers(len(scope.ids))
            vector = near(scope.vectors[source], shape.query_noise, rng)
            words = model.topic_words[scope.topics[source], rng.choice(shape.topic_words, 3, p=word_weights)]
            text = " ".join(model.words[w] for w in words)
            queries.append(Query(user, group, vector, text, scope.exact_top(vector), min(K, len(scope.ids))))
    return queries


# ---------------------------------------------------------------------------
# Measurement
# ---------------------------------------------------------------------------


@dataclass
class Measurement:
    """Per query (in ``queries`` order): latency of each mode, recall@10 of vector mode, and
    the statements its vector search ran (SET LOCALs, then the search) for replay."""

    latency_ms: dict[str, list[float]] = field(default_factory=lambda: {mode: [] for mode in MODES})
    recall: list[float] = field(default_factory=list)
    statements: list[list[tuple[str, Any]]] = field(default_factory=list)


def search(query: Query, mode: str) -> list[Any]:
    from memory_app.search import search_memories

    return search_memories(
        app_name=APP,
        user_id=query.user,
        query=query.text if mode == "vector" else hybrid_text(query.text),
        limit=K,
        mode=mode,
        reinforce=False,
        embedding=query.vector,
        embedder="bench",  # the rows' (COPY_COLUMNS): the topic model's vectors, not a real embedder's
    )


def hybrid_text(text: str) -> str:
    """The query with its second word as a name and a time named: every rank list runs (vector mode, whose
    recall is measured against exact vector search, keeps the plain words, so nothing re-ranks its list)."""
    first, second, *rest = text.split()
    return " ".join([first, second.capitalize(), *rest, "last month"])


def recall(hits: Sequence[Any], query: Query) -> float:
    return len({hit.id for hit in hits[:K]} & query.exact) / query.expected


def timed_search(query: Query, mode: str) -> tuple[float, list[Any]]:
    began = time.perf_counter()
    hits = search(query, mode)
    return (time.perf_counter() - began) * 1000, hits


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
                    ms, hits = timed_search(query, mode)
                result.latency_ms[mode].append(ms)
                if mode == "vector":
                    result.recall.append(recall(hits, query))
                    result.statements.append(log.statements)
    return result


FORCE_HNSW = {"enable_sort": "off"}
"""With sorting priced out, the planner orders by the HNSW index for every user."""
FORCE_EXACT = {"enable_indexscan": "off"}
"""With index scans priced out, the scope is read by a bitmap scan and sorted: exact search."""


def sweep(
    queries: list[Query], measurement: Measurement, ef_values: list[int], max_scan_tuples: int | None, force_hnsw: bool
) -> list[tuple[str, str, float, float, float]]:
    """recall@10 and p50/p95 of the vector statements replayed with other ``hnsw.ef_search`` values.

    With ``force_hnsw`` only heavy users' searches are replayed (for a light user a
    forced HNSW scan would wade through ``max_scan_tuples`` rows, a plan no planner
    takes), with an exact scan of their scopes for comparison.
    """
    variants = []
    for ef in ef_values:
        overrides = {"hnsw.ef_search": str(ef)}
        if max_scan_tuples:
            overrides["hnsw.max_scan_tuples"] = str(max_scan_tuples)
        label = ", ".join(f"{k}={v}" for k, v in overrides.items())
        variants.append((label + " (HNSW forced)", overrides | FORCE_HNSW) if force_hnsw else (label, overrides))
    if force_hnsw:
        variants.append(("exact scan (enable_indexscan=off)", FORCE_EXACT))
    chosen = [
        (q, s) for q, s in zip(queries, measurement.statements, strict=True) if not force_hnsw or q.group == "heavy"
    ]
    return [row for label, overrides in variants for row in replay_all(chosen, label, overrides)]


def replay_all(
    chosen: list[tuple[Query, list[tuple[str, Any]]]], label: str, overrides: dict[str, str]
) -> list[tuple[str, str, float, float, float]]:
    per_group: dict[str, tuple[list[float], list[float]]] = defaultdict(lambda: ([], []))
    with no_gc():
        for query, statements in chosen:
            ms, rows = replay(statements, overrides)
            found = len({row[0] for row in rows[:K]} & query.exact) / query.expected
            for group in (query.group, "all"):
                per_group[group][0].append(found)
                per_group[group][1].append(ms)
    groups = [g for g in GROUPS if g in per_group]
    return [
        (label, group, statistics.fmean(per_group[group][0]), *percentiles(per_group[group][1]))
        for group in groups + (["all"] if len(groups) > 1 else [])
    ]


GRAPH_EF = (40, 100, 400)


def graph_check(url: str, count: int, shape: Shape, rng: np.random.Generator) -> dict[int, tuple[float, float]]:
    """Unfiltered HNSW recall@10 over the whole table (against a sequential scan), per ``hnsw.ef_search``.

    No scope, no iterative scan: how navigable the graph is on this data, which
    bounds what any filtered HNSW scan can reach.
    """
    found: dict[int, list[float]] = defaultdict(list)
    sql = "SELECT id FROM memories ORDER BY embedding <=> %s LIMIT 10"
    with connect(url) as conn:
        pages = conn.execute("SELECT relpages FROM pg_class WHERE relname = 'memories'").fetchone()[0]
        while len(found[GRAPH_EF[0]]) < count:
            row = conn.execute(
                "SELECT embedding FROM memories WHERE ctid = %s::tid AND embedding IS NOT NULL",
                [f"({rng.integers(pages)},1)"],
            ).fetchone()
            if row is None:
                continue
            query = near(row[0].to_numpy(), shape.query_noise, rng).astype(np.float32)
            with conn.transaction():
                conn.execute("SET LOCAL enable_indexscan = off")
                exact = {r[0] for r in conn.execute(sql, [query]).fetchall()}
            for ef in GRAPH_EF:
                with conn.transaction():
                    conn.execute(f"SET LOCAL hnsw.ef_search = {ef}")
                    got = {r[0] for r in conn.execute(sql, [query]).fetchall()}
                found[ef].append(len(got & exact) / K)
    return {ef: (statistics.fmean(v), sum(x < 0.5 for x in v) / len(v)) for ef, v in found.items()}


def report_graph(results: dict[int, tuple[float, float]], count: int) -> None:
    print(f"\nHNSW graph check, {count} unfiltered queries over the whole table (no scope):")
    for ef, (mean, lost) in results.items():
        print(f"  hnsw.ef_search={ef:<4} recall@10 {mean:.3f}; queries with recall < 0.5: {lost:.0%}")


def report_plans(queries: list[Query], measurement: Measurement) -> None:
    """Per group and index taken: how many vector searches, their recall@10 and latency."""
    plans = [index_taken(statements, SECONDARY_INDEXES) for statements in measurement.statements]
    print("\nvector searches by the index the planner took:")
    for group in GROUPS:
        for index in sorted({p for p, q in zip(plans, queries, strict=True) if q.group == group}):
            chosen = [i for i, (p, q) in enumerate(zip(plans, queries, strict=True)) if q.group == group and p == index]
            p50, p95 = percentiles([measurement.latency_ms["vector"][i] for i in chosen])
            found = statistics.fmean(measurement.recall[i] for i in chosen)
            print(
                f"  {group:<7}{index:<26}×{len(chosen):<5}recall@10 {found:.3f}  p50 {p50:6.1f} ms  p95 {p95:6.1f} ms"
            )


def explain_examples(queries: list[Query], measurement: Measurement, counts: dict[str, int]) -> None:
    """EXPLAIN ANALYZE of the vector search of the heaviest queried user and of a light one."""
    by_user = {q.user: (q, s) for q, s in zip(queries, measurement.statements, strict=True)}
    heavy = max(by_user, key=lambda u: counts[u])
    light = sorted(by_user, key=lambda u: counts[u])[len(by_user) // 4]
    for user in (heavy, light):
        query, statements = by_user[user]
        _, rows = replay(statements, {}, "EXPLAIN (ANALYZE, COSTS OFF) ")
        print(f"EXPLAIN ANALYZE vector search of {user} ({counts[user]:,} active memories, {query.group}):")
        for (line,) in rows:
            if any(word in line for word in PLAN_LINES):
                print(f"  {line.strip()[:150]}")


# ---------------------------------------------------------------------------
# Report
# ---------------------------------------------------------------------------


def report(measurement: Measurement, queries: list[Query]) -> None:
    scale.report(
        measurement.recall, measurement.latency_ms, queries, groups=GROUPS, scope=lambda q: q.user, scopes="users"
    )


def report_sweep(rows: list[tuple[str, str, float, float, float]]) -> None:
    header = f"{'replayed with':<40}{'group':<8}{'recall@10':>10}{'p50 ms':>9}{'p95 ms':>9}"
    print("\nvector statements replayed (recall target ≥ 0.95, p95 ≤ 50 ms):\n" + header + "\n" + "-" * len(header))
    for label, group, found, p50, p95 in rows:
        print(f"{label:<40}{group:<8}{found:>10.3f}{p50:>9.1f}{p95:>9.1f}")


def report_load(timings: dict[str, float], url: str) -> None:
    report_phases(timings)
    print("sizes: " + ", ".join(f"{name} {size}" for name, size in sizes(url)))


# ---------------------------------------------------------------------------
# Main
# ---------------------------------------------------------------------------


def prepare_database(
    server_url: str, database: str, shape: Shape, build: HnswBuild | None, reuse: bool, memory: str
) -> dict[str, float]:
    """Create, migrate and load the scratch database, or reuse it; returns the seconds of what was done.

    ``build`` None means the migration's HNSW parameters.
    """
    url = with_database(server_url, database)
    if reuse and database_exists(server_url, database) and loaded_shape_matches(url, shape):
        print(f"reusing {database} ({shape.tag()})", flush=True)
        with connect(url) as conn:
            current = HnswBuild.of(memory_indexes(conn)[HNSW])
        wanted = build or migrated_hnsw_build()
        return {} if current == wanted else rebuild_hnsw(url, wanted, memory)
    admin(server_url, f'DROP DATABASE IF EXISTS "{database}" WITH (FORCE)')
    admin(server_url, f'CREATE DATABASE "{database}"')
    migrate()
    return load(url, shape, build or migrated_hnsw_build(), memory)


def parse_ints(text: str) -> list[int]:
    return [int(part) for part in text.split(",") if part.strip()]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--memories", type=int, default=1_000_000)
    parser.add_argument("--users", type=int, default=10_000)
    parser.add_argument("--queries", type=int, default=500)
    parser.add_argument("--warmup", type=int, default=100, help="untimed queries first (default 100)")
    parser.add_argument("--database", default=BENCH_DB, help=f"scratch database (default {BENCH_DB})")
    parser.add_argument("--keep", action="store_true", help="keep the database for re-runs")
    parser.add_argument("--reuse", action="store_true", help="use an existing database of this shape (implies --keep)")
    parser.add_argument(
        "--ef-search",
        type=parse_ints,
        default=[],
        metavar="N,N",
        help="replay the vector statements with these hnsw.ef_search values",
    )
    parser.add_argument("--max-scan-tuples", type=int, default=None, help="with --ef-search: also set this")
    parser.add_argument("--maintenance-work-mem", default="2GB", help="for the index builds (default 2GB)")
    parser.add_argument(
        "--graph-check",
        type=int,
        default=0,
        metavar="N",
        help="also measure unfiltered HNSW recall@10 on N queries (a sequential scan each)",
    )
    parser.add_argument("--hnsw-m", type=int, default=None, help="build the HNSW index with this m")
    parser.add_argument(
        "--hnsw-ef-construction", type=int, default=None, help="build the HNSW index with this ef_construction"
    )
    parser.add_argument(
        "--force-hnsw",
        action="store_true",
        help="with --ef-search: replay with enable_sort=off, so every user's search takes the HNSW index",
    )
    args = parser.parse_args()
    shape = Shape(memories=args.memories, users=args.users)

    server_url = local.database_url()
    url = with_database(server_url, args.database)
    # Before Django is set up, so its one connection setting names the scratch database.
    os.environ["DATABASE_URL"] = url
    keep = args.keep or args.reuse
    try:
        import django

        django.setup()
        build = None
        if args.hnsw_m or args.hnsw_ef_construction:
            default = migrated_hnsw_build()
            build = HnswBuild(args.hnsw_m or default.m, args.hnsw_ef_construction or default.ef_construction)
        timings = prepare_database(server_url, args.database, shape, build, args.reuse, args.maintenance_work_mem)
        with connect(url) as conn:
            print(f"HNSW index: {HnswBuild.of(memory_indexes(conn)[HNSW])}", flush=True)
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
        with connect(url) as conn:
            counts = active_counts(conn)
        report_plans(queries, measurement)
        explain_examples(queries, measurement, counts)
        if timings:
            report_load(timings, url)
        report(measurement, queries)
        if args.ef_search:
            report_sweep(sweep(queries, measurement, args.ef_search, args.max_scan_tuples, args.force_hnsw))
        if args.graph_check:
            report_graph(graph_check(url, args.graph_check, shape, rng), args.graph_check)
    finally:
        close_django_connections()
        if keep:
            print(f"\nkept database {args.database}")
        else:
            admin(server_url, f'DROP DATABASE IF EXISTS "{args.database}" WITH (FORCE)')


if __name__ == "__main__":
    main()
