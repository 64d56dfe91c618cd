"""The offline extractor keeps everything a person says, in any language, unless it carries nothing.

Before (issue 25): only "first-person statements" were kept, read with a list of
English pronouns (and 我), so 私の名前は太郎です, 제 이름은 민수입니다 and Меня зовут
Алексей were dropped, and so was every LoCoMo turn authored by the speaker's name.
"""

from __future__ import annotations

import unicodedata

import pytest

from memory_app.extraction import OfflineExtractor, drop_reason
from memory_app.models import Kind

AGENT = "weather_agent"


def turn(author: str, text: str, *, role: str | None = None, **fields) -> dict:
    role = role or ("model" if author == AGENT else "user")
    return {"author": author, "content": {"role": role, "parts": [{"text": text}]}, **fields}


def kept(*events: dict, known: list[tuple[str, str]] = ()) -> list:
    numbered = [{"id": f"e{i}", **event} for i, event in enumerate(events)]
    return OfflineExtractor().extract(numbered, known=list(known))


SAID = [
    "The ADK is a great toolkit.",
    "私の名前は太郎です",
    "제 이름은 민수입니다",
    "Меня зовут Алексей",
    "我喜欢机器学习",
    "اسمي ليلى وأعيش في القاهرة",
    "私はPythonでADKを使っています",
    unicodedata.normalize("NFD", "Meet at the Café"),
    "Çà et là, j'ai vécu à Zürich.",
    "What's the weather in Paris?",  # a question says what the person cares about
    "The Eiffel Tower is in Paris.",
    "Yes, every Sunday!",
    "ok, see you at 5pm at the station",
]


@pytest.mark.parametrize("text", SAID)
def test_whatever_a_person_says_is_kept_as_said_in_any_language(text):
    [candidate] = kept(turn("user", text))
    assert candidate.text == " ".join(text.split()) and candidate.event_ids == ("e0",)


NOTHING = [
    "Hello",
    "ok",
    "Great, thanks a lot!",
    "👍🎉",
    "...",
    "Thank you so much :)",
    "谢谢！",
    "好的",
    "ありがとうございます。",
    "감사합니다",
    "Спасибо большое!",
    "شكراً",
    "Merci beaucoup !",
    "¡Gracias!",
    "Danke schön",
    "Obrigada!",
    "Hi! 😊",
]


@pytest.mark.parametrize("text", NOTHING)
def test_greetings_thanks_and_emoji_alone_carry_nothing(text):
    event = turn("user", text)
    assert kept(event) == [] and drop_reason(event) == "carries nothing"


def test_any_author_of_a_user_role_turn_is_a_person_and_the_agents_reply_is_context_only():
    events = [
        turn("Caroline", "I went to the LGBTQ support group yesterday."),
        turn("Melanie", "That's brave! How did it feel?"),
        turn(AGENT, "I can look up support groups near you."),
        turn("user", "It felt like coming home."),
    ]
    candidates = kept(*events)

    assert [(c.author, c.text) for c in candidates] == [
        ("Caroline", "I went to the LGBTQ support group yesterday."),
        ("Melanie", "That's brave! How did it feel?"),
        ("user", "It felt like coming home."),
    ]
    assert candidates[2].context == "I can look up support groups near you."
    assert drop_reason(events[2]) == "not a person's turn"


def test_tool_traffic_fragments_and_failures_are_not_memories():
    response = {
        "author": AGENT,
        "content": {
            "role": "user",
            "parts": [{"function_response": {"name": "get_weather", "response": {"result": "I live in the cloud"}}}],
        },
    }
    events = {
        "function response": response,
        "streamed fragment": turn("user", "I prefer te", partial=True),
        "failed turn": turn("user", "I prefer errors.", error_code="MODEL_ERROR"),
        "no text": {"author": "user", "content": {"role": "user", "parts": []}},
    }
    assert {reason: drop_reason(event) for reason, event in events.items()} == {reason: reason for reason in events}
    assert kept(*events.values()) == []


def test_a_restated_preference_supersedes_the_old_one_but_not_another_kind():
    [celsius] = kept(turn("user", "Actually I prefer Celsius now."), known=[("m1", "I prefer Fahrenheit.")])
    [seats] = kept(turn("user", "I prefer window seats."), known=[("m1", "I prefer Fahrenheit.")])
    assert celsius.supersedes == ("m1",) and seats.supersedes == ()


REPLACED = [  # (known, said later): a new value of something a person has one of
    ("I live in Paris.", "I live in Berlin now."),
    ("我住在北京。", "我现在住在上海。"),
    ("私の名前は太郎です。", "私の名前は花子です。"),
    ("제 이름은 민수입니다.", "제 이름은 지수입니다."),
    ("Меня зовут Алексей.", "Меня зовут Иван."),
    ("أسكن في القاهرة", "أسكن في دبي الآن"),
    ("Je travaille chez Renault.", "Je travaille chez Peugeot maintenant."),
    ("Ich wohne in München.", "Ich wohne jetzt in Köln."),
    ("Vivo en Sevilla.", "Ahora vivo en Málaga."),
    ("My favourite colour is blue.", "My favourite colour is green."),
]
ADDED = [  # (known, said later): both hold
    ("I like apples.", "I like bananas."),
    ("我喜欢猫。", "我喜欢狗。"),
    ("Я люблю джаз.", "Я люблю рок."),
    ("私は猫が好きです。", "私は犬が好きです。"),
    ("I went to the gym today.", "I went to the cinema today."),
    ("I have a dog named Rex.", "I have a cat named Miso."),
    ("I live in Paris.", "I live in Paris with my wife."),  # adds to it, replaces nothing
    ("Ana: That was fun, Tom!", "Ana: That sounds fun, Tom!"),  # names frame nothing: "that … fun" is no attribute
    (
        "I live in Paris and I teach maths at a lycée near the Bastille, three days a week since 2019.",
        "I live in Lyon.",
    ),  # holds more than the home: not replaced
]


@pytest.mark.parametrize(("known", "said"), REPLACED, ids=[said for _, said in REPLACED])
def test_a_new_value_replaces_the_old_in_every_language(known, said):
    """Before: only English patterns ("I live in …") could replace; 私の名前は… never did."""
    [candidate] = kept(turn("user", said), known=[("m1", known)])
    assert candidate.supersedes == ("m1",)


@pytest.mark.parametrize(("known", "said"), ADDED, ids=[said for _, said in ADDED])
def test_what_adds_to_a_memory_replaces_nothing(known, said):
    [candidate] = kept(turn("user", said), known=[("m1", known)])
    assert candidate.supersedes == ()


def test_the_same_slot_twice_in_one_session_keeps_the_later_value():
    texts = [
        c.text
        for c in kept(
            turn("user", "I prefer Fahrenheit."), turn(AGENT, "Okay."), turn("user", "Hmm, no. I prefer Celsius.")
        )
    ]
    assert texts == ["Hmm, no. I prefer Celsius."]


def test_kinds_follow_what_was_said():
    candidates = kept(
        turn("user", "I prefer tea."),
        turn("user", "My name is Ada."),
        turn("user", "Always be brief."),
        turn("user", "I have two cats."),
    )
    assert [c.kind for c in candidates] == [Kind.PREFERENCE, Kind.PERSONAL_INFO, Kind.INSTRUCTION, Kind.FACT]


def test_a_memory_keeps_the_turn_it_answered_as_its_context():
    [candidate] = kept(
        turn(AGENT, "Which team do you support, and since when?"), turn("user", "I support Benfica, since I was a kid.")
    )
    assert candidate.context == "Which team do you support, and since when?"
