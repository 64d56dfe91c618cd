"""The keyword list's BM25 (cognizes.infra.hybrid_search.keyword_ranks), checked against the formula computed here from
each chunk's tsvector as PostgreSQL stores it: term frequencies counted right in every language, stored
vectors kept in the row."""

from __future__ import annotations

import math
import random

import pytest
from django.db import connection

from cognizes.infra.embedders import DIMENSIONS
from cognizes.infra.hybrid_search import UNROLLED_LEXEMES
from cognizes.infra.text import TEXT_SEARCH_CONFIG, search_text
from knowledge_app.models import Chunk, Corpus, Document
from knowledge_app.search import BM25_B, BM25_K1, search_chunks

WORDS = {
    "English": ("apple", "pear orchard harvest basket autumn farmer"),
    "Russian": ("яблоко", "груша сад урожай корзина осень фермер"),
    "Chinese": ("苹果", "梨 果园 收获 篮子 秋天 农民"),
    "accented Latin": ("café", "crème brûlée garçon déjà naïve façade"),
}
QUERY_VECTOR = [1.0] + [0.0] * (DIMENSIONS - 1)


def _chunks(word: str, filler: str) -> list[Chunk]:
    """Chunks where ``word`` occurs 0-300 times among fillers of varied length, in a shuffled order of ids."""
    rng = random.Random(word)
    counts = [0, 1, 1, 2, 3, 3, 5, 8, 13, 21, 40, 120, 255, 300] + [rng.randint(1, 6) for _ in range(30)]
    rng.shuffle(counts)
    texts = []
    for count in counts:
        words = [word] * count + [
            rng.choice(filler.split()) + str(rng.randint(0, 40)) for _ in range(rng.randint(5, 80))
        ]
        rng.shuffle(words)
        texts.append(" ".join(words))
    return _chunks_of(word, texts)


def _chunks_of(name: str, texts: list[str]) -> list[Chunk]:
    """A corpus of one active document cut into these chunks."""
    corpus = Corpus.objects.create(app_name="bm25", display_name=name)
    document = Document.objects.create(
        corpus=corpus,
        app_name="bm25",
        display_name=name,
        content_hash=name,
        content=b"",
        status="active",
        chunk_count=len(texts),
    )
    return Chunk.objects.bulk_create(
        Chunk(
            document=document,
            corpus=corpus,
            app_name="bm25",
            ordinal=ordinal,
            text=text,
            start=0,
            end=len(text),
            search_text=search_text(text),
            embedding=QUERY_VECTOR,
        )
        for ordinal, text in enumerate(texts)
    )


def _expected_ranking(chunks: list[Chunk], query: str) -> list[int]:
    """BM25 by the book over the chunks' stored tsvectors: tf is the lexeme's count of positions."""
    with connection.cursor() as cursor:
        cursor.execute(
            f"SELECT array(SELECT lexeme FROM unnest(to_tsvector('{TEXT_SEARCH_CONFIG}', %s)))", [search_text(query)]
        )
        (lexemes,) = cursor.fetchone()
        cursor.execute(
            "SELECT c.id, length(c.search_vector), t.lexeme, cardinality(t.positions)"
            " FROM knowledge_chunks c, unnest(c.search_vector) t WHERE c.id = ANY(%s)",
            [[c.id for c in chunks]],
        )
        rows = cursor.fetchall()
    tf = {(id_, lexeme): count for id_, _, lexeme, count in rows if lexeme in lexemes}
    lengths = {id_: length for id_, length, _, _ in rows}
    matched = {id_ for id_, _ in tf}
    df = {lexeme: sum(1 for _, word in tf if word == lexeme) for lexeme in lexemes}
    avgdl = max(sum(lengths[i] for i in matched) / len(matched), 1)
    n = len(chunks)

    def score(id_: int) -> float:
        return sum(
            math.log(1 + (n - df[lexeme] + 0.5) / (df[lexeme] + 0.5))
            * f
            * (BM25_K1 + 1)
            / (f + BM25_K1 * (1 - BM25_B + BM25_B * lengths[id_] / avgdl))
            for (i, lexeme), f in tf.items()
            if i == id_
        )

    return sorted(matched, key=lambda id_: (-round(score(id_), 9), id_))


