"""The offline extractor keeps what the user states about themselves, and lets a new value supersede the old.

Before: every user and agent text turn was stored — questions, the agent's
replies, failures — and "Actually I prefer Celsius now." sat beside "I prefer
Fahrenheit.", both active.
"""

from __future__ import annotations

import pytest

from memory_app.extraction import OfflineExtractor
from memory_app.models import Kind
from tests.memory.offline_cases import CASES, Case


def extract(case: Case):
    events = [{"id": f"e{i}", "author": author, "content": {"role": "user" if author == "user" else "model",
                                                            "parts": [{"text": text}]}}
              for i, (author, text) in enumerate(case.turns)]
    return OfflineExtractor().extract(events, known=case.known)


@pytest.mark.parametrize("case", CASES, ids=[case.name for case in CASES])
def test_each_labelled_conversation(case):
    candidates = extract(case)
    assert [c.text for c in candidates] == case.remembered
    assert sorted(i for c in candidates for i in c.supersedes) == sorted(case.superseded)


def test_a_failed_turn_is_not_read():
    events = [{"author": "user", "error_code": "MODEL_ERROR", "error_message": "I prefer to fail.",
               "content": {"role": "user", "parts": [{"text": "I prefer errors."}]}}]
    assert OfflineExtractor().extract(events, known=[]) == []


def test_kinds_follow_what_was_said():
    case = Case("kinds", [("user", "I prefer tea."), ("user", "My name is Ada."), ("user", "Always be brief."),
                          ("user", "I have two cats.")], remembered=[])
    assert [c.kind for c in extract(case)] == [Kind.PREFERENCE, Kind.PERSONAL_INFO, Kind.INSTRUCTION, Kind.FACT]


def test_a_memory_keeps_the_turn_it_answered_as_its_context():
    case = Case("context", [("agent", "Which team do you support, and since when?"),
                            ("user", "I support Benfica, since I was a kid.")], remembered=[])
    [candidate] = extract(case)
    assert candidate.context == "Which team do you support, and since when?"
