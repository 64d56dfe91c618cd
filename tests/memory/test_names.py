"""The names a memory and a question mention, and the rank list they give search."""

from __future__ import annotations

from dataclasses import replace
from datetime import UTC, datetime

import pytest

from memory_app import services
from memory_app.models import Memory
from memory_app.names import names
from memory_app.search import search_memories, search_weights
from memory_app.services import Candidate

APP = "mem_app"


@pytest.mark.parametrize(
    "text, expected",
    [
        ("What did Caroline research?", ["caroline"]),
        ("Caroline: Hey Mel! Good to see you.", ["caroline", "mel"]),  # "Hey" only starts a sentence
        ("Melanie: Thanks, that means a lot to me!", ["melanie"]),
        ("Melanie's kids loved the Rose Garden.", ["melanie", "rose", "garden"]),  # a possessive marks a name
        ("Oliver hid his bone. I think Oliver is clever.", ["oliver"]),  # capitalised again later
        ("Sounds great! Wow. Thanks for asking.", []),  # a sentence's first word is capitalised anyway
        ("I went to Paris in May, on Sunday.", ["paris"]),  # "I", months and weekdays are never names
        ("LGBTQ support groups helped me.", ["lgbtq"]),  # capitals mark a name at a sentence's start
        ('I read "Becoming Nicole" by Amy Ellis Nutt.', ["becoming", "nicole", "amy", "ellis", "nutt"]),
        ("I'm seeing Ada's cello recital; ADA's friends too.", ["ada"]),  # each name once
        ("小明喜欢在北京打篮球，他和王芳一起去了清华大学。", ["小明", "北京", "王芳", "清华大学"]),
        ("张伟的狗很可爱", ["张伟"]),  # a name the dictionary does not know
        ("他们讨论了人工智能的发展", []),  # no name, only words the dictionary knows
        ("我和 Caroline 在上海见面", ["caroline", "上海"]),
        ("what did caroline research?", []),  # lower case: no way to tell a name from a word
    ],
)
def test_names(text, expected):
    assert names(text) == expected


@pytest.mark.django_db
def test_a_question_naming_someone_prefers_memories_that_name_them():
    """Keyword search alone ranks Melanie's answer first: its context (Caroline's question) says "paint" too."""
    services.do_remember(
        app_name=APP,
        user_id="conv",
        cause="test",
        candidates=[
            Candidate(
                text="Melanie: I painted a sunset over the lake.",
                author="Melanie",
                context="Caroline: What did you paint last week?",
            ),
            Candidate(
                text="Caroline: I painted a horse for my kids.",
                author="Caroline",
                context="Melanie: Do you still have time for art?",
            ),
        ],
    )
    question = "What did Caroline paint?"

    def first(weights=None) -> str:
        hits = search_memories(
            app_name=APP, user_id="conv", query=question, mode="keyword", reinforce=False, limit=1, weights=weights
        )
        return hits[0].text

    assert first() == "Caroline: I painted a horse for my kids."
    assert first(replace(search_weights(), names=0)) == "Melanie: I painted a sunset over the lake."


@pytest.mark.django_db
@pytest.mark.parametrize(
    "speaker, addressed, question",
    [
        ("Melanie", "Hey Mel, Melanie, do you paint?", "What does Melanie paint?"),
        ("Jürgen", "Sag mal, Jürgen, malst du?", "Was malt Jürgen?"),
        ("Алексей", "Скажи, Алексей, ты рисуешь?", "Что рисует Алексей?"),
        ("小明", "小明，你平时画画吗？", "小明平时画什么？"),
    ],
)
def test_what_the_named_person_said_comes_before_what_was_said_to_them(speaker, addressed, question):
    """Both memories name the person once; the names list alone (keyword weight 0) orders the keyword candidates.
    The one said to them is the newer, which wins a tie."""
    services.do_remember(
        app_name=APP,
        user_id="conv",
        cause="test",
        candidates=[Candidate(text=f"{speaker}: Sunsets over the lake, most weekends.", author=speaker)],
    )
    services.do_remember(
        app_name=APP,
        user_id="conv",
        cause="test",
        candidates=[Candidate(text=f"Caroline: {addressed}", author="Caroline")],
    )
    hits = search_memories(
        app_name=APP,
        user_id="conv",
        query=question,
        mode="keyword",
        reinforce=False,
        weights=replace(search_weights(), keyword=0),
    )
    assert [hit.author for hit in hits] == [speaker, "Caroline"]


@pytest.mark.django_db
def test_the_names_and_time_lists_never_bring_another_users_memories():
    last_month = datetime(2023, 5, 10, tzinfo=UTC)
    services.do_remember(
        app_name=APP,
        user_id="alice",
        cause="test",
        candidates=[Candidate(text="I like tea.", event_time=datetime(2023, 6, 20, tzinfo=UTC))],
    )
    services.do_remember(
        app_name=APP,
        user_id="bob",
        cause="test",
        candidates=[
            Candidate(text=f"I play chess with Oliver every {day}.", event_time=last_month)
            for day in ("Monday morning", "Friday night")
        ],
    )
    for mode in ("hybrid", "vector", "keyword"):
        hits = search_memories(
            app_name=APP,
            user_id="alice",
            query="Who is Oliver, who played chess with me in May?",
            mode=mode,
            reinforce=False,
        )
        assert [hit.text for hit in hits] in ([], ["I like tea."])


@pytest.mark.django_db
def test_an_edited_memory_is_found_by_its_new_names():
    outcome = services.do_remember(
        app_name=APP, user_id="conv", cause="test", candidates=[Candidate(text="I met Oliver at the park.")]
    )
    services.do_edit_memory(
        memory_id=outcome.created[0], app_name=APP, user_id="conv", text="I met Luna at the park.", cause="test"
    )
    assert Memory.objects.get(id=outcome.created[0]).names == ["luna"]
