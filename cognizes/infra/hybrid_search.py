"""The two candidate lists every hybrid search fuses, as SQL common table expressions over any table.

Memories and document chunks are searched the same way: the nearest rows by
pgvector's cosine distance (``vector``: its HNSW index, which the caller lets
scan iteratively past rows its ``WHERE`` filters out), and the best rows by BM25
over PostgreSQL's full-text index (``keyword``). Each CTE ranks its rows 1, 2, …
(the keyword one gives the BM25 ``score`` too); the caller fuses the ranks
(reciprocal rank fusion), or the scores, with whatever else it knows.

The table needs ``id``, ``embedding`` (vector) and ``search_vector`` (tsvector of
``cognizes.infra.text.search_text``); ``where`` is the caller's scope, one place per app,
written against the table (the keyword CTE names it ``m``). Parameters:
``%(embedding)s``, ``%(text)s`` (the query as ``search_text`` gave it),
``%(candidates)s`` (rows per list), and BM25's ``%(n)s`` (rows in scope),
``%(k1)s`` and ``%(b)s``. A caller that reads the query's lexemes first (``QUERY_LEXEMES``, in
a statement it runs anyway) can have the same BM25 list at half the cost (``keyword_ranks_of``).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from cognizes.infra.text import TEXT_SEARCH_CONFIG


def vector_literal(vector: Any) -> str:
    """A vector as pgvector's text input (the ``%(embedding)s`` parameter)."""
    return "[" + ",".join(f"{x:.7g}" for x in vector) + "]"


def stored_vector_literal(vector: Any) -> str:
    """A vector to store as pgvector's text input, exactly: each float32 as the shortest decimal of its double,
    which pgvector reads back to the same float32 (a COPY of embedded chunks, an import of memories)."""
    return "[" + ",".join(map(repr, np.asarray(vector, dtype=np.float32).tolist())) + "]"


def no_ranks(id_type: str) -> str:
    """A rank list with nothing in it: what a line without one of the lists joins instead (no ``score`` either)."""
    return f"(SELECT NULL::{id_type} AS id, NULL::bigint AS rank, NULL::float8 AS score)"


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


TERM_FREQUENCY = "round(1 / (1.6449340668482264 * (1 - {rank})) - 0.5)"
"""A lexeme's occurrences in a row, from ``ts_rank`` of that row for the lexeme alone with every weight 1.

For one lexeme, ``ts_rank`` (normalisation 0) is ``Σ_{j=1..tf} 1/j² / (π²/6)``; its complement,
``ψ₁(tf + 1) / (π²/6)``, is ``1 / (tf + ½)`` within rounding, which this inverts: exact for 1-255 occurrences
(the float4 ``ts_rank`` returns blurs 256, where a tsvector stops counting positions). Reading the positions
instead (``unnest`` of the row's tsvector) makes a row of every lexeme of every matching row: most of the time of a
keyword list over a corpus's many matching chunks (docs/measured.md)."""

_LEXEME_QUERY = (
    "(chr(39) || replace(replace(lexeme, chr(92), chr(92) || chr(92)), chr(39), chr(39) || chr(39))"
    " || chr(39))::tsquery"
)
"""A lexeme as a tsquery of it alone: quoted, so it is taken as it is and not parsed again."""


