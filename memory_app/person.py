"""A person's statement in the third person, without a model: "I like tea" → "The user likes tea".

Vertex's ``enable_third_person_memories`` for the offline extractor, which keeps what a person
said as said. What it does, by language (a statement with no first person is left as it is):

* English: the pronouns and the verb after "I" ("I have" → "the user has", "I don't" →
  "the user doesn't", "I went" stays, "my" → "the user's", "me" → "the user").
* Chinese, Japanese, Korean: the pronoun becomes 用户 / ユーザー / 사용자 (with its particle);
  their verbs do not change with the person.
* Russian, French, Spanish, German, Portuguese, Italian: their verbs (and Russian's gender) change
  with the person in ways a few rules get wrong, so the statement is quoted as the user's, in its
  own language: «Со слов пользователя: «Я люблю чай»». Any other language is left as said.

A model extracting (``LlmExtractor``) is asked for third-person memories instead.
"""

from __future__ import annotations

import re

_ADVERBS = frozenset(
    [
        "really",
        "also",
        "just",
        "always",
        "never",
        "usually",
        "often",
        "sometimes",
        "still",
        "actually",
        "only",
        "rarely",
        "mostly",
        "totally",
        "absolutely",
        "definitely",
        "generally",
        "truly",
        "mainly",
        "seldom",
        "even",
    ]
)
_MODALS = frozenset(
    [
        "can",
        "can't",
        "cannot",
        "could",
        "couldn't",
        "will",
        "won't",
        "would",
        "wouldn't",
        "should",
        "shouldn't",
        "must",
        "mustn't",
        "might",
        "may",
        "shall",
        "was",
        "wasn't",
        "did",
        "didn't",
        "had",
        "hadn't",
    ]
)
_IRREGULAR = {"am": "is", "have": "has", "do": "does", "don't": "doesn't", "dont": "doesn't", "haven't": "hasn't"}
_IRREGULAR |= {"were": "was", "weren't": "wasn't", "go": "goes", "be": "is"}
_PAST = frozenset(
    [
        "went",
        "got",
        "made",
        "saw",
        "said",
        "took",
        "came",
        "knew",
        "thought",
        "bought",
        "left",
        "felt",
        "found",
        "gave",
        "told",
        "became",
        "began",
        "ran",
        "wrote",
        "met",
        "lost",
        "kept",
        "spent",
        "sent",
        "built",
        "brought",
        "taught",
        "caught",
        "fought",
        "won",
        "ate",
        "drank",
        "drove",
        "flew",
        "grew",
        "heard",
        "held",
        "hurt",
        "put",
        "sat",
        "stood",
        "understood",
        "woke",
        "wore",
        "chose",
        "forgot",
        "broke",
        "spoke",
        "slept",
        "paid",
        "lent",
        "meant",
        "sold",
        "fell",
        "quit",
        "cut",
        "hit",
        "hid",
        "rode",
        "sang",
        "swam",
        "threw",
        "became",
        "read",
        "let",
        "set",
    ]
)
_PRESENT_EED = frozenset(
    ["need", "feed", "bleed", "breed", "seed", "speed", "proceed", "succeed", "exceed", "heed", "embed", "shred", "wed"]
)
_WORD = r"[A-Za-z][A-Za-z'’]*"
_SUBJECT = re.compile(rf"(?<!\band )(?<!\bor )\bI\b((?:\s+(?:{'|'.join(sorted(_ADVERBS))}))*)(\s+)({_WORD})")
_CONTRACTED = {"'m": "the user is", "'ve": "the user has", "'d": "the user would", "'ll": "the user will"}


def _third(verb: str) -> str:
    """An English verb said of "I", said of "the user"."""
    low = verb.lower().replace("’", "'")
    if low in _IRREGULAR:
        return _IRREGULAR[low]
    if low in _MODALS or low in _PAST or (low.endswith("ed") and low not in _PRESENT_EED) or "'" in low:
        return verb
    if re.search(r"[^aeiou]y$", low):
        return verb[:-1] + "ies"
    if re.search(r"(s|sh|ch|x|z|o)$", low):
        return verb + "es"
    return verb + "s"


