"""When search walks the HNSW graph instead of reading the user's whole scope (memory_app.search.ScopeFacts)."""

from __future__ import annotations

import pytest

from memory_app.search import ScopeFacts


def facts(count: int, table_rows: float) -> ScopeFacts:
    return ScopeFacts(authors=[], newest=None, count=count, average_length=10.0, table_rows=table_rows)


@pytest.mark.parametrize("count, table_rows, walks", [
    (13_000, 1_000_000, True),   # a heavy user among a million: the walk meets 50 of theirs in ~3,800 steps
    (2_000, 1_000_000, False),   # a scan of 2,000 rows beats a walk of ~25,000 steps
    (2_800, 200_000, False),
    (30, 30, False),             # a small table: scanning is all there is to do
    (13_000, -1, False),         # never analysed: no estimate to go by, the planner decides
])
def test_the_graph_is_walked_only_when_scanning_the_scope_would_cost_more(count, table_rows, walks):
    assert facts(count, table_rows).walk_the_graph(50) is walks
