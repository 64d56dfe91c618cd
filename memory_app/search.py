"""Hybrid memory search: one SQL statement fusing vector and keyword ranks.

* Vector candidates come from the HNSW index with ``hnsw.iterative_scan`` on, so a
  selective scope (one user among many) still yields ``candidates`` rows.
* Keyword candidates are ranked with BM25 computed in SQL over the user's scope:
  any query term may match (OR, not ``plainto_tsquery``'s AND, which finds nothing
  for most questions), with PostgreSQL's English stemming and stop words.
  Keyword search reads a memory's context too (the turn it answered). The mean
  document length is that of the memories that match, which the statement reads
  anyway: over the whole scope it ranked LoCoMo identically (hybrid hit@10 0.830
  both ways, MRR 0.583 / 0.582), and it cost a heavy user a heap read per memory.
* When the question names a time (``memory_app.when``), the candidates of those two
  lists are ranked a third time, by how far their event lies from that span; when
  it mentions names (``memory_app.names``), a fourth, by how many of them they name.
* The rank lists are fused by weighted reciprocal rank fusion, then scaled by
  the memory's strength (which decays with time and rises with use).

The scope (app, user, active, not expired; or with ``as_of``, what held then) is in
every WHERE clause: other users' memories are never candidates, so they cannot be
filtered out afterwards either.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from datetime import datetime
from typing import Any, Literal
from uuid import UUID

from django.conf import settings
from django.db import connection, connections, transaction
from django.db.backends.base.base import BaseDatabaseWrapper
from django.utils import timezone

from cognizes.access import limits
from cognizes.infra import hybrid_search
from cognizes.infra.db_threads import submit_in_background
from cognizes.infra.embedders import get_embedder, get_embedder_id
from cognizes.infra.replica import stale_ok
from cognizes.infra.text import search_text
from memory_app.models import MemoryType
from memory_app.names import names
from memory_app.text import without_names
from memory_app.when import named_span

Mode = Literal["hybrid", "vector", "keyword"]


@dataclass(frozen=True)
class SearchWeights:
    """Fusion parameters, chosen by grid search on LoCoMo's dev half (``bench/memory_quality.py --tune``).

    With speakers' names left out of the query's embedding, vector ranks weigh
    1.5x keyword ranks and a small RRF k lets the top of each list dominate:
    hit@10 0.770 against 0.688 for equal weights and k=60 (held out per
    conversation: 0.763). Short texts favour a lower BM25 b. With memories'
    contexts in the keyword index, the grid prefers keyword ranks over vector ones
    (vector 0.7, b 0.75: 0.837 with the time list, against 0.821 with these), but
    then word overlap outranks meaning on short facts ("what instrument does Ada
    play?" found "Ada plays chess." first), so these stay. The time list's weight
    is a prior (keyword's), not fitted: with contexts and time, hit@10 0.821, MRR 0.549.
    The names list's weight is the same prior: with it, 0.830 and 0.583, better in each
    of the five conversations (weight 0.5: 0.822 / 0.577; 2: 0.828 / 0.581).
    100 candidates a list and the time list at 1.5 (issue 45 item 6) were chosen on conversations conv-26, 30 and
    41 (rank lists fused in Python, vector : keyword kept at 1.5 : 1, which the Vertex test's "what instrument
    does Ada play?" needs) and checked on conv-42 and 43: hybrid hit@10 / MRR on the three paths 0.834-0.837 /
    0.589-0.593 -> 0.842-0.843 / 0.596-0.602, up on each half (docs/measured.md); a search costs 1.06x.
    """

    vector: float = 1.5
    keyword: float = 1.0
    rrf_k: float = 5.0
    bm25_k1: float = 0.9
    bm25_b: float = 0.4
    candidates: int = 100
    strength_floor: float = 0.5
    time: float = 1.5
    """Weight of the time rank list, when the query names a time (memory_app.when)."""
    names: float = 1.0
    """Weight of the names rank list, when the query names someone or something (memory_app.names)."""


@dataclass(frozen=True)
class MemoryHit:
    id: UUID
    text: str
    author: str
    kind: str
    metadata: dict[str, Any]
    event_time: datetime | None
    created_at: datetime
    strength: float
    score: float
    vector_rank: int | None
    keyword_rank: int | None


def _scope(alias: str = "", *, as_of: bool = False) -> str:
    """The one scope predicate: this user's memories of exactly this scope that hold now, or ``as_of``.

    Now: active and unexpired. At a moment (``%(as_of)s``): active or superseded since
    (closed, not deleted), holding then (``valid_from`` ≤ it < ``valid_until``) and not
    expired by then. Forgotten memories are never found.
    """
    p = f"{alias}." if alias else ""
    tenant = f"{p}app_name = %(app)s AND {p}user_id = %(user)s AND {p}extra_scope = %(extra_scope)s::jsonb"
    if not as_of:
        return tenant + f" AND {p}status = 'active' AND ({p}expires_at IS NULL OR {p}expires_at > now())"
    return (
        tenant + f" AND {p}status IN ('active', 'superseded') AND {p}valid_from <= %(as_of)s"
        f" AND ({p}valid_until IS NULL OR {p}valid_until > %(as_of)s)"
        f" AND ({p}expires_at IS NULL OR {p}expires_at > %(as_of)s)"
    )


_TYPES = "{p}memory_type = ANY(%(memory_types)s::varchar[])"
"""The memory types searched (natural-language ones unless a caller asks for profile fields too). Not in ``_scope``:
search's first pass reads the scope index only, which has no type; profile rows carry no author, event time or
names, so they change nothing it reads but BM25's corpus size, by a few rows."""


def _vector_cte(as_of: bool) -> str:
    """The nearest memories embedded by the query's model: another model's vectors (before ``reembed_memories`` ran,
    after COGNIZES_EMBEDDER changed) share no space with the query's, so they rank by keyword, names and time only
    (issue 44 item 6)."""
    return hybrid_search.vector_ranks(
        "memories",
        _scope(as_of=as_of) + " AND " + _TYPES.format(p="") + " AND embedding IS NOT NULL AND embedder = %(embedder)s",
    )


def _keyword_cte(as_of: bool) -> str:
    return hybrid_search.keyword_ranks("memories", _scope("m", as_of=as_of) + " AND " + _TYPES.format(p="m."))


_TIMED_CTE = """
timed AS (
    SELECT m.id,
           dense_rank() OVER (ORDER BY greatest(%(t_start)s - m.event_time, m.event_time - %(t_end)s, interval '0'))
           AS rank
    FROM memories m
    WHERE m.id IN ({candidates}) AND m.event_time IS NOT NULL
)"""
"""The candidates ranked by how far their event lies outside the named span (0 inside; ties share a rank)."""

_NAMED_CTE = """
named AS (
    SELECT m.id,
           dense_rank() OVER (ORDER BY cardinality(ARRAY(
               SELECT unnest(m.names) INTERSECT SELECT unnest(%(names)s::varchar[]))) DESC,
               m.names[1] = ANY(%(names)s::varchar[]) DESC) AS rank
    FROM memories m
    WHERE m.id IN ({candidates}) AND m.names && %(names)s::varchar[]
)"""
"""The candidates naming any of the question's names, ranked by how many of them they name; of those naming as
many, first the ones whose first name is one of them (ties share a rank).

A memory's first name is its speaker's when one leads it (``"Melanie: …"``, or its author's, which
``_with_speaker`` puts first), else whom it names first, mostly what it is about. "What does Melanie do to
relax?" is answered by what Melanie said, not by what was said to her ("Hey Mel, …"), which names her as often.
LoCoMo dev through sessions authored by the speaker: hit@10 / MRR 0.832 / 0.567 -> 0.838 / 0.575 (rank lists
fused in Python; the SQL's figures on each path in docs/measured.md)."""

_NO_RANKS = hybrid_search.no_ranks("uuid")

_FUSE = """
SELECT m.id, m.text, m.author, m.kind, m.metadata, m.event_time, m.created_at, m.strength,
       f.rrf * (%(strength_floor)s + (1 - %(strength_floor)s) * least(m.strength, 1)) AS score,
       f.vector_rank, f.keyword_rank
FROM (
    SELECT coalesce(v.id, k.id) AS id,
           coalesce(%(w_vector)s / (%(rrf_k)s + v.rank), 0)
           + coalesce(%(w_keyword)s / (%(rrf_k)s + k.rank), 0)
           + coalesce(%(w_time)s / (%(rrf_k)s + t.rank), 0)
           + coalesce(%(w_names)s / (%(rrf_k)s + n.rank), 0) AS rrf,
           v.rank AS vector_rank, k.rank AS keyword_rank
    FROM {sources}
    LEFT JOIN {timed} t ON t.id = coalesce(v.id, k.id)
    LEFT JOIN {named} n ON n.id = coalesce(v.id, k.id)
) f
JOIN memories m ON m.id = f.id
ORDER BY score DESC, m.created_at DESC
LIMIT %(limit)s
"""

_MODES: tuple[Mode, ...] = ("hybrid", "vector", "keyword")
_SOURCES = {mode: hybrid_search.rank_lists(mode, "uuid") for mode in _MODES}
_CANDIDATES = {
    "hybrid": "SELECT id FROM vector UNION SELECT id FROM keyword",
    "vector": "SELECT id FROM vector",
    "keyword": "SELECT id FROM keyword",
}


def _statement(mode: Mode, as_of: bool, timed: bool, named: bool) -> str:
    ctes = {
        "hybrid": [_vector_cte(as_of), _keyword_cte(as_of)],
        "vector": [_vector_cte(as_of)],
        "keyword": [_keyword_cte(as_of)],
    }[mode]
    if timed:
        ctes.append(_TIMED_CTE.format(candidates=_CANDIDATES[mode]))
    if named:
        ctes.append(_NAMED_CTE.format(candidates=_CANDIDATES[mode]))
    return (
        "WITH"
        + ",".join(ctes)
        + _FUSE.format(
            sources=_SOURCES[mode],
            timed="timed" if timed else _NO_RANKS,
            named="named" if named else _NO_RANKS,
        )
    )


_STATEMENTS = {
    (mode, as_of, timed, named): _statement(mode, as_of, timed, named)
    for mode in _MODES
    for as_of in (False, True)
    for timed in (False, True)
    for named in (False, True)
}


def search_memories(
    *,
    app_name: str,
    user_id: str,
    query: str,
    limit: int = 10,
    mode: Mode = "hybrid",
    weights: SearchWeights | None = None,
    reinforce: bool = True,
    embedding: Any = None,
    embedder: str | None = None,
    extra_scope: dict[str, str] | None = None,
    as_of: datetime | None = None,
    memory_types: tuple[str, ...] = (MemoryType.NATURAL_LANGUAGE,),
) -> list[MemoryHit]:
    """The user's active memories best matching ``query``, best first.

    ``embedding`` is the query's vector when the caller already has it (benchmarks);
    otherwise the configured embedder computes it. ``embedder``: the id of the model that made ``embedding``
    (default: the configured one's), whose memories alone are in the vector list. ``extra_scope`` names the
    further scope keys a memory must have, exactly (none by default). ``as_of``
    searches the memories that held at that moment instead of now (superseded
    ones included, if they held then). ``memory_types``: natural-language memories only, unless a caller
    (Vertex's ``memoryTypes``) asks for profile fields too.
    """
    limits.check_query(query)  # a 1 MB query was tokenized and embedded whole (issue 41 J3)
    weights = weights or search_weights()
    if not query.strip():
        return []
    params: dict[str, Any] = {
        "app": app_name,
        "user": user_id,
        "extra_scope": json.dumps(extra_scope or {}),
        "text": search_text(query),
        "candidates": max(weights.candidates, limit),
        # floats: whole numbers from settings would make PostgreSQL divide integers (every score 0)
        "k1": float(weights.bm25_k1),
        "b": float(weights.bm25_b),
        "w_vector": float(weights.vector),
        "w_keyword": float(weights.keyword),
        "rrf_k": float(weights.rrf_k),
        "strength_floor": float(weights.strength_floor),
        "limit": limit,
        "as_of": as_of,
        "w_time": float(weights.time),
        "w_names": float(weights.names),
        "names": names(query),
        "memory_types": list(memory_types),
    }
    database = connections[stale_ok()]  # the replica, if there is one: a search may lag writes by a little
    facts = _scope_facts(database, params, as_of=as_of is not None, mentioned=params["names"][:MAX_NAMES_COUNTED])
    params["n"] = float(facts.count)
    span = named_span(query, facts.newest or as_of or timezone.now())
    if span is not None:
        params["t_start"], params["t_end"] = span.start, span.end
    if mode != "keyword":
        if embedding is None:
            embedding = get_embedder().embed_query(without_names(query, [*facts.authors, *facts.speakers]))
        params["embedding"] = hybrid_search.vector_literal(embedding)
        params["embedder"] = embedder or get_embedder_id()
    with transaction.atomic(using=database.alias), database.cursor() as cursor:
        hybrid_search.scan_vectors_past_the_filter(cursor, params["candidates"], max_scan_tuples=100000)
        if mode != "keyword" and facts.walk_the_graph(params["candidates"]):
            # The planner would read the whole scope and sort it: the HNSW index's order is the one left.
            cursor.execute("SET LOCAL enable_sort = off")
        cursor.execute(_STATEMENTS[mode, as_of is not None, span is not None, bool(params["names"])], params)
        hits = [MemoryHit(*(*row[:4], _json(row[4]), *row[5:])) for row in cursor.fetchall()]
    if reinforce and hits:
        _reinforce_later([hit.id for hit in hits])
    return hits


def search_weights() -> SearchWeights:
    """The fusion parameters in force: the measured defaults, or ``COGNIZES_SEARCH_WEIGHTS``."""
    return SearchWeights(**getattr(settings, "COGNIZES_SEARCH_WEIGHTS", {}))


@dataclass(frozen=True)
class ScopeFacts:
    """What one pass over the scope says, before the search statement runs.

    The pass reads the scope index only (``memories_by_scope_names`` includes every column it reads): a
    column added here that the index lacks turns it into a heap read per memory
    (tests/memory/test_search_plan.py).
    """

    authors: list[str]
    """Who said its memories: their names are left out of the query's embedding."""
    speakers: list[str]
    """Names the question mentions that the scope's memories mostly carry (``SPEAKER_SHARE``): speakers named
    in the text (``"Caroline: …"``, a multi-party session authored ``user``), left out of the embedding too."""
    newest: datetime | None
    """The newest event remembered: what "last year" in a question counts from."""
    count: int
    """Memories in the scope: BM25's corpus size."""
    table_rows: float
    """Memories of every scope (the planner's estimate; -1 before the table was first analysed)."""

    def walk_the_graph(self, candidates: int) -> bool:
        """Whether the nearest ``candidates`` are cheaper found by walking the HNSW graph than by reading the
        scope and sorting it.

        A walk reads about ``candidates × table_rows / count`` index entries before it has met
        ``candidates`` of this scope (hnsw.iterative_scan), a scan reads ``count`` rows; each costs about
        the same (bench/memory_scale.py). So the walk wins once ``count² > candidates × table_rows``: at 1M
        memories, scopes of several thousand. PostgreSQL's planner, which does not know how the filter thins
        the walk, keeps scanning them, and a heavy user's vector search was slow (docs/measured.md).
        """
        return self.table_rows > 0 and self.count * self.count > candidates * self.table_rows


MAX_NAMES_COUNTED = 5
SPEAKER_SHARE, SPEAKER_MIN_MEMORIES = 0.25, 20
"""A name a quarter or more of a scope's memories carry (of 20 or more) is a speaker's, not what a question is
about. LoCoMo dev through sessions authored ``user`` (each speaker named in about half the turns): hybrid
hit@10 / MRR 0.786 / 0.503 -> 0.830 / 0.587, the ``add_memory`` path unchanged (0.828 / 0.584). Leaving out
every name a question mentions gave 0.818 / 0.561 there and cost the ``add_memory`` path (0.824 / 0.568): names
few memories carry (places, other people) tell memories apart, hence the share."""


def _scope_facts(
    database: BaseDatabaseWrapper, scope: dict[str, Any], *, as_of: bool, mentioned: list[str]
) -> ScopeFacts:
    carried = "".join(f", count(*) FILTER (WHERE %(mentioned{i})s = ANY(names))" for i in range(len(mentioned)))
    with database.cursor() as cursor:
        cursor.execute(
            "SELECT array_agg(DISTINCT author) FILTER (WHERE author <> ''), max(event_time), count(*),"
            f" (SELECT reltuples FROM pg_class WHERE oid = 'memories'::regclass)::float8{carried}"
            f" FROM memories WHERE {_scope(as_of=as_of)}",
            {**scope, **{f"mentioned{i}": name for i, name in enumerate(mentioned)}},
        )
        authors, newest, count, table_rows, *carrying = cursor.fetchone()
    speakers = [
        name
        for name, n in zip(mentioned, carrying, strict=True)
        if count >= SPEAKER_MIN_MEMORIES and n >= SPEAKER_SHARE * count
    ]
    return ScopeFacts(authors or [], speakers, newest, count, table_rows)


def _reinforce_later(ids: list[UUID]) -> None:
    """Count the access on a database thread: the search does not wait for the write."""
    submit_in_background(_reinforce, ids)


def _reinforce(ids: list[UUID]) -> None:
    with connection.cursor() as cursor:
        # Rows are locked in id order: concurrent searches with overlapping hits
        # would otherwise lock them in rank order and deadlock each other.
        cursor.execute(
            """
            UPDATE memories SET access_count = access_count + 1, last_accessed_at = now()
            WHERE id IN (SELECT id FROM memories WHERE id = ANY(%s) ORDER BY id FOR UPDATE)
            """,
            [ids],
        )


def _json(value: Any) -> dict[str, Any]:
    return json.loads(value) if isinstance(value, str) else value
