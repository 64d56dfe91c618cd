"""Text as the keyword search and the deduplication see it."""

from __future__ import annotations

import re
import unicodedata
from functools import lru_cache

_CJK = re.compile(r"[\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff]")
_NOT_WORD = re.compile(r"[^\w]+")


@lru_cache(maxsize=1)
def _jieba():
    import jieba

    jieba.setLogLevel(60)  # its start-up chatter is not ours to print
    return jieba


def search_text(text: str) -> str:
    """Text for PostgreSQL's full-text parser: Chinese segmented into space-separated words.

    PostgreSQL's parser takes a run of Chinese characters as one word, so a
    query word inside it would never match; jieba splits it first.
    """
    text = unicodedata.normalize("NFKC", text)
    if not _CJK.search(text):
        return text
    return " ".join(token for token in _jieba().cut_for_search(text) if token.strip())


def normalise(text: str) -> str:
    """The key under which two memories count as exact duplicates: case, punctuation and spacing ignored."""
    return _NOT_WORD.sub(" ", unicodedata.normalize("NFKC", text).casefold()).strip()


_STOP_WORDS = frozenset(
    "a an the and or but of to in on at for with from by about as is are was were be been being am "
    "i me my mine we our you your he him his she her it its they them their this that these those "
    "do does did have has had so very just really too also then there here what which who whom".split()
)


def content_words(text: str) -> frozenset[str]:
    """The words that carry meaning: two texts with the same ones say the same thing in other order.

    Embedding similarity alone cannot tell "I have two cats" from "I have three
    cats" (cosine 0.95 with e5), so merging near duplicates also requires this.
    """
    return frozenset(normalise(text).split()) - _STOP_WORDS