def _english(text: str) -> str:
    text = re.sub(
        r"\bI(['’](?:m|ve|d|ll))\b",
        lambda m: _CONTRACTED[m.group(1).replace("’", "'").lower()],
        text,
    )
    text = _SUBJECT.sub(lambda m: f"the user{m.group(1)}{m.group(2)}{_third(m.group(3))}", text)
    text = re.sub(r"\bI\b", "the user", text)
    text = re.sub(r"\b[Mm]y\b", "the user's", text)
    text = re.sub(r"\b[Mm]ine\b", "the user's", text)
    text = re.sub(r"\b[Mm]yself\b", "themselves", text)
    text = re.sub(r"\b[Mm]e\b", "the user", text)
    return text[:1].upper() + text[1:]


_FIRST_PERSON_EN = re.compile(r"\b(I|my|My|me|Me|mine|myself)\b|\bI['’]")
_HAN = re.compile(r"[\u4e00-\u9fff]")
_KANA = re.compile(r"[\u3040-\u30ff]")
_HANGUL = re.compile(r"[\uac00-\ud7a3]")
_CYRILLIC = re.compile(r"[\u0400-\u04ff]")
_JAPANESE_I = re.compile(r"(私|僕|俺|わたし|あたし|ぼく|おれ)(?!たち|達|ども|立|的|物)")
_KOREAN = [
    (re.compile(r"(?<![가-힣])(저|나)(는|가|를|도|에게|한테)(?![가-힣])"), r"사용자\2"),
    (re.compile(r"(?<![가-힣])(제|내)(가|게)(?![가-힣])"), r"사용자\2"),
    (re.compile(r"(?<![가-힣])(제|내|저의|나의)(?![가-힣])"), "사용자의"),
]
# Other languages: words that say a statement is about the speaker, and how the user is quoted.
_QUOTED = [
    (
        "ru",
        re.compile(r"(?i)(?<!\w)(я|мне|меня|мной|мой|моя|моё|мое|мои|моего|моей|моих)(?!\w)"),
        "Со слов пользователя: «{}»",
    ),
    ("fr", re.compile(r"(?i)(?<!\w)(je|j['’]|moi|mon|ma|mes)(?!\w)|(?<!\w)j['’]"), "Selon l'utilisateur : « {} »"),
    (
        "de",
        re.compile(r"(?i)(?<!\w)(ich|mich|mir|mein|meine|meinen|meinem|meiner|meines)(?!\w)"),
        "Laut dem Nutzer: „{}“",
    ),
    ("pt", re.compile(r"(?i)(?<!\w)(eu|meu|minha|meus|minhas|comigo)(?!\w)"), "Segundo o usuário: «{}»"),
    ("it", re.compile(r"(?i)(?<!\w)(io|mio|mia|miei|mie|mi (piace|piacciono|chiamo))(?!\w)"), "Secondo l'utente: «{}»"),
    ("es", re.compile(r"(?i)(?<!\w)(yo|me|mi|mis|conmigo)(?!\w)"), "Según el usuario: «{}»"),
]
_NOT_ENGLISH = re.compile(r"(?i)(?<!\w)(je|ich|yo|eu|io|und|el|la|los|las|és|é|è|que|de|gusta)(?!\w)")


def third_person(text: str) -> str:
    """``text`` as a statement about the user (see the module's languages); as it was without a first person."""
    if _HANGUL.search(text):
        for pattern, replacement in _KOREAN:
            text = pattern.sub(replacement, text)
        return text
    if _KANA.search(text):
        return _JAPANESE_I.sub("ユーザー", text)
    if _HAN.search(text):
        return re.sub(r"我(?!们|們)", "用户", text)
    if not _CYRILLIC.search(text) and _FIRST_PERSON_EN.search(text) and not _NOT_ENGLISH.search(text):
        return _english(text)
    for _, marker, frame in _QUOTED:
        if marker.search(text):
            return frame.format(text)
    return text
