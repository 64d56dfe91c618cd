"""The time a question names, resolved against the conversation's newest date."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from memory_app.when import named_span

REFERENCE = datetime(2023, 10, 20, 15, 30, tzinfo=UTC)


def day(y: int, m: int, d: int) -> datetime:
    return datetime(y, m, d, tzinfo=UTC)


@pytest.mark.parametrize(
    "question, start, end",
    [
        ("What painting did Melanie show to Caroline on October 13, 2023?", day(2023, 10, 13), day(2023, 10, 14)),
        ("What did Gina find for her clothing store on 1 February, 2023?", day(2023, 2, 1), day(2023, 2, 2)),
        (
            "What was the name of the pet that John had to say goodbye to on 3 June, 2023?",
            day(2023, 6, 3),
            day(2023, 6, 4),
        ),
        ("What did Maria participate in last weekend before April 10, 2023?", day(2023, 4, 10), day(2023, 4, 11)),
        ("What setback did Melanie face in October 2023?", day(2023, 10, 1), day(2023, 11, 1)),
        ("What type of workout class did Maria start doing in December, 2023?", day(2023, 12, 1), day(2024, 1, 1)),
        ("How many times has Melanie gone to the beach in 2023?", day(2023, 1, 1), day(2024, 1, 1)),
        ("When did Melanie go camping in June?", day(2023, 6, 1), day(2023, 7, 1)),
        ("What did Caroline do in November?", day(2022, 11, 1), day(2022, 12, 1)),  # the November before the talk
        ("Where did John explore on a road trip last year?", day(2022, 1, 1), day(2023, 1, 1)),
        ("What did they do last month?", day(2023, 9, 1), day(2023, 10, 1)),
        ("What did she cook yesterday?", day(2023, 10, 19), day(2023, 10, 20)),
    ],
)
def test_spans(question, start, end):
    span = named_span(question, REFERENCE)
    assert (span.start, span.end) == (start, end)


def test_ago_is_centred_on_that_long_before():
    span = named_span("Where did Caroline move from 4 years ago?", REFERENCE)
    assert span.start < datetime(2019, 10, 21, tzinfo=UTC) < span.end
    assert (span.end - span.start).days == 365


@pytest.mark.parametrize(
    "question",
    [
        "May I ask what Caroline's favourite book is?",
        "What did Melanie paint?",
        "Who won the game 2 to 1?",
        "What happened on February 30, 2023?",  # no such day
        "How long ago was Caroline's 18th birthday?",
    ],
)
def test_no_time_named(question):
    assert named_span(question, REFERENCE) is None


@pytest.mark.parametrize(
    "question",
    [
        "what happened 99999999999 days ago",  # timedelta's limit: OverflowError, a 500 of every search surface
        "what happened 9999 years ago",  # before year 1
        "what happened 99999999999999999999999 years ago",
        "what happened ٣ days ago",  # other scripts' digits are not read as a number of days
    ],
)
def test_a_time_no_calendar_holds_names_no_span(question):
    assert named_span(question, REFERENCE) is None
