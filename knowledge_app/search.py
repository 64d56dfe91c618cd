"""Searching an app's corpora: one SQL statement fusing the chunks' vector and BM25 ranks.

The two candidate lists are memory search's (``infra.hybrid_search``; the BM25
list written for the query's number of lexemes, ``keyword_ranks_of``, which the
statement before it reads), over the chunks of the corpora asked for and nothing
else: the scope is in both lists' WHERE clause, so another app's chunks are never
candidates. The lists are fused
by reciprocal rank fusion; ``vector_distance_threshold`` drops chunks farther
than it in meaning (cosine distance, as Vertex's RagRetrievalConfig has it),
whatever their keyword rank.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache

from django.db import connection, transaction

from infra import hybrid_search
from infra.embedders import get_embedder
from infra.text import search_text
from knowledge_app.metadata import Condition, matching
from knowledge_app.models import Document

CANDIDATES = 50
BM25_K1, BM25_B = 1.2, 0.75


@dataclass(frozen=True)
class Fusion:
    """How the two rank lists are fused: weighted reciprocal rank fusion, ``weight / (rrf_k + rank)``."""

    vector: float = 1.0
    keyword: float = 1.0
    rrf_k: float = 60.0


FUSION = Fusion(vector=1.0, keyword=1.5, rrf_k=5)
"""Chosen on the CMU/Pitt QA development half (``bench/knowledge_quality.py --sweep``, 256-token chunks): a small
k lets the top of each list lead, and BM25 leads a little, people's questions sharing the articles' words.
hit@1/5/10 and MRR@10 0.766/0.947/0.965/0.840 against equal weights at k=60 0.718/0.902/0.963/0.804 and BM25
alone 0.769/0.912/0.949/0.832."""
HNSW_FROM_CHUNKS = 10_000
"""A scope of this many chunks or more is searched through the HNSW index; a smaller one, exactly. PostgreSQL's
planner scans a corpus exactly at any size (its cost model sees no gain in the index under a filter), which
``bench/knowledge_scale.py`` measured at 146 ms p95 for corpora of 10,000-29,000 chunks of a million, against
27 ms (recall@10 0.98) through the index; for corpora of 1,000-10,000 chunks the exact scan was the faster."""
MAX_QUERY_CHARS = 4000
"""A longer query is cut here: its embedding reads 512 tokens anyway, and BM25 over 10,000 words would scan."""

_SCOPE = ("{p}app_name = %(app)s AND {p}corpus_id = ANY(%(corpora)s)"
          " AND (%(documents)s::bigint[] IS NULL OR {p}document_id = ANY(%(documents)s))")

_STATEMENT = """
WITH {vector},
{keyword}
SELECT c.id, c.text, c.heading, c.start, c."end", c.document_id, d.display_name, d.source_uri, d.corpus_id,
       f.rrf AS score, c.embedding <=> %(embedding)s::vector AS distance, f.vector_rank, f.keyword_rank
FROM (
    SELECT coalesce(v.id, k.id) AS id,
           coalesce(%(w_vector)s / (%(rrf_k)s + v.rank), 0)
           + coalesce(%(w_keyword)s / (%(rrf_k)s + k.rank), 0) AS rrf,
           v.rank AS vector_rank, k.rank AS keyword_rank
    FROM {sources}
) f
JOIN knowledge_chunks c ON c.id = f.id
JOIN knowledge_documents d ON d.id = c.document_id
WHERE c.embedding <=> %(embedding)s::vector <= %(threshold)s
ORDER BY score DESC, c.id
LIMIT %(top_k)s
"""




MODES = ("hybrid", "vector", "keyword")


@lru_cache(maxsize=256)
def _statement(mode: str, lexemes: int) -> str:
    """The search of a query of ``lexemes`` lexemes (``hybrid_search.keyword_ranks_of`` is written for their
    number); each list alone too: what bench/knowledge_quality.py and the admin compare the fusion with."""
    return _STATEMENT.format(
        sources=hybrid_search.rank_lists(mode, "bigint"),
        vector=hybrid_search.vector_ranks("knowledge_chunks", _SCOPE.format(p="")),
        keyword=hybrid_search.keyword_ranks_of("knowledge_chunks", _SCOPE.format(p="m."), lexemes, "bigint"),
    )


# BM25's N, the chunks in scope, from their documents' counts (set with the chunks, in one transaction): a
# corpus has tens of chunks per document, and counting a million-chunk corpus's rows would cost every search.
# With it the query's lexemes, which the search statement is written for.
_COUNT = ("SELECT (SELECT coalesce(sum(chunk_count), 0) FROM knowledge_documents WHERE app_name = %(app)s"
          " AND corpus_id = ANY(%(corpora)s) AND (%(documents)s::bigint[] IS NULL OR id = ANY(%(documents)s))), "
          + hybrid_search.QUERY_LEXEMES)


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
    distance: float
    """Cosine distance of the chunk to the query (0: the same meaning)."""
    vector_rank: int | None
    keyword_rank: int | None
    fused_score: float | None = None
    """The fusion's score when a reranker gave ``score`` (``knowledge_app.rerank``); else ``score`` is it."""
    rerank: str | None = None
    """What the rerank stage did with the hit (``knowledge_app.rerank.RERANK_STATES``), None: none was asked."""


def search_chunks(*, app_name: str, corpus_ids: list[int], query: str, top_k: int = 10,
                  vector_distance_threshold: float | None = None, mode: str = "hybrid",
                  fusion: Fusion = FUSION, embedding: list[float] | None = None,
                  document_ids: list[int] | None = None, metadata: list[Condition] | None = None) -> list[Hit]:
    """The chunks of ``corpus_ids`` (the app's) that best answer ``query``, best first.

    ``document_ids``: only these documents' chunks (Vertex's ``rag_file_ids``); ``metadata``: only those of the
    documents whose metadata meet these conditions (``knowledge_app.metadata``; ``InvalidMetadata`` for one that
    cannot be applied). ``embedding``: the query's, if the caller has it (a benchmark comparing fusions embeds each
    question once).
    """
    query = query[:MAX_QUERY_CHARS]
    if metadata:
        kept = Document.objects.filter(app_name=app_name, corpus_id__in=corpus_ids).filter(matching(metadata))
        if document_ids is not None:
            kept = kept.filter(id__in=document_ids)
        document_ids = list(kept.values_list("id", flat=True))
    if not corpus_ids or not query.strip() or document_ids == []:
        return []
    params = {
        "app": app_name, "corpora": list(corpus_ids), "documents": document_ids, "text": search_text(query),
        "embedding": hybrid_search.vector_literal(
            embedding if embedding is not None else get_embedder().embed_query(query)),
        "candidates": max(CANDIDATES, top_k), "top_k": top_k, "k1": BM25_K1, "b": BM25_B,
        "w_vector": fusion.vector, "w_keyword": fusion.keyword, "rrf_k": fusion.rrf_k,
        "threshold": 2.0 if vector_distance_threshold is None else vector_distance_threshold,
    }
    with transaction.atomic(), connection.cursor() as cursor:
        hybrid_search.scan_vectors_past_the_filter(cursor, params["candidates"])
        cursor.execute(_COUNT, params)
        n, lexemes = cursor.fetchone()
        params.update(n=max(n, 1), **hybrid_search.lexeme_params(lexemes))
        if params["n"] >= HNSW_FROM_CHUNKS and mode != "keyword":
            cursor.execute("SET LOCAL enable_sort = off")  # the nearest chunks in the index's order, not sorted
        cursor.execute(_statement(mode, len(lexemes)), params)
        return [Hit(*row) for row in cursor.fetchall()]