@pytest.mark.django_db
@pytest.mark.parametrize("language", WORDS)
def test_keyword_ranks_count_each_words_occurrences_in_every_language(language):
    word, filler = WORDS[language]
    chunks = _chunks(word, filler)
    query = f"{word} {filler.split()[0]}7"

    hits = search_chunks(
        app_name="bm25",
        corpus_ids=[chunks[0].corpus_id],
        query=query,
        mode="keyword",
        top_k=len(chunks),
        embedding=QUERY_VECTOR,
    )

    expected = _expected_ranking(chunks, query)
    assert [h.chunk_id for h in hits] == expected[: len(hits)]
    assert len(hits) == min(len(expected), len(chunks))


@pytest.mark.django_db
def test_a_long_chunks_words_and_vector_stay_in_its_row():
    """Each matching chunk's tsvector is read once per query word, and an exact scan reads every vector: out of
    line, each read fetched them from the TOAST table (bench/knowledge_scale.py: 3x slower keyword lists)."""
    rng = random.Random(7)
    text = " ".join("".join(rng.choice("bdfgklmnprstvz") + rng.choice("aeiou") for _ in range(4)) for _ in range(400))
    (chunk,) = _chunks_of("long", [text])
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT pg_column_toast_chunk_id(search_vector), pg_column_toast_chunk_id(embedding),"
            " pg_column_toast_chunk_id(text), length(search_vector) FROM knowledge_chunks WHERE id = %s",
            [chunk.id],
        )
        words_toasted, embedding_toasted, text_toasted, lexemes = cursor.fetchone()
    assert lexemes > 350 and text_toasted is not None, "a row too big for the page as it is"
    assert (words_toasted, embedding_toasted) == (None, None)


@pytest.mark.django_db
def test_a_word_with_a_quote_in_it_is_matched_as_written():
    """The keyword list gets the query's lexemes as tsqueries of each alone, quoted: a lexeme holding a quote (a
    URL's path) or PostgreSQL's tsquery syntax must neither break the statement nor match another word."""
    texts = ["the page http://h.com/p'q explains it", "the page http://h.com/p explains it", "p q & | ! nothing"]
    chunks = _chunks_of("quoted", texts)

    def found(query: str) -> list[int]:
        return [
            h.chunk_id
            for h in search_chunks(
                app_name="bm25",
                corpus_ids=[chunks[0].corpus_id],
                query=query,
                mode="keyword",
                top_k=10,
                embedding=QUERY_VECTOR,
            )
        ]

    assert found("http://h.com/p'q")[0] == chunks[0].id
    assert found("p & q | !") == [chunks[2].id]


@pytest.mark.django_db
def test_a_query_of_stop_words_has_no_keyword_list_and_hybrid_search_still_finds_by_meaning():
    chunks = _chunks_of("stop words", ["the cat sat on the mat", "a dog in the fog"])
    search = {
        "app_name": "bm25",
        "corpus_ids": [chunks[0].corpus_id],
        "query": "the of and",
        "top_k": 10,
        "embedding": QUERY_VECTOR,
    }

    assert search_chunks(mode="keyword", **search) == []
    hits = search_chunks(mode="hybrid", **search)
    assert {h.chunk_id for h in hits} == {c.id for c in chunks}
    assert all(h.keyword_rank is None and h.vector_rank is not None for h in hits)


@pytest.mark.django_db
@pytest.mark.parametrize("words", [UNROLLED_LEXEMES, 2000])
def test_a_query_of_many_distinct_words_is_ranked_by_the_same_bm25(words):
    """The list is written for the query's number of lexemes, a column each; a query cut at MAX_QUERY_CHARS can
    hold 2,000 (Chinese characters, each a word): more than a PostgreSQL select list may have."""
    characters = [chr(0x4E00 + i) for i in range(words)]
    rng = random.Random(3)
    held = characters[:300:3] + characters[-10:]
    texts = [" ".join(rng.choice(held) for _ in range(rng.randint(5, 40))) for _ in range(30)]
    chunks = _chunks_of("many words", texts)
    query = " ".join(characters)
    assert len(query) <= 4000

    hits = search_chunks(
        app_name="bm25",
        corpus_ids=[chunks[0].corpus_id],
        query=query,
        mode="keyword",
        top_k=len(chunks),
        embedding=QUERY_VECTOR,
    )

    assert [h.chunk_id for h in hits] == _expected_ranking(chunks, query)
