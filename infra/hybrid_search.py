"""The two candidate lists every hybrid search fuses, as SQL common table expressions over any table.

Memories and document chunks are searched the same way: the nearest rows by
pgvector's cosine distance (``vector``: its HNSW index, which the caller lets
scan iteratively past rows its ``WHERE`` filters out), and the best rows by BM25
over PostgreSQL's full-text index (``keyword``). Each CTE ranks its rows 1, 2, …;
the caller fuses the ranks (reciprocal rank fusion) with whatever else it knows.

The table needs ``id``, ``embedding`` (vector) and ``search_vector`` (tsvector of
``infra.text.search_text``); ``where`` is the caller's scope, one place per app,
written against the table (the keyword CTE names it ``m``). Parameters:
``%(embedding)s``, ``%(text)s`` (the query as ``search_text`` gave it),
``%(candidates)s`` (rows per list), and BM25's ``%(n)s`` (rows in scope),
``%(k1)s`` and ``%(b)s``.
"""

from __future__ import annotations

from typing import Any

from infra.text import TEXT_SEARCH_CONFIG


def vector_literal(vector: Any) -> str:
    """A vector as pgvector's text input (the ``%(embedding)s`` parameter)."""
    return "[" + ",".join(f"{x:.7g}" for x in vector) + "]"


def no_ranks(id_type: str) -> str:
    """A rank list with nothing in it: what a line without one of the lists joins instead."""
    return f"(SELECT NULL::{id_type} AS id, NULL::bigint AS rank)"


def rank_lists(mode: str, id_type: str) -> str:
    """The FROM of a fusion: both lists (``hybrid``), or one of them (``vector``, ``keyword``) with no other ranks."""
    return {
        "hybrid": "vector v FULL OUTER JOIN keyword k ON v.id = k.id",
        "vector": f"vector v LEFT JOIN {no_ranks(id_type)} k ON false",
        "keyword": f"keyword k LEFT JOIN {no_ranks(id_type)} v ON false",
    }[mode]


def scan_vectors_past_the_filter(cursor: Any, candidates: int, *, max_scan_tuples: int | None = None) -> None:
    """For this transaction: the HNSW scan goes on until the ``WHERE`` (a scope among many) yields ``candidates``
    rows, reading at most ``max_scan_tuples`` (pgvector's default when None)."""
    cursor.execute("SET LOCAL hnsw.iterative_scan = relaxed_order")
    if max_scan_tuples is not None:
        cursor.execute("SET LOCAL hnsw.max_scan_tuples = %s", [max_scan_tuples])
    cursor.execute("SET LOCAL hnsw.ef_search = %s", [max(40, candidates)])


def vector_ranks(table: str, where: str) -> str:
    """CTE ``vector (id, rank)``: the ``%(candidates)s`` rows nearest to ``%(embedding)s``."""
    return f"""
vector AS (
    SELECT id, row_number() OVER (ORDER BY distance) AS rank
    FROM (
        SELECT id, embedding <=> %(embedding)s::vector AS distance
        FROM {table}
        WHERE {where}
        ORDER BY embedding <=> %(embedding)s::vector
        LIMIT %(candidates)s
    ) nearest
)"""


def keyword_ranks(table: str, where: str) -> str:
    """CTEs ending in ``keyword (id, rank)``: the ``%(candidates)s`` rows of best BM25 score for ``%(text)s``.

    Any of the query's words may match (an OR query), each scored by its inverse
    document frequency among the rows that match it.
    """
    return f"""
query AS (
    SELECT replace(plainto_tsquery('{TEXT_SEARCH_CONFIG}', %(text)s)::text, ' & ', ' | ')::tsquery AS tsq,
           array(SELECT lexeme FROM unnest(to_tsvector('{TEXT_SEARCH_CONFIG}', %(text)s))) AS lexemes
),
matched AS (
    SELECT m.id, length(m.search_vector)::float8 AS dl, t.lexeme,
           coalesce(array_length(t.positions, 1), 1)::float8 AS tf
    FROM {table} m, query q, unnest(m.search_vector) t
    WHERE {where}
      AND m.search_vector @@ q.tsq AND t.lexeme = ANY(q.lexemes)
),
document_frequency AS (
    SELECT lexeme, count(*)::float8 AS df FROM matched GROUP BY lexeme
),
matched_length AS (
    SELECT greatest(avg(dl), 1) AS avgdl FROM (SELECT DISTINCT id, dl FROM matched) documents
),
keyword AS (
    SELECT id, row_number() OVER (ORDER BY score DESC, id) AS rank
    FROM (
        SELECT m.id,
               sum(ln(1 + (%(n)s - d.df + 0.5) / (d.df + 0.5))
                   * m.tf * (%(k1)s + 1) / (m.tf + %(k1)s * (1 - %(b)s + %(b)s * m.dl / l.avgdl))) AS score
        FROM matched m JOIN document_frequency d USING (lexeme) CROSS JOIN matched_length l
        GROUP BY m.id
        ORDER BY score DESC, m.id
        LIMIT %(candidates)s
    ) best
)"""
