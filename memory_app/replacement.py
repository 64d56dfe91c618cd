"""What a new statement replaces, found by meaning, in any language: the offline extractor's supersession.

A person who says "I live in Berlin now" after "I live in Paris" has moved; one who
says "I like bananas" after "I like apples" likes both. Two statements by one person
replace one another when

1. **they say the same around a value that changed**: aligned unit by unit (words;
   characters in scripts written without spaces), the units a sentence of the new one
   shares with the old — its *frame* — are at least half of the old and a third of the
   sentence (which may add "actually", "now"), not counting names (a speaker's
   "Caroline:" frames nothing), and exactly one span was replaced and none of the
   old left out ("… in Paris with my wife" adds, it replaces nothing);
2. **the frame is of something a person has one of at a time** — a name, a home, an
   employer, an age, a preference: the frame ("i live in …", "我住在…。") is nearer, by
   the embedder's meaning, to one of ``EXCLUSIVE``'s frames than to any of
   ``ADDITIVE``'s. The prototypes are English; the embedder is multilingual, and
   places "Меня зовут …" or "私の名前は…です" by their meaning, not their words;
3. for an open frame (``OPEN``: "I prefer …" names no category) **the values are
   alike** (Celsius for Fahrenheit, not window seats): cosine ``ALIKE_VALUES``;

and the newer holds. Only a memory of one short sentence is replaced: a longer one
holds more than the value that changed, and replacing it would lose the rest.
bench/memory_quality.py ``--via-sessions`` counts what it replaces on LoCoMo,
which none of this was written against.
"""

from __future__ import annotations

import difflib
import re
import unicodedata
from functools import lru_cache

import numpy as np

from cognizes.infra.embedders import embed_distinct, get_embedder
from memory_app import statements
from memory_app.names import names

EXCLUSIVE = [
    "My name is …",
    "Call me …",
    "I live in …",
    "I moved to …",
    "My home is in …",
    "I work at …",
    "I work for …",
    "My job is …",
    "I am … years old",
    "My birthday is …",
    "My email address is …",
    "My phone number is …",
    "My address is …",
    "My favourite … is …",
    "I prefer …",
    "I am married to …",
    "My partner is …",
]
"""Frames of what a person has one of at a time: a new value replaces the old."""
ADDITIVE = [
    "I like …",
    "I love …",
    "I enjoy …",
    "I have …",
    "I have a pet …",
    "I visited …",
    "I went to …",
    "I bought …",
    "I met …",
    "I saw …",
    "I watched …",
    "I read …",
    "I ate …",
    "I play …",
    "I tried …",
    "I made …",
    "I learned …",
    "I got …",
    "I want to …",
    "I am going to …",
]
"""Frames of what a person may have many of: a new value adds to the old."""
OPEN = "I prefer …"
"""The exclusive frame that names no category: only an alike value replaces."""
ALIKE_VALUES = 0.86
"""Cosine of two values of one category (multilingual-e5-small): Fahrenheit/Celsius 0.93, 北京/上海 0.93,
太郎/花子 0.87; of two categories (Celsius/window seats 0.83, tea/aisle seats 0.86) below."""
MIN_SHARED = 0.5
MAX_UNITS = 20
"""A memory longer than this (units) says more than one value: it is not replaced."""

_CJK = "\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff"  # kana and Han: written without spaces
_UNSPACED = re.compile(f"[{_CJK}]")
_RUNS = re.compile(f"[{_CJK}]|[^{_CJK}]+")


def _units(text: str) -> list[str]:
    """Words, with each character of a script written without spaces (Chinese, Japanese) its own unit."""
    text = unicodedata.normalize("NFKC", text).casefold()
    units: list[str] = []
    for word in re.findall(r"\w+(?:['’]\w+)*", text):
        if _UNSPACED.search(word):
            units.extend(_RUNS.findall(word))
        else:
            units.append(word)
    return units


def _join(units: list[str]) -> str:
    return "".join(u if _UNSPACED.match(u) or u == "…" else f" {u} " for u in units).replace("  ", " ").strip()


def changed_value(old: str, new: str) -> tuple[str, str, str] | None:
    """(frame, old value, new value) when ``new`` says ``old`` again with a span replaced, else None."""
    before, after = _units(old), _units(new)
    if not before or len(before) > MAX_UNITS or len(statements.sentences(old)) > 1:
        return None
    matcher = difflib.SequenceMatcher(a=before, b=after, autojunk=False)
    opcodes = matcher.get_opcodes()
    replaced = [(i1, i2, j1, j2) for tag, i1, i2, j1, j2 in opcodes if tag == "replace"]
    if len(replaced) != 1 or any(tag == "delete" for tag, *_ in opcodes):
        return None  # one value changed, and nothing of the old left unsaid
    [(i1, i2, j1, j2)] = replaced
    frame = [*before[:i1], *before[i2:]]  # all the old says but the value (nothing of it was deleted)
    # Names (a speaker's "Caroline:", "Bye Nate!") are no frame: the frame says what is stated of them.
    mentioned = set(names(old)) | set(names(new))
    said = [unit for unit in frame if unit not in mentioned]
    if len(said) < 2 or len(frame) < MIN_SHARED * len(before) or len(frame) < len(after) / 3:
        return None
    shown = [unit for unit in [*before[:i1], "…", *before[i2:]] if unit not in mentioned]
    return _join(shown), _join(before[i1:i2]), _join(after[j1:j2])


@lru_cache(maxsize=1)
def _prototypes() -> np.ndarray:
    return np.asarray(get_embedder().embed_documents(EXCLUSIVE + ADDITIVE))


def _closeness(similarity: np.ndarray) -> float:
    """How near a frame is to a set of prototypes: the mean of its two nearest (one lone neighbour is noise)."""
    return float(np.sort(similarity)[-2:].mean())


def replaced(new: str, known: list[tuple[str, str]]) -> tuple[str, ...]:
    """The ids of the ``known`` (id, text) statements that ``new`` replaces (it is the newer)."""
    said = statements.sentences(new)  # sentence by sentence: a long turn shares some words with anything
    changes = [
        (memory_id, change)
        for memory_id, text in known
        for sentence in said
        if (change := changed_value(text, sentence))
    ]
    if not changes:
        return ()
    vector = embed_distinct(get_embedder(), (t for _, (frame, old, value) in changes for t in (frame, old, value)))
    prototypes = _prototypes()
    found = []
    for memory_id, (frame, old, value) in changes:
        similarity = prototypes @ vector[frame]
        exclusive, additive = similarity[: len(EXCLUSIVE)], similarity[len(EXCLUSIVE) :]
        if _closeness(exclusive) <= _closeness(additive):
            continue  # additive: both hold
        if EXCLUSIVE[int(exclusive.argmax())] == OPEN and float(vector[old] @ vector[value]) < ALIKE_VALUES:
            continue
        found.append(memory_id)
    return tuple(found)
