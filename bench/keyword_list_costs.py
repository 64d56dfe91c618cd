"""Diagnostic: what the BM25 keyword list of a large corpus costs, against its floors and against pruning.

Why
---
In ``bench/knowledge_scale.py`` the keyword list is most of a large corpus's hybrid search (≥ 10,000
chunks; it missed p95 ≤ 50 ms there before ``keyword_ranks_of``): an exact BM25 list scores every chunk of
the corpus that holds any query word (an OR query). This measures where the time goes and what the
candidate changes could buy, on the same loaded data and queries, in one run (each query runs every
line, the order alternating).

Lines (the keyword list alone, one corpus, ``candidates`` 50, the knowledge app's scope):

* ``current``: the list as ``knowledge_app.search`` runs it (``cognizes.infra.hybrid_search.keyword_ranks_of``: a row
  per matching chunk with a term frequency per query word, one aggregate for df and the mean length).
* ``a row per (chunk, word)``: the same BM25 as ``cognizes.infra.hybrid_search.keyword_ranks`` writes it for any query
  (memory search's; knowledge search's before): a row per matching chunk and query word, grouped by word (df),
  by chunk and length (mean length) and by chunk (the score).
* ``floor: matching chunks counted``: only the scan every exact list over the matching chunks
  pays (the GIN and scope bitmaps, the heap): ``count(*)`` of the chunks matching any word.
* ``floor: + each word tested``: as above, each matching chunk tested for each query word
  (``@@``), the least that counting each word's document frequency (df) over them takes.
* ``chunks holding every word counted``: the scan of the chunks holding every query word (an AND
  query). Pruning by each word's bound can never skip them (their bounds sum to the most any
  chunk can score), so a pruned exact list scores at least these.
* ``current, avgdl over the corpus``: ``a row per (chunk, word)`` with BM25's mean length that of the corpus's
  chunks instead of the matching ones' (computed here, outside the clock): the ranking the next
  line must give exactly.
* ``MaxScore, statistics given``: df per word and the mean length given (computed here, outside
  the clock), as per-corpus statistics kept with the chunks would give them; then dynamic
  pruning (MaxScore): a word adds at most ``idf·(k1 + 1)`` to a chunk's score, so once the
  chunks of the rarest words (enough of them for ``candidates``) are scored and the
  ``candidates``-th best score θ is known, a chunk holding only words whose bounds sum below θ
  cannot enter; only the chunks holding another word are scored too.

Reported per corpus group: p50/p95 (ms), how many lists equal their reference (``current`` for ``a row per
(chunk, word)``, which it is for ``current, avgdl over the corpus``, which it is for the MaxScore line) id for id
and in order, and the mean
number of chunks matching a query word. Runs on the database ``bench/knowledge_scale.py --keep`` leaves
(give the same ``--chunks``/``--corpora``/``--seed``: the queries are rebuilt from them).

``SHOW_DIFFERENCES=1`` prints, for a list unlike its reference, where they part and the two chunks' scores there
(so far: ties, one ulp apart, summed in another order).

    COGNIZES_VAR_DIR=… .venv/bin/python bench/keyword_list_costs.py --chunks 300000 --corpora 60 [--queries 200]
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
from collections import defaultdict
from collections.abc import Callable
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

os.environ["DJANGO_SETTINGS_MODULE"] = "cognizes.settings"

from bench.scale import connect, percentiles
from bench.scratch import with_database
from bench.timing import no_gc
from cognizes.infra import local

GROUPS = ("medium", "large")
CANDIDATES = 50


def _lexeme_query(column: str) -> str:
    from cognizes.infra.hybrid_search import _LEXEME_QUERY

    return _LEXEME_QUERY.replace("lexeme", column)


def current(table: str, where: str, lexemes: int) -> str:
    from cognizes.infra.hybrid_search import keyword_ranks_of

    return keyword_ranks_of(table, where, lexemes, "bigint")


def row_per_word(table: str, where: str, lexemes: int) -> str:
    from cognizes.infra.hybrid_search import keyword_ranks

    return keyword_ranks(table, where)


MATCHED_LENGTH = "SELECT greatest(avg(dl), 1) AS avgdl FROM (SELECT DISTINCT id, dl FROM matched) documents"


def current_corpus_length(table: str, where: str, lexemes: int) -> str:
    sql = row_per_word(table, where, lexemes)
    assert MATCHED_LENGTH in sql, "keyword_ranks changed: this line no longer knows where its mean length is"
    return sql.replace(MATCHED_LENGTH, "SELECT %(avgdl)s::float8 AS avgdl")


def _or_query() -> str:
    from cognizes.infra.text import TEXT_SEARCH_CONFIG

    return f"replace(plainto_tsquery('{TEXT_SEARCH_CONFIG}', %(text)s)::text, ' & ', ' | ')::tsquery"


def floor_counted(table: str, where: str, lexemes: int) -> str:
    return f"""
