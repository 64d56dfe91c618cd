"""Searching an app's corpora: one SQL statement fusing the chunks' vector and BM25 lists.

The two candidate lists are memory search's (``cognizes.infra.hybrid_search``; the BM25
list written for the query's number of lexemes, ``keyword_ranks_of``, which the
statement before it reads), over the chunks of the corpora asked for and nothing
else: the scope is in both lists' WHERE clause, so another app's chunks are never
candidates. The lists are fused by their scores (``Fusion``): each candidate of
either list has a cosine similarity to the query and a BM25 score (0 if it is not
among the keyword candidates); each is standardised over the candidates (z-score),
and the fused score is their weighted sum. ``vector_distance_threshold`` drops chunks farther
than it in meaning (cosine distance, as Vertex's RagRetrievalConfig has it),
whatever their keyword score.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache
from typing import Any

from django.db import connection, transaction

from cognizes.access import limits
from cognizes.infra import hybrid_search
from cognizes.infra.embedders import get_embedder
from cognizes.infra.text import search_text
from knowledge_app.metadata import Condition, matching
from knowledge_app.models import Document
from knowledge_app.services import check_embedder

CANDIDATES = 50
BM25_K1, BM25_B = 1.2, 0.75
FUSION_METHODS = ("scores", "ranks")


@dataclass(frozen=True)
class Fusion:
    """How the two lists are fused. ``method="scores"``: ``vector * z(similarity) + keyword * z(BM25)`` over the
    candidates of either list, ``z`` a score standardised over them (mean 0, standard deviation 1; 0 for all when
    they are all equal). ``method="ranks"``: weighted reciprocal rank fusion, ``weight / (rrf_k + rank)``.

    Scores, not ranks, because ranks drop how far ahead a chunk is: a question naming a word only one passage holds
    gives that passage a BM25 score far above the rest, which its rank (1, as any first) does not say. Standardised
    over the candidates, and a chunk outside the keyword list counting 0, a lone match stands out as far as it is
    rare; cosine similarities and BM25 scores live on unrelated scales, so neither is used raw."""

    vector: float = 0.5
    keyword: float = 0.5
    rrf_k: float = 60.0
    """Only for ``method="ranks"``."""
    method: str = "scores"

    def __post_init__(self) -> None:
        if self.method not in FUSION_METHODS:
            raise ValueError(f"A fusion's method is one of {', '.join(FUSION_METHODS)}, not {self.method!r}.")


FUSION = Fusion(vector=0.5, keyword=0.5)
"""Equal weights, not tuned: on the CMU/Pitt QA development half (``bench/knowledge_quality.py --sweep``, 256-token
chunks, 376 questions) hit@1/5/10 and MRR@10 0.787/0.947/0.973/0.855, against BM25 alone 0.769/0.912/0.949/0.832,
vector alone 0.630/0.864/0.904/0.729 and the rank fusion used before (vector 1, keyword 1.5, k=5, chosen on the
whole half) 0.766/0.947/0.965/0.840; ahead of both lists on each half of the questions (by id parity) too. Of the
fusions swept, the one chosen on one half (scores, ``vector`` 0.5 and 0.3) beats both lists on the other half
(0.783/0.962/0.978/0.856 and 0.771/0.938/0.969/0.845, BM25 0.777/0.929/0.957/0.843 and 0.760/0.896/0.943/0.822)."""
HNSW_FROM_CHUNKS = 10_000
"""A scope of this many chunks or more is searched through the HNSW index; a smaller one, exactly. PostgreSQL's
planner scans a corpus exactly at any size (its cost model sees no gain in the index under a filter), which
``bench/knowledge_scale.py`` measured several times slower than the index (at a recall@10 of 0.98) for corpora
from 10,000 chunks of a million; below, the exact scan was the faster (docs/measured.md)."""
MAX_QUERY_CHARS = 4000
"""A longer query is cut here: its embedding reads 512 tokens anyway, and BM25 over 10,000 words would scan."""

_OWNERS = "(%(user)s::text IS NULL OR user_id IN ('', %(user)s))"
"""The documents a caller may see (``Document.objects.seen_by``, in SQL): the app's, and its user's if the key
is one user's; ``%(user)s`` NULL for the whole app's key. Issue 41 H: in the scope, never filtered after."""
_SCOPE = (
    "{p}app_name = %(app)s AND {p}corpus_id = ANY(%(corpora)s)"
    " AND (%(documents)s::bigint[] IS NULL OR {p}document_id = ANY(%(documents)s))"
    " AND (%(user)s::text IS NULL OR {p}document_id IN (SELECT id FROM knowledge_documents"
    " WHERE app_name = %(app)s AND corpus_id = ANY(%(corpora)s) AND " + _OWNERS + "))"
)

_FUSED = {
    "scores": """
               %(w_vector)s * coalesce((avg(e.distance) OVER () - e.distance)
                                       / nullif(stddev_pop(e.distance) OVER (), 0), 0)
               + %(w_keyword)s * coalesce((f.keyword_score - avg(f.keyword_score) OVER ())
                                          / nullif(stddev_pop(f.keyword_score) OVER (), 0), 0)""",
    "ranks": """
               coalesce(%(w_vector)s / (%(rrf_k)s + f.vector_rank), 0)
               + coalesce(%(w_keyword)s / (%(rrf_k)s + f.keyword_rank), 0)""",
}
"""A candidate's fused score, by ``Fusion.method``; the windows span every candidate (before the threshold). The
similarity's z-score is the distance's, negated."""

_STATEMENT = """
WITH {vector},
{keyword}
SELECT * FROM (
    SELECT c.id, c.text, c.heading, c.start, c."end", c.document_id, d.display_name, d.source_uri, d.corpus_id,
           {fused} AS score,
           e.distance, f.vector_rank, f.keyword_rank
    FROM (
        SELECT coalesce(v.id, k.id) AS id, v.rank AS vector_rank, k.rank AS keyword_rank,
               coalesce(k.score, 0) AS keyword_score
        FROM {sources}
    ) f
    JOIN knowledge_chunks c ON c.id = f.id
    JOIN knowledge_documents d ON d.id = c.document_id
    CROSS JOIN LATERAL (SELECT c.embedding <=> %(embedding)s::vector AS distance) e
) fused
WHERE distance <= %(threshold)s
ORDER BY score DESC, id
LIMIT %(top_k)s
"""

MODES = ("hybrid", "vector", "keyword")


@lru_cache(maxsize=256)
def _statement(mode: str, method: str, lexemes: int) -> str:
    """The search of a query of ``lexemes`` lexemes (``hybrid_search.keyword_ranks_of`` is written for their
    number), fused by ``method``; each list alone too: what bench/knowledge_quality.py and the admin compare the
    fusion with."""
    return _STATEMENT.format(
        sources=hybrid_search.rank_lists(mode, "bigint"),
        fused=_FUSED[method],
        vector=hybrid_search.vector_ranks("knowledge_chunks", _SCOPE.format(p="")),
        keyword=hybrid_search.keyword_ranks_of("knowledge_chunks", _SCOPE.format(p="m."), lexemes, "bigint"),
    )


# BM25's N, the chunks in scope, from their documents' counts (set with the chunks, in one transaction): a
# corpus has tens of chunks per document, and counting a million-chunk corpus's rows would cost every search.
# With it the query's lexemes, which the search statement is written for.
_COUNT = (
    "SELECT (SELECT coalesce(sum(chunk_count), 0) FROM knowledge_documents WHERE app_name = %(app)s"
    " AND corpus_id = ANY(%(corpora)s) AND (%(documents)s::bigint[] IS NULL OR id = ANY(%(documents)s))"
    " AND " + _OWNERS + "), " + hybrid_search.QUERY_LEXEMES
)


@dataclass(frozen=True)
class Hit:
    chunk_id: int
    text: str
    heading: str
    start: int
    end: int
    document_id: int
    document_name: str
    source_uri: str
    corpus_id: int
    score: float
    """Higher is better. Of the fusion (``Fusion``), in standard deviations: 0 is the candidates' average."""
    distance: float
    """Cosine distance of the chunk to the query (0: the same meaning)."""
    vector_rank: int | None
    keyword_rank: int | None
    fused_score: float | None = None
    """The fusion's score when a reranker gave ``score`` (``knowledge_app.rerank``); else ``score`` is it."""
    rerank: str | None = None
    """What the rerank stage did with the hit (``knowledge_app.rerank.RERANK_STATES``), None: none was asked."""


