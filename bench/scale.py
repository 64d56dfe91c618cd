"""What the scale benchmarks of search share (``memory_scale.py``, ``knowledge_scale.py``).

* Synthetic vectors and words with topic structure (numpy, seeded): 100 domains →
  2,000 topics (centre = domain + own direction, so topics of a domain are related,
  cos ≈ 0.5) → 20 subtopics per topic; a row's vector is centre + 0.6·subtopic +
  isotropic noise of norm 0.7 (cosine ≈ 0.73 within a subtopic, ≈ 0.54 within a topic,
  ≈ 0.27 within a domain, ≈ 0 otherwise). Topic popularity is Zipf-like (rank^-0.7),
  so popular topics are shared by many scopes and crowd the neighbourhood of a query
  with other scopes' rows: the hard case for a filtered HNSW scan. Words are
  pseudo-words (three consonant-vowel syllables); each topic has words of its own.
* The scratch database: loaded by binary COPY over a raw psycopg connection
  (pgvector's adapter), indexes built with their migration definitions and timed.
* The clock: statements caught for replay (with settings changed, or under EXPLAIN),
  p50/p95.
"""

from __future__ import annotations

import math
import re
import statistics
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any, Protocol

import numpy as np

from bench.scratch import database_exists, with_database  # noqa: F401  (database_exists: for the scale benches)

DIMENSIONS = 384

# ---------------------------------------------------------------------------
# Synthetic data
# ---------------------------------------------------------------------------


class TopicShape(Protocol):
    """What a benchmark's shape says about its topics, words and vectors."""

    seed: int
    domains: int
    topics: int
    subtopics: int
    vocabulary: int
    topic_words: int
    topic_zipf: float
    subtopic_weight: float
    noise: float


@dataclass(frozen=True)
class TopicModel:
    centres: np.ndarray  # topics × D
    subtopics: np.ndarray  # topics × subtopics × D
    popularity: np.ndarray  # topics, sums to 1
    words: list[str]
    topic_words: np.ndarray  # topics × topic_words (word indices)


def unit(rows: np.ndarray) -> np.ndarray:
    return rows / np.linalg.norm(rows, axis=-1, keepdims=True)


def zipf_weights(n: int, exponent: float = 1.0) -> np.ndarray:
    weights = 1.0 / np.arange(1, n + 1) ** exponent
    return weights / weights.sum()


def pseudo_words(count: int, rng: np.random.Generator) -> list[str]:
    """``count`` distinct three-syllable words (consonant + vowel each)."""
    syllables = [c + v for c in "bdfgklmnprstvz" for v in "aiou"]
    words: set[str] = set()
    while len(words) < count:
        words.add("".join(syllables[i] for i in rng.integers(len(syllables), size=3)))
    return sorted(words)


def topic_model(shape: TopicShape) -> TopicModel:
    """Topics, subtopics and words; depends on the seed only, so a re-run rebuilds the same one."""
    rng = np.random.default_rng(shape.seed)
    domains = unit(rng.standard_normal((shape.domains, DIMENSIONS)))
    own = unit(rng.standard_normal((shape.topics, DIMENSIONS)))
    centres = unit(domains[rng.integers(shape.domains, size=shape.topics)] + own)
    subtopics = unit(rng.standard_normal((shape.topics, shape.subtopics, DIMENSIONS))).astype(np.float32)
    popularity = zipf_weights(shape.topics, shape.topic_zipf)[rng.permutation(shape.topics)]
    words = pseudo_words(shape.vocabulary, rng)
    topic_words = np.stack(
        [rng.choice(shape.vocabulary, shape.topic_words, replace=False) for _ in range(shape.topics)]
    )
    return TopicModel(centres.astype(np.float32), subtopics, popularity, words, topic_words)