keyword AS (SELECT count(*) AS id, 1 AS rank FROM {table} m WHERE {where} AND m.search_vector @@ {_or_query()})"""


def floor_every_word(table: str, where: str, lexemes: int) -> str:
    from cognizes.infra.text import TEXT_SEARCH_CONFIG

    return f"""
keyword AS (SELECT count(*) AS id, 1 AS rank FROM {table} m
            WHERE {where} AND m.search_vector @@ plainto_tsquery('{TEXT_SEARCH_CONFIG}', %(text)s))"""


def floor_tested(table: str, where: str, lexemes: int) -> str:
    from cognizes.infra.text import TEXT_SEARCH_CONFIG

    return f"""
query AS (
    SELECT array_agg({_lexeme_query("lexeme")}) AS lexeme_queries
    FROM unnest(to_tsvector('{TEXT_SEARCH_CONFIG}', %(text)s))
),
keyword AS (
    SELECT count(*) AS id, 1 AS rank
    FROM (SELECT m.search_vector FROM {table} m WHERE {where} AND m.search_vector @@ {_or_query()} OFFSET 0) r,
         query q, unnest(q.lexeme_queries) l (lexeme_query)
    WHERE r.search_vector @@ l.lexeme_query
)"""


def _scored(table: str, where: str, words: str, also: str = "") -> str:
    """(id, score) of the scope's chunks matching the tsquery ``words``, by every query word's BM25 term."""
    from cognizes.infra.hybrid_search import TERM_FREQUENCY

    tf = TERM_FREQUENCY.format(rank="ts_rank('{1,1,1,1}', m.search_vector, l.lexeme_query, 0)")
    return f"""
    SELECT id, sum(idf * tf * (%(k1)s + 1) / (tf + %(k1)s * (1 - %(b)s + %(b)s * dl / %(avgdl)s))) AS score
    FROM (SELECT m.id, length(m.search_vector)::float8 AS dl, l.idf, {tf} AS tf
          FROM {table} m, plan p, unnest(p.lexeme_queries, p.idfs) l (lexeme_query, idf)
          WHERE {where} AND m.search_vector @@ ({words}) {also}) pairs
    WHERE tf > 0
    GROUP BY id"""


def _words(condition: str) -> str:
    return (
        "SELECT (string_agg(quote_literal(t.lexeme), ' | ') FILTER (WHERE "
        + condition
        + "))::tsquery FROM terms t, essential e"
    )


def maxscore_given(table: str, where: str, lexemes: int) -> str:
    """MaxScore over the words ordered by idf (rarest first), with ``%(lexemes)s``' ``%(dfs)s`` and ``%(avgdl)s`` given.

    ``seed``: the chunks holding one of the first ``k`` words, ``k`` the fewest whose dfs reach ``candidates``;
    θ their ``candidates``-th best score. ``essential``: the first ``j`` words, ``j`` the fewest such that the
    bounds of the words after them sum below θ; the chunks holding one of words ``k+1..j`` and none of the
    first ``k`` are scored too (none when ``j ≤ k``)."""
    return f"""
