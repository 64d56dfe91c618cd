"""Generation options (Vertex Memory Bank's): whether and how memories said again merge, which kinds are kept,
and scopes beyond (app, user) that are matched exactly."""

from __future__ import annotations

import pytest

from memory_app import services
from memory_app.models import Kind, Memory, MetadataMerge
from memory_app.search import search_memories
from memory_app.services import Candidate, Generation

pytestmark = pytest.mark.django_db

APP = "gen_app"


def remember(text: str, *, extra_scope=None, **options) -> services.Outcome:
    metadata = options.pop("metadata", {})
    kind = options.pop("kind", Kind.FACT)
    return services.do_remember(
        app_name=APP,
        user_id="ada",
        candidates=[Candidate(text=text, metadata=metadata, kind=kind)],
        cause="test",
        extra_scope=extra_scope,
        generation=Generation(**options),
    )


@pytest.mark.parametrize(
    ("strategy", "expected"),
    [
        (MetadataMerge.KEEP_ALL, {"source": ["chat", "email"], "lang": "en"}),
        (MetadataMerge.MERGE, {"source": "email", "lang": "en"}),
        (MetadataMerge.OVERWRITE, {"source": "email"}),
    ],
)
def test_a_merge_treats_metadata_by_the_strategy(strategy, expected):
    remember("I live in Lisbon.", metadata={"source": "chat", "lang": "en"})

    remember("I live in Lisbon.", metadata={"source": "email"}, metadata_merge=strategy)

    assert Memory.objects.get().metadata == expected


def test_require_exact_match_merges_only_memories_with_the_same_metadata():
    remember("I live in Lisbon.", metadata={"source": "chat"})

    other = remember(
        "I live in Lisbon.", metadata={"source": "email"}, metadata_merge=MetadataMerge.REQUIRE_EXACT_MATCH
    )
    same = remember("I live in Lisbon.", metadata={"source": "chat"}, metadata_merge=MetadataMerge.REQUIRE_EXACT_MATCH)

    assert len(other.created) == 1 and len(same.updated) == 1
    assert sorted(m.metadata["source"] for m in Memory.objects.all()) == ["chat", "email"]


def test_without_consolidation_a_repeated_memory_is_added_again():
    remember("I live in Lisbon.")

    outcome = remember("I live in Lisbon.", consolidate=False)

    assert len(outcome.created) == 1 and Memory.objects.count() == 2


def test_only_allowed_kinds_are_kept():
    kept = remember("I prefer tea.", kind=Kind.PREFERENCE, allowed_kinds=(Kind.PREFERENCE,))
    dropped = remember("The meeting is at noon.", kind=Kind.KEY_DETAIL, allowed_kinds=(Kind.PREFERENCE,))

    assert len(kept.created) == 1 and dropped.created == dropped.updated == []


def test_unknown_options_are_refused():
    with pytest.raises(services.MemoryServiceError):
        remember("x y z", metadata_merge="sometimes")
    with pytest.raises(services.MemoryServiceError):
        remember("x y z", allowed_kinds=("gossip",))
    assert Memory.objects.count() == 0


def test_extra_scope_keys_make_another_scope_that_search_and_merging_never_cross():
    remember("I live in Lisbon.")
    travel = remember("I live in Lisbon.", extra_scope={"agent": "travel"})

    assert len(travel.created) == 1  # not merged into the plain scope's memory

    def found(extra_scope):
        hits = search_memories(app_name=APP, user_id="ada", query="Lisbon", reinforce=False, extra_scope=extra_scope)
        return [(hit.text, Memory.objects.get(id=hit.id).extra_scope) for hit in hits]

    assert found(None) == [("I live in Lisbon.", {})]
    assert found({"agent": "travel"}) == [("I live in Lisbon.", {"agent": "travel"})]
    assert found({"agent": "billing"}) == []
