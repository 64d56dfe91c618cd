"""How search reads a user's scope: when it walks the HNSW graph instead of reading the whole scope, and a first
pass that reads the scope index only (memory_app.search.ScopeFacts)."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest
from django.db import connection
from django.utils import timezone

from memory_app.models import Memory
from memory_app.search import ScopeFacts, search_memories


def facts(count: int, table_rows: float) -> ScopeFacts:
    return ScopeFacts(authors=[], speakers=[], newest=None, count=count, table_rows=table_rows)


@pytest.mark.parametrize(
    "count, table_rows, walks",
    [
        (13_000, 1_000_000, True),  # a heavy user among a million: the walk meets 50 of theirs in ~3,800 steps
        (2_000, 1_000_000, False),  # a scan of 2,000 rows beats a walk of ~25,000 steps
        (2_800, 200_000, False),
        (30, 30, False),  # a small table: scanning is all there is to do
        (13_000, -1, False),  # never analysed: no estimate to go by, the planner decides
    ],
)
def test_the_graph_is_walked_only_when_scanning_the_scope_would_cost_more(count, table_rows, walks):
    assert facts(count, table_rows).walk_the_graph(50) is walks


@pytest.mark.django_db(transaction=True)
@pytest.mark.parametrize("query", ["fact", "what did Ada say about the fact"], ids=["no names", "a name"])
@pytest.mark.parametrize("as_of", [None, datetime(2030, 1, 1, tzinfo=UTC)], ids=["now", "as_of"])
def test_the_pass_over_a_scope_reads_the_scope_index_only(as_of, query):
    """Search's first pass (authors, newest event, count) must not read a heap page per memory: for a heavy
    user that was a whole extra read of their scope before the search statement ran (bench/memory_scale.py)."""
    Memory.objects.bulk_create(
        Memory(app_name="plan", user_id=f"u{i % 40}", text=f"fact {i}", author="user", event_time=timezone.now())
        for i in range(4_000)
    )
    with connection.cursor() as cursor:
        cursor.execute("VACUUM ANALYZE memories")  # what autovacuum does: the visibility map an index-only scan needs
    statements = []

    def catch(execute, sql, params, many, context):
        statements.append((sql, params))
        return execute(sql, params, many, context)

    with connection.execute_wrapper(catch):
        search_memories(app_name="plan", user_id="u7", query=query, mode="keyword", reinforce=False, as_of=as_of)
    sql, params = next((sql, params) for sql, params in statements if "array_agg" in sql)
    with connection.cursor() as cursor:
        cursor.execute("EXPLAIN (ANALYZE, COSTS OFF) " + sql, params)
        plan = "\n".join(line for (line,) in cursor.fetchall())

    assert "Index Only Scan using memories_by_scope" in plan, plan
    assert "Heap Fetches: 0" in plan, plan


@pytest.mark.django_db
def test_a_name_most_of_a_scope_carries_is_a_speaker_and_one_few_carry_is_not():
    """Turns of a multi-party session authored ``user`` carry their speaker's name in the text: a question naming
    her should not pull the query's embedding towards every turn she said (memory_app.search.SPEAKER_SHARE)."""
    from memory_app.search import _scope_facts

    Memory.objects.bulk_create(
        Memory(
            app_name="party",
            user_id="group",
            author="user",
            text=f"{who}: turn {i}",
            names=[who.casefold()] + (["sweden"] if i == 3 else []),
        )
        for i, who in enumerate(["Caroline", "Melanie"] * 15)
    )
    scope = {"app": "party", "user": "group", "extra_scope": "{}"}
    facts = _scope_facts(connection, scope, as_of=False, mentioned=["caroline", "sweden", "nobody"])

    assert facts.count == 30 and facts.speakers == ["caroline"]
