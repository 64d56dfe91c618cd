"""The opt-in fast embedder (cognizes.infra.embedders.UniversalSentenceEncoderEmbedder): vectors that fit the 384-d
columns, the same in every process (a stored vector stays comparable to a later query), and a paraphrase found
in every language the product promises, from English too."""

from __future__ import annotations

import numpy as np
import pytest

from cognizes.infra.embedders import DIMENSIONS, UniversalSentenceEncoderEmbedder

# Four topics; each language says each one twice, in other words.
TOPICS = {
    "English": [
        ("I moved to Paris last spring for a new job.", "Last spring I relocated to Paris because of work."),
        ("My daughter started learning the piano this year.", "This year my girl began taking piano lessons."),
        ("We adopted a dog from the shelter.", "We took in a puppy from the animal rescue."),
        ("I am allergic to peanuts.", "Peanuts give me an allergic reaction."),
    ],
    "Chinese": [
        ("我去年春天因为新工作搬到了巴黎。", "去年春天我为了工作搬家去了巴黎。"),
        ("我女儿今年开始学钢琴了。", "今年我的女儿开始上钢琴课。"),
        ("我们从收容所领养了一只狗。", "我们在动物救助站收养了一只小狗。"),
        ("我对花生过敏。", "我吃花生会过敏。"),
    ],
    "Japanese": [
        ("新しい仕事のために去年の春パリに引っ越しました。", "去年の春、仕事の都合でパリへ移りました。"),
        ("娘が今年ピアノを習い始めました。", "今年からうちの娘はピアノのレッスンを受けています。"),
        ("保護施設から犬を引き取りました。", "動物保護団体から子犬を迎えました。"),
        ("私はピーナッツアレルギーです。", "ピーナッツを食べるとアレルギーが出ます。"),
    ],
    "Korean": [
        ("나는 새 직장 때문에 작년 봄에 파리로 이사했다.", "작년 봄에 일 때문에 파리로 옮겼어요."),
        ("우리 딸이 올해 피아노를 배우기 시작했다.", "올해부터 딸아이가 피아노 레슨을 받고 있어요."),
        ("우리는 보호소에서 개를 입양했다.", "유기견 센터에서 강아지를 데려왔어요."),
        ("나는 땅콩 알레르기가 있다.", "땅콩을 먹으면 알레르기 반응이 생겨요."),
    ],
    "Russian": [
        (
            "Прошлой весной я переехал в Париж из-за новой работы.",
            "Весной прошлого года я перебрался в Париж ради работы.",
        ),
        ("Моя дочь в этом году начала учиться играть на пианино.", "В этом году дочка пошла на уроки фортепиано."),
        ("Мы взяли собаку из приюта.", "Мы забрали щенка из центра помощи животным."),
        ("У меня аллергия на арахис.", "Арахис вызывает у меня аллергическую реакцию."),
    ],
    "accented Latin": [
        (
            "J'ai déménagé à Paris au printemps dernier pour un nouveau travail.",
            "Le printemps passé, je me suis installé à Paris à cause du boulot.",
        ),
        ("Ma fille a commencé le piano cette année.", "Cette année, ma fille prend des leçons de piano."),
        (
            "Nous avons adopté un chien au refuge.",
            "Nous avons recueilli un chiot d'une association de protection animale.",
        ),
        ("Je suis allergique aux cacahuètes.", "Les arachides me provoquent une réaction allergique."),
    ],
}


@pytest.fixture(scope="module")
def embedder() -> UniversalSentenceEncoderEmbedder:
    return UniversalSentenceEncoderEmbedder()


def test_vectors_fit_the_columns_and_are_the_same_in_another_process(embedder):
    texts = ["I moved to Paris.", "我对花生过敏。", ""]
    vectors = embedder.embed_documents(texts)
    assert vectors.shape == (3, DIMENSIONS) and vectors.dtype == np.float32
    assert np.allclose(np.linalg.norm(vectors[:2], axis=1), 1, atol=1e-5)
    assert embedder.embed_query("I moved to Paris.").shape == (DIMENSIONS,)
    # A new instance (another worker) projects with the same matrix: what was stored still matches.
    assert np.allclose(UniversalSentenceEncoderEmbedder().embed_documents(texts[:2]), vectors[:2], atol=1e-5)
    assert embedder.embed_documents([]).shape == (0, DIMENSIONS)


@pytest.mark.parametrize("language", list(TOPICS))
def test_a_paraphrase_finds_its_original_in_every_language(embedder, language):
    originals = embedder.embed_documents([original for original, _ in TOPICS[language]])
    paraphrases = np.stack([embedder.embed_query(paraphrase) for _, paraphrase in TOPICS[language]])
    assert list((paraphrases @ originals.T).argmax(axis=1)) == [0, 1, 2, 3]
    english = np.stack([embedder.embed_query(original) for original, _ in TOPICS["English"]])
    assert list((english @ originals.T).argmax(axis=1)) == [0, 1, 2, 3]
