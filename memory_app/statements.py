"""What of a person's turn is worth keeping, read without a model: the offline extractor's rules.

Everything a person says is kept, in any language, unless it carries nothing: a
turn whose letters and digits, once punctuation, symbols and emoji are gone, are
none, or only words of greeting, thanks and assent (``PHATIC``, in the languages
below; every other turn is kept, so a language missing from the list loses
nothing, it only keeps its "thank you"s). Nothing is judged by its grammar:
a rule that reads English pronouns drops what a Japanese speaker says about
herself.

A statement may also fill a *slot* — a name, a home, an employer, "my favourite
colour", a preference — which labels the memory's kind (personal information,
preference). These patterns are English only and decide nothing else: what a new
statement replaces is found by meaning, in every language (``memory_app.replacement``).
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass

PHATIC_WORDS = frozenset(
    [
        "hi",
        "hello",
        "hey",
        "hiya",
        "yo",
        "thanks",
        "thank",
        "thx",
        "ty",
        "cheers",
        "you",
        "a",
        "lot",
        "so",
        "very",
        "much",
        "many",
        "ok",
        "okay",
        "k",
        "kk",
        "alright",
        "cool",
        "great",
        "nice",
        "awesome",
        "perfect",
        "fine",
        "sure",
        "bye",
        "goodbye",
        "good",
        "morning",
        "night",
        "evening",
        "afternoon",
        "day",
        "see",
        "later",
        "welcome",
        "np",
        "please",
        "hola",
        "gracias",
        "vale",
        "adiós",
        "adios",
        "buenas",
        "buenos",
        "días",
        "dias",
        "muchas",
        "bonjour",
        "salut",
        "merci",
        "beaucoup",
        "bonsoir",
        "au",
        "revoir",
        "d'accord",
        "hallo",
        "danke",
        "schön",
        "schon",
        "vielen",
        "tschüss",
        "tschuss",
        "guten",
        "tag",
        "morgen",
        "ciao",
        "grazie",
        "mille",
        "buongiorno",
        "olá",
        "ola",
        "obrigado",
        "obrigada",
        "tchau",
        "bom",
        "dia",
        "привет",
        "спасибо",
        "большое",
        "пока",
        "здравствуйте",
        "ок",
        "хорошо",
        "ладно",
        "مرحبا",
        "شكرا",
        "جزيلا",
        "أهلا",
        "اهلا",
        "سلام",
    ]
)
"""Words of greeting, thanks and assent: a turn of these alone carries nothing to remember."""
PHATIC_PHRASES = frozenset(
    [
        "谢谢",
        "谢谢你",
        "多谢",
        "你好",
        "您好",
        "好的",
        "好",
        "嗯",
        "嗯嗯",
        "再见",
        "拜拜",
        "哈哈",
        "哈哈哈",
        "了解",
        "没问题",
        "ありがとう",
        "ありがとうございます",
        "どうも",
        "こんにちは",
        "おはよう",
        "おはようございます",
        "こんばんは",
        "さようなら",
        "了解です",
        "안녕",
        "안녕하세요",
        "감사합니다",
        "고마워",
        "고마워요",
        "고맙습니다",
        "좋아요",
        "네네",
    ]
)
"""The same, in scripts written without spaces: a whole turn equal to one of these carries nothing."""

_REQUEST = re.compile(
    r"^(please,? )?(remember|note that|keep in mind|always|never|don't|do not|call me|from now on)\b", re.I
)
_LEAD_IN = re.compile(r"^((actually|well|oh|so|ok|okay|also|and|but|now|by the way|btw|hey|hi|hello)[,!]?\s+)+", re.I)
_SENTENCE_END = re.compile(r"(?<=[.!?。！？])\s*")
_TRAILING_TIME = re.compile(r"[\s,]+(now|instead|these days|anymore|from now on|nowadays|again)$", re.I)


def carries_nothing(text: str) -> bool:
    """Whether a turn holds nothing worth remembering: no letter or digit, or only greetings and thanks."""
    letters = "".join(
        ch if unicodedata.category(ch)[0] in "LN" or ch == "'" else " "
        for ch in unicodedata.normalize("NFKC", text).casefold()
        if unicodedata.category(ch) != "Mn"  # combining marks (Arabic's vowel signs, decomposed accents)
    )
    words = letters.replace("\u2019", "'").split()
    if not words:
        return True
    return all(word.strip("'") in PHATIC_WORDS for word in words) or "".join(words) in PHATIC_PHRASES


@dataclass(frozen=True)
class Slot:
    key: str
    value: str
    open: bool = False
    """A bare preference: its category is unknown, so only an alike value replaces it."""


# (pattern with a "value" group and maybe a "key" group, the key, open)
_SLOTS: list[tuple[re.Pattern[str], str, bool]] = [
    (re.compile(r"\bmy name is (?P<value>.+)", re.I), "name", False),
    (re.compile(r"\bcall me (?P<value>.+)", re.I), "name", False),
    (re.compile(r"\bmy favou?rite (?P<key>[\w' -]+?) (?:is|are) (?P<value>.+)", re.I), "favourite {key}", False),
    (re.compile(r"\bi (?:now |still )?live in (?P<value>.+)", re.I), "home", False),
    (re.compile(r"\bi(?:'ve| have)? (?:just )?moved to (?P<value>.+)", re.I), "home", False),
    (re.compile(r"\bi (?:now )?work (?:at|for) (?P<value>.+)", re.I), "employer", False),
    (re.compile(r"\bi(?:'m| am) (?P<value>\d+) years old", re.I), "age", False),
    (
        re.compile(r"\bmy (?P<key>birthday|email(?: address)?|phone(?: number)?|address) is (?P<value>.+)", re.I),
        "{key}",
        False,
    ),
    (re.compile(r"\bmy (?P<key>\w+)'s name is (?P<value>.+)", re.I), "{key}'s name", False),
    (re.compile(r"\bi (?:now |really |actually |much )?prefer (?P<value>.+)", re.I), "preference", True),
]


def sentences(text: str) -> list[str]:
    return [s.strip() for s in _SENTENCE_END.split(text) if s.strip()]


def is_request(text: str) -> bool:
    return any(_REQUEST.match(_LEAD_IN.sub("", s)) for s in sentences(text))


_CLAUSE = re.compile(r",\s*|\s+(?:and|but)\s+|[;；，]\s*")


def slots(text: str) -> list[Slot]:
    """The slots the statements of ``text`` fill, one per clause (key lower-cased, value without "now" and the like)."""
    found = []
    for sentence in sentences(text):
        for clause in _CLAUSE.split(_LEAD_IN.sub("", sentence).rstrip(" .!。！")):
            for pattern, key, is_open in _SLOTS:
                match = pattern.search(_LEAD_IN.sub("", clause))
                if match:
                    value = _TRAILING_TIME.sub("", match["value"]).strip(" ,")
                    name = key.format(key=(match.groupdict().get("key") or "").strip()).lower()
                    found.append(Slot(key=name, value=value, open=is_open))
                    break
    return found