def scope_topics(counts: np.ndarray, model: TopicModel, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    """Each scope's topics (``2 + ⌊1.5·log10(count + 1)⌋`` of them, drawn by popularity) and their cumulative
    Dirichlet(1) weights, padded: (scopes × most topics) each; a padded slot has weight 2, never drawn."""
    n_topics = 2 + np.floor(1.5 * np.log10(counts + 1)).astype(int)
    width = int(n_topics.max())
    topics = np.zeros((len(counts), width), dtype=np.int32)
    cumulative = np.full((len(counts), width), 2.0)
    for s, k in enumerate(n_topics):
        topics[s, :k] = rng.choice(len(model.popularity), k, replace=False, p=model.popularity)
        cumulative[s, :k] = np.cumsum(rng.dirichlet(np.ones(k)))
        cumulative[s, k - 1] = 1.0
    return topics, cumulative


def draw_topics(scope: np.ndarray, topics: np.ndarray, cumulative: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """A topic for each row of ``scope`` (scope indices), by its scope's weights."""
    slot = (cumulative[scope] < rng.random(len(scope))[:, None]).sum(axis=1)
    slot = np.minimum(slot, (cumulative[scope] <= 1.0).sum(axis=1) - 1)
    return topics[scope, slot]


def embeddings(
    model: TopicModel, shape: TopicShape, topic: np.ndarray, subtopic: np.ndarray, rng: np.random.Generator
) -> np.ndarray:
    noise = rng.standard_normal((len(topic), DIMENSIONS), dtype=np.float32) * (shape.noise / math.sqrt(DIMENSIONS))
    vectors = model.centres[topic] + shape.subtopic_weight * model.subtopics[topic, subtopic] + noise
    return unit(vectors).astype(np.float32)


def near(vector: np.ndarray, noise: float, rng: np.random.Generator) -> np.ndarray:
    """A query about a stored row: its vector plus isotropic noise of norm ``noise``, unit length (float64)."""
    return unit(vector.astype(np.float64) + rng.standard_normal(DIMENSIONS) * (noise / math.sqrt(DIMENSIONS)))


def exact_top(ids: Sequence[Any], vectors: np.ndarray, query: np.ndarray, k: int) -> set[Any]:
    """The ``k`` ids of ``vectors`` nearest to ``query`` by cosine (float64, ties by position)."""
    rows = vectors.astype(np.float64)
    cosine = rows @ query / (np.linalg.norm(rows, axis=1) * np.linalg.norm(query))
    return {ids[i] for i in np.argsort(-cosine, kind="stable")[:k]}


# ---------------------------------------------------------------------------
# Database
# ---------------------------------------------------------------------------


def admin(server_url: str, statement: str) -> None:
    import psycopg

    with psycopg.connect(with_database(server_url, "postgres"), autocommit=True) as conn:
        conn.execute(statement)


def connect(url: str) -> Any:
    import psycopg
    from pgvector.psycopg import register_vector

    # No server-side prepared statements: a cached plan would ignore a later SET LOCAL enable_*.
    conn = psycopg.connect(url, autocommit=True, prepare_threshold=None)
    register_vector(conn)
    return conn


def migrate() -> None:
    from django.core.management import call_command
    from django.db import connections

    call_command("migrate", verbosity=0)
    connections.close_all()


def copy_rows(
    conn: Any,
    table: str,
    columns: Sequence[tuple[str, str]],
    batches: Iterator[list[tuple[Any, ...]]],
    total: int,
    timings: dict[str, float],
) -> None:
    """Binary COPY of ``batches`` of rows into ``table``: ``timings['generate']`` gets the time spent making the
    batches, ``timings['copy <table>']`` the time spent sending them."""
    names = ", ".join(f'"{name}"' for name, _ in columns)
    done, began, generating = 0, time.perf_counter(), 0.0
    with conn.cursor() as cursor, cursor.copy(f"COPY {table} ({names}) FROM STDIN (FORMAT BINARY)") as copy:
        copy.set_types([kind for _, kind in columns])
        while True:
            made = time.perf_counter()
            rows = next(batches, None)
            generating += time.perf_counter() - made
            if rows is None:
                break
            for row in rows:
                copy.write_row(row)
            done += len(rows)
            elapsed = time.perf_counter() - began
            print(f"  {done:>9,}/{total:,} rows  {done / elapsed:,.0f} rows/s", flush=True)
    timings["generate"] = timings.get("generate", 0.0) + generating
    timings[f"copy {table}"] = timings.get(f"copy {table}", 0.0) + time.perf_counter() - began - generating


@contextmanager
def index_progress(url: str, every: float = 60.0) -> Iterator[None]:
    """Print ``pg_stat_progress_create_index`` every ``every`` seconds while an index builds."""
    stop = threading.Event()

    def poll() -> None:
        with connect(url) as conn:
            while not stop.wait(every):
                row = conn.execute(
                    "SELECT phase, tuples_done, tuples_total, blocks_done, blocks_total"
                    " FROM pg_stat_progress_create_index WHERE datname = current_database()"
                ).fetchone()
                if row:
                    print(f"    … {row[0]}: tuples {row[1]:,}/{row[2]:,}, blocks {row[3]:,}/{row[4]:,}", flush=True)

    thread = threading.Thread(target=poll, daemon=True)
    thread.start()
    try:
        yield
    finally:
        stop.set()
        thread.join()


_HNSW_WITH = re.compile(r"WITH \(m='?(\d+)'?, ef_construction='?(\d+)'?\)")


@dataclass(frozen=True)
class HnswBuild:
    m: int
    ef_construction: int

    def __str__(self) -> str:
        return f"m={self.m}, ef_construction={self.ef_construction}"

    @classmethod
    def of(cls, definition: str) -> HnswBuild:
        m, ef_construction = _HNSW_WITH.search(definition).groups()
        return cls(int(m), int(ef_construction))

    @classmethod
    def migrated(cls, model: type, name: str) -> HnswBuild:
        """The HNSW parameters of index ``name`` of the Django ``model`` (what the migrations create)."""
        index = next(i for i in model._meta.indexes if i.name == name)
        return cls(index.m, index.ef_construction)

    def applied_to(self, definition: str) -> str:
        return _HNSW_WITH.sub(f"WITH (m='{self.m}', ef_construction='{self.ef_construction}')", definition)


def index_definitions(conn: Any, table: str, names: Sequence[str] | None = None) -> dict[str, str]:
    """The ``CREATE INDEX`` statements of ``table``'s indexes (those ``names``; None: all but the ones backing a
    constraint, which go with it)."""
    rows = (
        conn.execute(
            "SELECT indexname, indexdef FROM pg_indexes i WHERE tablename = %s"
            " AND NOT EXISTS (SELECT 1 FROM pg_constraint c WHERE c.conindid = (quote_ident(i.indexname))::regclass)"
            " ORDER BY indexname",
            [table],
        ).fetchall()
        if names is None
        else conn.execute(
            "SELECT indexname, indexdef FROM pg_indexes WHERE tablename = %s AND indexname = ANY(%s)",
            [table, list(names)],
        ).fetchall()
    )
    return dict(rows)


def create_index(
    conn: Any, url: str, name: str, definition: str, timings: dict[str, float], memory: str = "2GB"
) -> None:
    """Build one index with room to do it in memory (one parallel worker: two cores in all)."""
    conn.execute(f"SET maintenance_work_mem = '{memory}'")
    conn.execute("SET max_parallel_maintenance_workers = 1")
    print(f"creating index {name}", flush=True)
    began = time.perf_counter()
    with index_progress(url):
        conn.execute(definition)
    timings[f"index {name}"] = time.perf_counter() - began
    print(f"  {timings[f'index {name}']:.1f} s", flush=True)


def print_notices(conn: Any) -> None:
    conn.add_notice_handler(lambda notice: print(f"    notice: {notice.message_primary}", flush=True))


def report_phases(timings: dict[str, float]) -> None:
    width = max([38, *(len(phase) + 2 for phase in timings)])
    print("\nload phases:")
    for phase, seconds in timings.items():
        print(f"  {phase:<{width}}{seconds:>9.1f} s")
    print(f"  {'total':<{width}}{sum(timings.values()):>9.1f} s")


# ---------------------------------------------------------------------------
# Measurement
# ---------------------------------------------------------------------------


class StatementLog:
    """A Django ``execute_wrapper`` keeping what was run, for replay."""

    def __init__(self) -> None:
        self.statements: list[tuple[str, Any]] = []

    def __call__(self, execute: Callable[..., Any], sql: str, params: Any, many: bool, context: Any) -> Any:
        self.statements.append((sql, params))
        return execute(sql, params, many, context)


def replay(
    statements: list[tuple[str, Any]], overrides: dict[str, str], explain: str = ""
) -> tuple[float, list[tuple]]:
    """Run a captured search again in one transaction, with some settings changed (``SET LOCAL``); what ran
    before its last statement (its settings, a count) runs again first, and ``explain`` prefixes the last."""
    from django.db import connection, transaction

    began = time.perf_counter()
    with transaction.atomic(), connection.cursor() as cursor:
        *settings, (sql, params) = statements
        for set_sql, set_params in settings:
            cursor.execute(set_sql, set_params)
        for name, value in overrides.items():
            cursor.execute(f"SET LOCAL {name} = '{value}'")
        cursor.execute(explain + sql, params)
        rows = cursor.fetchall()
    return (time.perf_counter() - began) * 1000, rows


PLAN_LINES = ("Scan using", "Seq Scan", "Bitmap", "Rows Removed", "Execution Time", "JIT")


def index_taken(
    statements: list[tuple[str, Any]], indexes: Sequence[str], overrides: dict[str, str] | None = None
) -> str:
    """Which of ``indexes`` the planner takes for a captured search (EXPLAIN without running it, with
    ``overrides`` set); the first named in the plan, "none" if none is."""
    _, rows = replay(statements, overrides or {}, "EXPLAIN (COSTS OFF) ")
    plan = "\n".join(line for (line,) in rows)
    return next((name for name in indexes if f"using {name}" in plan or f"on {name}" in plan), "none")


def percentiles(values: Sequence[float]) -> tuple[float, float]:
    return float(np.percentile(values, 50)), float(np.percentile(values, 95))


def verdict(ok: bool) -> str:
    return "PASS" if ok else "MISS"


TARGET_RECALL = 0.95
TARGET_P95_MS = 50.0


def report(
    recall: Sequence[float],
    latency_ms: dict[str, list[float]],
    queries: Sequence[Any],
    *,
    groups: Sequence[str],
    scope: Callable[[Any], str],
    scopes: str,
) -> None:
    """The figures of a scale bench per group of queries and over all: vector recall@10, then p50/p95 per mode.

    ``queries[i]`` (with a ``group``) gave ``recall[i]`` and ``latency_ms[mode][i]``; ``scope(query)`` names what it
    searched (a user, a corpus) and ``scopes`` says what those are, for the counts and the worst recalls.
    """
    present = [g for g in groups if any(q.group == g for q in queries)] + ["all"]

    def in_group(values: Sequence[float], group: str) -> list[float]:
        return [v for v, q in zip(values, queries, strict=True) if group in ("all", q.group)]

    print(
        f"\nqueries (distinct {scopes}): "
        + ", ".join(
            f"{g} {sum(q.group == g for q in queries)} ({len({scope(q) for q in queries if q.group == g})})"
            for g in present[:-1]
        )
    )
    header = f"{'metric':<24}{'group':<8}{'value':>10}  {'target':<10}result"
    print("\n" + header + "\n" + "-" * len(header))
    for group in present:
        mean_recall = statistics.fmean(in_group(recall, group))
        print(
            f"{'recall@10 vector':<24}{group:<8}{mean_recall:>10.3f}  {'≥ 0.95':<10}"
            f"{verdict(mean_recall >= TARGET_RECALL)}"
        )
    for mode, latencies in latency_ms.items():
        for group in present:
            p50, p95 = percentiles(in_group(latencies, group))
            print(f"{f'p50 {mode} (ms)':<24}{group:<8}{p50:>10.1f}  {'—':<10}")
            print(f"{f'p95 {mode} (ms)':<24}{group:<8}{p95:>10.1f}  {'≤ 50 ms':<10}{verdict(p95 <= TARGET_P95_MS)}")
    misses = sorted((r, scope(q), q.group) for r, q in zip(recall, queries, strict=True) if r < 1)
    print(
        f"queries with recall@10 < 1: {len(misses)}"
        + ("; lowest: " + ", ".join(f"{name} ({g}) {r:.1f}" for r, name, g in misses[:5]) if misses else "")
    )
