"""The names a text mentions (people, places, things), as search's entity keys.

A question that names someone ("What did Caroline research?") is best answered by
memories naming them, and neither other signal says so reliably: a name is one
word among many for keyword search (and every memory's context names the other
speaker), and it is left out of the query's embedding on purpose
(``memory_app.text.without_names``). So memories keep their names in a column, and
search ranks its candidates a fourth time by how many of the question's names
they share (``memory_app.search``).

Offline and deterministic, no model:

* English (and any Latin script): capitalised words. A word that starts a sentence
  is capitalised anyway, so there it counts only when it is marked as a name by
  what follows it (``Caroline:``, ``Caroline's``), by being in capitals
  (``LGBTQ``), or by being capitalised again later in the text (not by a
  capitalised word after it: "Hey Mel", "Thanks Caroline"). Months and
  weekdays are left to the time signal (``memory_app.when``), and pronouns and
  the like are never names.
* Chinese: words jieba's dictionary tags as person, place, organisation and other
  proper names (``nr``, ``ns``, ``nt``, ``nz``), and the words its HMM found that
  the dictionary does not know (mostly names).

Keys are casefolded single words (a multi-word name gives each word), so "Rose" in
a question matches "Rose Garden" in a memory, and possessives are taken off.
"""

from __future__ import annotations

import importlib
import re
import unicodedata
from functools import lru_cache

from cognizes.infra.text import CJK, jieba
from memory_app.when import MONTHS

_SENTENCE = re.compile(r"(?<=[.!?…:])\s+|\n+")
_WORD = re.compile(r"[^\W\d_][\w'’\-]*")
_POSSESSIVE = re.compile(r"['’]s?$")
_NEVER = frozenset(
    [
        "i",
        "i'm",
        "i've",
        "i'll",
        "i'd",
        "ok",
        "okay",
        "mr",
        "mrs",
        "ms",
        "dr",
        "mon",
        "tue",
        "wed",
        "thu",
        "fri",
        "sat",
        "sun",
        "monday",
        "tuesday",
        "wednesday",
        "thursday",
        "friday",
        "saturday",
        "sunday",
    ]
) | frozenset(MONTHS)
_CHINESE_PROPER = ("nr", "ns", "nt", "nz")


def names(text: str) -> list[str]:
    """The names in ``text``, casefolded, each once: Latin-script ones in order of first mention, then Chinese ones."""
    text = unicodedata.normalize("NFKC", text)
    found = dict.fromkeys(_latin_names(text))
    if CJK.search(text):
        found.update(dict.fromkeys(_chinese_names(text)))
    return list(found)


def _latin_names(text: str) -> list[str]:
    candidates: list[tuple[str, bool]] = []  # (key, sure): a sentence's first word is sure only when marked
    for sentence in _SENTENCE.split(text):
        words = list(_WORD.finditer(sentence))
        for index, match in enumerate(words):
            word = match.group()
            key = _POSSESSIVE.sub("", word).casefold()
            if not word[0].isupper() or not key or key in _NEVER:
                continue
            if index == 0:
                sure = sentence[match.end() : match.end() + 1] == ":" or key != word.casefold() or word.isupper()
            else:
                sure = True
            candidates.append((key, sure))
    elsewhere = {key for key, sure in candidates if sure}
    return [key for key, _ in candidates if key in elsewhere]


def _chinese_names(text: str) -> list[str]:
    """Words jieba's dictionary tags as proper names, and words it found only by its HMM (not in the dictionary:
    mostly names, like 小明). posseg's own tagging does the same with a second HMM, at many times the cost
    (more than the embedding: docs/measured.md)."""
    tags = _word_tags()
    return [
        word
        for word in jieba().cut(text)
        if len(word) > 1 and CJK.match(word) and tags.get(word, "nr").startswith(_CHINESE_PROPER)
    ]


@lru_cache(maxsize=1)
def _word_tags() -> dict[str, str]:
    jieba()  # configured once, in memory_app.text
    return importlib.import_module("jieba.posseg").dt.word_tag_tab