def search_chunks(
    *,
    app_name: str,
    corpus_ids: list[int],
    query: str,
    top_k: int = 10,
    vector_distance_threshold: float | None = None,
    mode: str = "hybrid",
    fusion: Fusion = FUSION,
    embedding: list[float] | None = None,
    document_ids: list[int] | None = None,
    metadata: list[Condition] | None = None,
    user_id: str | None = None,
) -> list[Hit]:
    """The chunks of ``corpus_ids`` (the app's) that best answer ``query``, best first.

    ``document_ids``: only these documents' chunks (Vertex's ``rag_file_ids``); ``metadata``: only those of the
    documents whose metadata meet these conditions (``knowledge_app.metadata``; ``InvalidMetadata`` for one that
    cannot be applied). ``embedding``: the query's, if the caller has it (a benchmark comparing fusions embeds each
    question once). ``user_id``: the user of a key restricted to one user, whose documents and the app's are
    searched (another user's never); None: every document of the corpora (the app's key, staff).
    """
    limits.check_query(query)  # refused past the limit (issue 41 J3); within it, cut to what BM25 and the model read
    query = query[:MAX_QUERY_CHARS]
    if metadata:
        kept = (
            Document.objects.filter(app_name=app_name, corpus_id__in=corpus_ids)
            .seen_by(user_id)
            .filter(matching(metadata))
        )
        if document_ids is not None:
            kept = kept.filter(id__in=document_ids)
        document_ids = list(kept.values_list("id", flat=True))
    if not corpus_ids or not query.strip() or document_ids == []:
        return []
    check_embedder(app_name, corpus_ids)
    params: dict[str, Any] = {
        "app": app_name,
        "corpora": list(corpus_ids),
        "documents": document_ids,
        "user": user_id,
        "text": search_text(query),
        "embedding": hybrid_search.vector_literal(
            embedding if embedding is not None else get_embedder().embed_query(query)
        ),
        "candidates": max(CANDIDATES, top_k),
        "top_k": top_k,
        "k1": BM25_K1,
        "b": BM25_B,
        # One list alone is that list's order: the other's scores (the cosine of every candidate is known) weigh 0.
        "w_vector": 0.0 if mode == "keyword" else fusion.vector,
        "w_keyword": 0.0 if mode == "vector" else fusion.keyword,
        "rrf_k": fusion.rrf_k,
        "threshold": 2.0 if vector_distance_threshold is None else vector_distance_threshold,
    }
    with transaction.atomic(), connection.cursor() as cursor:
        hybrid_search.scan_vectors_past_the_filter(cursor, params["candidates"])
        cursor.execute(_COUNT, params)
        n, lexemes = cursor.fetchone()
        params.update(n=max(n, 1), **hybrid_search.lexeme_params(lexemes))
        if params["n"] >= HNSW_FROM_CHUNKS and mode != "keyword":
            cursor.execute("SET LOCAL enable_sort = off")  # the nearest chunks in the index's order, not sorted
        cursor.execute(_statement(mode, fusion.method, len(lexemes)), params)
        return [Hit(*row) for row in cursor.fetchall()]
