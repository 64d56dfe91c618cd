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