terms AS MATERIALIZED (
    SELECT t.lexeme, t.idf, row_number() OVER w AS ord,
           coalesce(sum(t.idf * (%(k1)s + 1)) OVER (w ROWS BETWEEN 1 FOLLOWING AND UNBOUNDED FOLLOWING), 0) AS rest,
           sum(t.df) OVER w AS reached
    FROM (SELECT lexeme, df, ln(1 + (%(n)s - df + 0.5) / (df + 0.5)) AS idf
          FROM unnest(%(lexemes)s::text[], %(dfs)s::float8[]) s (lexeme, df) WHERE df > 0) t
    WINDOW w AS (ORDER BY t.idf DESC, t.lexeme)
),
plan AS MATERIALIZED (
    SELECT array_agg({_lexeme_query("t.lexeme")}) AS lexeme_queries, array_agg(t.idf) AS idfs,
           coalesce(min(t.ord) FILTER (WHERE t.reached >= %(candidates)s), max(t.ord)) AS k
    FROM terms t
),
seed AS MATERIALIZED ({
        _scored(
            table, where, "SELECT string_agg(quote_literal(t.lexeme), ' | ')::tsquery FROM terms t WHERE t.ord <= p.k"
        )
    }
),
threshold AS MATERIALIZED (
    SELECT coalesce((SELECT score FROM seed ORDER BY score DESC OFFSET %(candidates)s - 1 LIMIT 1), 0) AS theta
),
essential AS MATERIALIZED (
    SELECT p.k, coalesce(min(t.ord) FILTER (WHERE t.rest < h.theta), max(t.ord)) AS j
    FROM plan p, threshold h, terms t GROUP BY p.k
),
extra AS ({
        _scored(
            table,
            where,
            _words("t.ord > e.k AND t.ord <= e.j"),
            also=f'''
          AND NOT m.search_vector @@ ({_words("t.ord <= e.k")})
          AND (SELECT j > k FROM essential)''',
        )
    }
),
keyword AS (
    SELECT id, row_number() OVER (ORDER BY score DESC, id) AS rank
    FROM (SELECT id, score FROM (SELECT * FROM seed UNION ALL SELECT * FROM extra) s
          ORDER BY score DESC, id LIMIT %(candidates)s) best
)"""


LINES: dict[str, Callable[[str, str, int], str]] = {
    "current": current,
    "a row per (chunk, word)": row_per_word,
    "floor: matching chunks counted": floor_counted,
    "floor: + each word tested": floor_tested,
    "chunks holding every word counted": floor_every_word,
    "current, avgdl over the corpus": current_corpus_length,
    "MaxScore, statistics given": maxscore_given,
}
REFERENCE = {
    "a row per (chunk, word)": "current",
    "current, avgdl over the corpus": "a row per (chunk, word)",
    "MaxScore, statistics given": "current, avgdl over the corpus",
}
COUNTS = ("floor: matching chunks counted", "chunks holding every word counted")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--chunks", type=int, default=1_000_000)
    parser.add_argument("--corpora", type=int, default=1_000)
    parser.add_argument("--seed", type=int, default=None)
    parser.add_argument("--queries", type=int, default=200, help="queries of medium and large corpora (default 200)")
    parser.add_argument("--database", default="cognizes_bench_knowledge_scale")
    args = parser.parse_args()
    url = with_database(local.database_url(), args.database)
    os.environ["DATABASE_URL"] = url
    import django

    django.setup()
    from bench import knowledge_scale
    from cognizes.infra import hybrid_search
    from cognizes.infra.text import search_text
    from knowledge_app import search

    shape = knowledge_scale.Shape(
        chunks=args.chunks, corpora=args.corpora, **({"seed": args.seed} if args.seed is not None else {})
    )
    rng = np.random.default_rng(shape.seed + 2)
    # The bench's own draw (its 100 warm-up queries first), so these are its queries; 3 groups share them.
    drawn = knowledge_scale.make_queries(url, shape, 100 + args.queries * 3 // 2, rng)
    queries = [q for q in drawn[100:] if q.group in GROUPS][: args.queries]
    scope = search._SCOPE.format(p="m.")

    def statement(name: str, lexemes: int) -> str:
        return (
            "WITH " + LINES[name]("knowledge_chunks", scope, lexemes) + "\nSELECT id, rank FROM keyword ORDER BY rank"
        )

    elapsed: dict[str, dict[str, list[float]]] = {name: defaultdict(list) for name in LINES}
    same: dict[str, int] = defaultdict(int)
    matching: dict[str, list[int]] = defaultdict(list)
    holding_all: dict[str, list[int]] = defaultdict(list)
    lengths: dict[int, float] = {}
    conn = connect(url)
    names = list(LINES)
    with no_gc():
        for i, query in enumerate(queries):
            params = {
                "app": query.app,
                "corpora": [query.corpus],
                "documents": None,
                "text": search_text(query.text),
                "candidates": CANDIDATES,
                "k1": search.BM25_K1,
                "b": search.BM25_B,
            }
            n, lexemes = conn.execute(search._COUNT, params).fetchone()
            params.update(n=max(n, 1), lexemes=lexemes, **hybrid_search.lexeme_params(lexemes))
            if query.corpus not in lengths:
                lengths[query.corpus] = float(
                    conn.execute(
                        "SELECT greatest(avg(length(search_vector)), 1) FROM knowledge_chunks WHERE corpus_id = %s",
                        [query.corpus],
                    ).fetchone()[0]
                )
            params["avgdl"] = lengths[query.corpus]
            statements = {name: statement(name, len(params["lexemes"])) for name in names}
            params["dfs"] = [
                float(
                    conn.execute(
                        f"SELECT count(*) FROM knowledge_chunks m WHERE {scope} "
                        "AND m.search_vector @@ %(word)s::tsquery",
                        {**params, "word": "'" + lexeme.replace("'", "''") + "'"},
                    ).fetchone()[0]
                )
                for lexeme in params["lexemes"]
            ]
            lists = {}
            for name in names if i % 2 == 0 else names[::-1]:
                began = time.perf_counter()
                rows = conn.execute(statements[name], params).fetchall()
                elapsed[name][query.group].append((time.perf_counter() - began) * 1000)
                lists[name] = [row[0] for row in rows]
            matching[query.group].append(lists[COUNTS[0]][0])
            holding_all[query.group].append(lists[COUNTS[1]][0])
            for name, reference in REFERENCE.items():
                same[name] += lists[name] == lists[reference]
                if os.environ.get("SHOW_DIFFERENCES") and lists[name] != lists[reference]:
                    a, b = lists[name], lists[reference]
                    # The lists may differ in length: the shorter one's None marks where it ends.
                    at = next(i for i, (x, y) in enumerate(zip([*a, None], [*b, None], strict=False)) if x != y)
                    scores = conn.execute(
                        statements[name].replace(
                            "SELECT id, rank FROM keyword ORDER BY rank",
                            "SELECT id, score FROM (SELECT * FROM seed UNION ALL SELECT * FROM extra) s "
                            "WHERE id = ANY(%(ids)s)",
                        ),
                        {**params, "ids": [a[at], b[at]]},
                    ).fetchall()
                    print(
                        f"  {name} differs: same set {set(a) == set(b)}, first difference at {at}: {scores}", flush=True
                    )
    print(
        f"{len(queries)} queries of {', '.join(f'{g} {sum(q.group == g for q in queries)}' for g in GROUPS)} corpora;"
        f" chunks matching a query word, mean: "
        + ", ".join(f"{g} {statistics.fmean(matching[g]):,.0f}" for g in GROUPS if matching[g])
        + "; holding every query word: "
        + ", ".join(f"{g} {statistics.fmean(holding_all[g]):,.0f} (max {max(holding_all[g]):,})" for g in GROUPS)
        + f"; load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} CPUs"
    )
    header = (
        f"{'keyword list alone':<34}" + "".join(f"{g + ' p50':>12}{g + ' p95':>12}" for g in GROUPS) + "  same list"
    )
    print(header + "\n" + "-" * len(header))
    for name in names:
        figures = "".join(f"{v:>12.1f}" for g in GROUPS for v in percentiles(elapsed[name][g]))
        reference = REFERENCE.get(name)
        agreed = f"  {same[name]}/{len(queries)} as '{reference}'" if reference else ""
        print(f"{name:<34}{figures}{agreed}")


if __name__ == "__main__":
    main()