def keyword_ranks(table: str, where: str) -> str:
    """CTEs ending in ``keyword (id, score, rank)``: the ``%(candidates)s`` rows of best BM25 ``score`` for
    ``%(text)s``.

    Any of the query's words may match (an OR query), each scored by its inverse
    document frequency among the rows that match it. Each matching row's
    ``search_vector`` is read once per query lexeme, so it should be stored in
    the row (``STORAGE MAIN``): a TOASTed one is fetched and decompressed each time.
    Memory search's; knowledge search has ``keyword_ranks_of``.
    """
    return f"""
query AS (
    SELECT replace(plainto_tsquery('{TEXT_SEARCH_CONFIG}', %(text)s)::text, ' & ', ' | ')::tsquery AS tsq,
           array_agg(lexeme) AS lexemes, array_agg({_LEXEME_QUERY}) AS lexeme_queries
    FROM unnest(to_tsvector('{TEXT_SEARCH_CONFIG}', %(text)s))
),
matched AS (
    SELECT id, dl, lexeme, {TERM_FREQUENCY.format(rank="rank")} AS tf
    FROM (
        SELECT m.id, length(m.search_vector)::float8 AS dl, l.lexeme,
               ts_rank('{{1,1,1,1}}', m.search_vector, l.lexeme_query, 0) AS rank
        FROM {table} m, query q, unnest(q.lexemes, q.lexeme_queries) l (lexeme, lexeme_query)
        WHERE {where}
          AND m.search_vector @@ q.tsq
    ) ranked
    WHERE rank > 0
),
document_frequency AS (
    SELECT lexeme, count(*)::float8 AS df FROM matched GROUP BY lexeme
),
matched_length AS (
    SELECT greatest(avg(dl), 1) AS avgdl FROM (SELECT DISTINCT id, dl FROM matched) documents
),
keyword AS (
    SELECT id, score, row_number() OVER (ORDER BY score DESC, id) AS rank
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


QUERY_LEXEMES = f"array(SELECT lexeme FROM unnest(to_tsvector('{TEXT_SEARCH_CONFIG}', %(text)s)))"
"""SQL: the distinct lexemes of ``%(text)s``, what ``keyword_ranks_of`` is written for (a caller reads them in the
statement it runs before its search anyway, so they cost no round trip of their own)."""


def lexeme_params(lexemes: Sequence[str]) -> dict[str, Any]:
    """``keyword_ranks_of``'s parameters: each lexeme as a tsquery of it alone (``%(lexeme_queries)s``, quoted as
    ``_LEXEME_QUERY`` quotes it) and the query matching any of them (``%(any_lexeme)s``)."""
    queries = ["'" + lexeme.replace("\\", "\\\\").replace("'", "''") + "'" for lexeme in lexemes]
    return {"lexeme_queries": queries, "any_lexeme": " | ".join(queries)}


UNROLLED_LEXEMES = 1600
"""The most lexemes ``keyword_ranks_of`` gives a column each (PostgreSQL's select lists stop at 1,664 entries, and
a knowledge search's query of 4,000 characters may hold 2,000 Chinese words); a longer query gets ``keyword_ranks``.
Short of it a column each is the faster however many, from 10 lexemes to 1,600 (docs/measured.md)."""


def keyword_ranks_of(table: str, where: str, lexemes: int, id_type: str) -> str:
    """CTEs ending in ``keyword (id, score, rank)``: ``keyword_ranks``' list, written for a query of ``lexemes``
    lexemes.

    The same BM25 (df and mean length over the rows that match), at about half the cost on a large scope
    (bench/keyword_list_costs.py): knowing how many lexemes the query has, the statement gives each matching row
    one row with a term frequency per lexeme, so df and the mean length are one aggregate over those rows, and
    each lexeme's idf·(k1 + 1) and the length normalisation are computed once, not per row: ``keyword_ranks``
    makes a row per (row, lexeme) and groups them twice, by lexeme and by row, which cost as much as reading
    the rows. Parameters: ``lexeme_params``' and ``keyword_ranks``' (its ``%(text)s`` read only past
    ``UNROLLED_LEXEMES``); ``id_type``: the table's (the list of a query without lexemes is empty).
    """
    if lexemes == 0:
        return f"keyword AS ({no_ranks(id_type)[1:-1]} WHERE false)"
    if lexemes > UNROLLED_LEXEMES:
        return keyword_ranks(table, where)
    numbered = range(1, lexemes + 1)
    tf = TERM_FREQUENCY.format(rank="ts_rank('{{1,1,1,1}}', m.search_vector, (%(lexeme_queries)s::tsquery[])[{i}], 0)")
    frequencies = ",\n           ".join(f"{tf.format(i=i)} AS tf{i}" for i in numbered)
    counts = ", ".join(f"count(*) FILTER (WHERE tf{i} > 0)::float8 AS df{i}" for i in numbered)
    weights = ",\n           ".join(
        f"ln(1 + (%(n)s - df{i} + 0.5) / (df{i} + 0.5)) * (%(k1)s + 1) AS w{i}" for i in numbered
    )
    score = "\n               + ".join(f"w.w{i} * m.tf{i} / (m.tf{i} + w.base + w.per_length * m.dl)" for i in numbered)
    return f"""
matched AS MATERIALIZED (
    SELECT m.id, length(m.search_vector)::float8 AS dl,
           {frequencies}
    FROM {table} m
    WHERE {where}
      AND m.search_vector @@ %(any_lexeme)s::tsquery
),
weights AS MATERIALIZED (
    SELECT {weights},
           %(k1)s * (1 - %(b)s) AS base, %(k1)s * %(b)s / avgdl AS per_length
    FROM (SELECT {counts}, greatest(avg(dl), 1) AS avgdl FROM matched) counted
),
keyword AS (
    SELECT id, score, row_number() OVER (ORDER BY score DESC, id) AS rank
    FROM (
        SELECT m.id,
               {score} AS score
        FROM matched m, weights w
        ORDER BY score DESC, m.id
        LIMIT %(candidates)s
    ) best
)"""
