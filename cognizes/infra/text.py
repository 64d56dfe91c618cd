"""Text as PostgreSQL's full-text search sees it, for memories and documents alike.

One configuration and one segmentation, so a keyword search of any table matches
what its rows were indexed with.
"""

from __future__ import annotations

import re
import unicodedata
from functools import lru_cache

TEXT_SEARCH_CONFIG = "english"
"""PostgreSQL's text search configuration of every ``search_vector`` (stems English, keeps other words whole)."""

CJK = re.compile(r"[\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff]")


@lru_cache(maxsize=1)
def jieba():
    import jieba

    jieba.setLogLevel(60)  # its start-up chatter is not ours to print
    return jieba


def search_text(text: str) -> str:
    """Text for PostgreSQL's full-text parser: Chinese segmented into space-separated words.

    PostgreSQL's parser takes a run of Chinese characters as one word, so a
    query word inside it would never match; jieba splits it first.
    """
    text = unicodedata.normalize("NFKC", text)
    if not CJK.search(text):
        return text
    return " ".join(token for token in jieba().cut_for_search(text) if token.strip())
