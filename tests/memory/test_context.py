"""A memory carries its context (what it answered), searched with it and never shown; a question naming a time
prefers memories from then.

Keyword search, which is exact, so the rank is certain; what the context adds to hybrid search is measured
by bench/memory_quality.py.
"""

from __future__ import annotations

from datetime import UTC

import pytest

from memory_app import services
from memory_app.models import Memory
from memory_app.search import search_memories
from memory_app.services import Candidate

pytestmark = pytest.mark.django_db

APP = "mem_app"
CHATTER = [
    "Melanie: I painted a lake at sunrise last week.",
    "Melanie: My kids love the new puppy.",
    "Melanie: We went camping at the beach in June.",
    "Melanie: Pottery class was fun, I made a bowl.",
    "Melanie: The concert was loud but great.",
    "Melanie: I read a book about self-care.",
    "Melanie: We baked cookies for the neighbours.",
    "Melanie: I'm thinking about learning the violin.",
    "Melanie: Work has been busy lately.",
    "Melanie: Thanks, that means a lot to me!",
    "Melanie: Haha, that sounds lovely.",
    "Melanie: Oh wow, congratulations!",
]


def test_a_reply_is_found_by_a_question_about_what_it_answered():
    services.do_remember(
        app_name=APP,
        user_id="conv",
        cause="test",
        candidates=[
            *(Candidate(text=text, author="Melanie") for text in CHATTER),
            Candidate(
                text="Melanie: Yes, every Sunday!",
                author="Melanie",
                context="Caroline: Do you still go to the hiking club with your husband?",
            ),
        ],
    )
    hits = search_memories(
        app_name=APP,
        user_id="conv",
        query="Does Melanie go hiking with her husband?",
        reinforce=False,
        limit=1,
        mode="keyword",
    )
    assert [hit.text for hit in hits] == ["Melanie: Yes, every Sunday!"]
    reply = Memory.objects.get(text="Melanie: Yes, every Sunday!")
    assert reply.context == "Caroline: Do you still go to the hiking club with your husband?"
    assert "hiking" not in reply.text  # shown as said


def test_editing_a_memory_keeps_its_context_searchable():
    outcome = services.do_remember(
        app_name=APP,
        user_id="conv",
        cause="test",
        candidates=[
            *(Candidate(text=text, author="Melanie") for text in CHATTER),
            Candidate(
                text="Melanie: Yes, every Sunday!",
                author="Melanie",
                context="Caroline: Do you still go to the hiking club with your husband?",
            ),
        ],
    )
    reply = Memory.objects.get(id=outcome.created[-1])
    services.do_edit_memory(
        memory_id=reply.id, app_name=APP, user_id="conv", text="Melanie: Yes, every Saturday!", cause="test"
    )
    hits = search_memories(
        app_name=APP,
        user_id="conv",
        query="Does Melanie go hiking with her husband?",
        reinforce=False,
        limit=1,
        mode="keyword",
    )
    assert [hit.text for hit in hits] == ["Melanie: Yes, every Saturday!"]


def test_a_question_naming_a_time_prefers_memories_from_then():
    from datetime import datetime

    def remember(text: str, when: datetime, user: str = "conv") -> None:
        services.do_remember(
            app_name=APP,
            user_id=user,
            cause="test",
            candidates=[Candidate(text=text, author="Melanie", event_time=when)],
        )

    remember("Melanie: Camping!", datetime(2023, 6, 17, tzinfo=UTC))
    remember("Melanie: We went camping at the lake with the kids.", datetime(2023, 7, 9, tzinfo=UTC))
    remember("Melanie: Camping in July.", datetime(2023, 7, 9, tzinfo=UTC), user="bob")

    def first(question: str) -> str:
        return search_memories(app_name=APP, user_id="conv", query=question, reinforce=False, limit=1, mode="keyword")[
            0
        ].text

    assert first("Where did Melanie go camping?") == "Melanie: Camping!"  # the shorter: BM25 alone
    assert first("Where did Melanie go camping in July?") == "Melanie: We went camping at the lake with the kids."
    assert first("Where did Melanie go camping in June 2023?") == "Melanie: Camping!"


def test_the_time_a_question_names_outweighs_a_closer_wording_from_another_time():
    """Keyword ranks 2 and 1, time ranks 1 and 2: the time list weighs more than one rank of keywords (time 1.5),
    so the July memory wins; at equal weights it was a tie, which went to the newer row, June's."""
    from datetime import datetime

    for text, when in (
        ("Melanie: We went camping at the lake with the kids.", datetime(2023, 7, 9, tzinfo=UTC)),
        ("Melanie: Camping!", datetime(2023, 6, 17, tzinfo=UTC)),
    ):
        services.do_remember(
            app_name=APP,
            user_id="conv",
            cause="test",
            candidates=[Candidate(text=text, author="Melanie", event_time=when)],
        )
    hits = search_memories(
        app_name=APP, user_id="conv", query="Where did Melanie go camping in July?", reinforce=False, mode="keyword"
    )
    assert [hit.text for hit in hits] == ["Melanie: We went camping at the lake with the kids.", "Melanie: Camping!"]
