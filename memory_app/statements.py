"""What a user states about themselves, read without a model: the offline extractor's rules.

A user turn is split into sentences. Questions are dropped ("And in Madrid?"),
and the turn is kept only if one of its statements is in the first person
("I …", "my …", "we …", "我…") or asks the agent to remember or behave
("remember …", "please always …", "call me …"). A statement may fill a *slot*:
something a person has one of at a time — a name, a home, an employer, a
birthday, "my favourite colour", a preference ("I prefer …"). A newer value of
a slot replaces the older memory. A keyed slot names its own category ("my
favourite colour"); a bare preference does not, so "I prefer Celsius" replaces
"I prefer Fahrenheit" only when the two values are alike (the caller decides,
with embeddings), not "I prefer window seats".
"""

from __future__ import annotations

import re
from dataclasses import dataclass

_SENTENCE_END = re.compile(r"(?<=[.!?。！？])\s*")
_QUESTION_START = re.compile(
    r"^(and |but |so |also |then |ok,? |okay,? )?(what|what's|where|when|who|whom|whose|which|why|how|can|could|would"
    r"|will|shall|should|do|does|did|is|are|am|was|were|have|has|had|may|might|any)\b",
    re.I,
)
_FIRST_PERSON = re.compile(r"\b(i|i'm|i've|i'd|i'll|me|my|mine|myself|we|we're|we've|our|ours|us)\b|我", re.I)
_REQUEST = re.compile(
    r"^(please,? )?(remember|note that|keep in mind|always|never|don't|do not|call me|from now on)\b", re.I
)
_LEAD_IN = re.compile(r"^((actually|well|oh|so|ok|okay|also|and|but|now|by the way|btw|hey|hi|hello)[,!]?\s+)+", re.I)
_TRAILING_TIME = re.compile(r"[\s,]+(now|instead|these days|anymore|from now on|nowadays|again)$", re.I)


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
    (re.compile(r"\bmy (?P<key>birthday|email(?: address)?|phone(?: number)?|address) is (?P<value>.+)", re.I),
     "{key}", False),
    (re.compile(r"\bmy (?P<key>\w+)'s name is (?P<value>.+)", re.I), "{key}'s name", False),
    (re.compile(r"\bi (?:now |really |actually |much )?prefer (?P<value>.+)", re.I), "preference", True),
]


def sentences(text: str) -> list[str]:
    return [s.strip() for s in _SENTENCE_END.split(text) if s.strip()]


def is_question(sentence: str) -> bool:
    if _REQUEST.match(_LEAD_IN.sub("", sentence)):
        return False
    return sentence.rstrip().endswith(("?", "？")) or bool(_QUESTION_START.match(_LEAD_IN.sub("", sentence)))


def about_the_user(text: str) -> str:
    """The turn's statements if one of them is about the user or a request to the agent; else ""."""
    statements = [s for s in sentences(text) if not is_question(s)]
    if any(_FIRST_PERSON.search(s) or _REQUEST.match(_LEAD_IN.sub("", s)) for s in statements):
        return " ".join(statements)
    return ""


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
