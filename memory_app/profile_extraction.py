"""Reading profile fields out of a conversation: with a model (any schema), or offline (common facts, in words).

**With a model** (``COGNIZES_MEMORY_MODEL``, the one memory extraction uses), the schemas and the current
profile go into one prompt and the model answers ``{schema_id: {field: value}}`` as JSON; any field
of any schema can be filled, in any language the model reads.

**Offline**, a person's turns are matched against statement patterns of a few facts a profile usually
holds — a name, where one lives, where one works, one's age — in English, French, Spanish, Portuguese,
German, Italian, Russian, Chinese, Japanese and Korean ("I live in Lyon", "j'habite à Lyon",
"我住在上海", "東京に住んでいます", "서울에 살아요", "я живу в Москве"), and a field takes such a fact when
its name or description names it (``city``, ``home_city``, ``location``; ``name``, ``first_name``…;
a description saying "城市" or "where the user lives"). Besides, "my <field> is X" fills any field
(the field's name in words: ``favorite_color`` ← "my favourite colour is teal") and
"我的<description>是X" / "私の<description>はXです" / "mon <description> est X" fill a field whose
description is written in the conversation's language. What it cannot do: understand anything said
otherwise ("Lyon has been home for a year"), infer (a city from a street), decline words (Russian
"в Москве" is stored as "Москве"), or fill booleans and objects. Values are stored as said.

Either way every value is checked against its field's schema before it is kept (``profile_schema``).
"""

from __future__ import annotations

import functools
import json
import logging
import re
from dataclasses import dataclass
from typing import Any

from cognizes.infra.models import ask
from memory_app.extraction import LlmExtractor, drop_reason, event_text, get_extractor
from memory_app.profile_schema import value_error
from memory_app.services import MAX_MEMORY_LENGTH

logger = logging.getLogger(__name__)

Profile = dict[str, Any]
"""A profile's data: field name → value."""

# A value runs to the end of its clause: punctuation or a conjunction in the languages below.
_END = re.compile(
    r"\s*(?:[.,;:!?。，、；！？()（）]|\s(?:and|but|because|et|mais|y|pero|e|mas|und|aber|ma|и|но|а)\s).*$",
    re.I | re.S,
)
_TRAILING = re.compile(
    r"\s+(?:now|these days|nowadays|anymore|again|from now on|maintenant|ahora|agora|jetzt|adesso|сейчас|теперь)$",
    re.I,
)
_CJK_TAIL = re.compile(r"(?:了|啦|呢|吧|です|だ|でした|입니다|이에요|예요|이야|야)+$")
_W = r"[^\s.,;:!?。，、；！？]"  # a character of a value, CJK included
_CJK_VALUE = r"[^\s.,;:!?。，、；！？はがもにで에서]+?"


@dataclass(frozen=True)
class Fact:
    """One kind of fact a profile holds, the field names that ask for it, and how people state it."""

    name: str
    field_words: frozenset[str]
    """Words of a field's name (split at _ - and case) that all name this fact: {home, city} ⊆ them."""
    cues: tuple[str, ...]
    """Words of a field's description naming it, in any language."""
    patterns: tuple[re.Pattern[str], ...]
    number: bool = False


def _p(*patterns: str) -> tuple[re.Pattern[str], ...]:
    return tuple(re.compile(p, re.I) for p in patterns)


FACTS = (
    Fact(
        "name",
        frozenset({"name", "full", "first", "given", "nickname", "preferred", "user", "username", "display"}),
        ("name", "nom", "nombre", "nome", "имя", "名字", "姓名", "名前", "이름"),
        _p(
            rf"\bmy name(?:'s| is) (?P<value>{_W}+(?: {_W}+){{0,3}})",
            rf"\b(?:call me|i'?m called|i am called) (?P<value>{_W}+(?: {_W}+){{0,3}})",
            rf"\b(?:je m'appelle|mon nom est|appelle-moi) (?P<value>{_W}+(?: {_W}+){{0,3}})",
            rf"\b(?:me llamo|mi nombre es|me chamo|chamo-me|meu nome é|mi chiamo|il mio nome è) "
            rf"(?P<value>{_W}+(?: {_W}+){{0,3}})",
            rf"\b(?:ich hei(?:ß|ss)e|mein name ist) (?P<value>{_W}+(?: {_W}+){{0,3}})",
            rf"(?:меня зовут|мо[её] имя)\s+(?P<value>{_W}+(?: {_W}+){{0,3}})",
            r"我(?:的名字)?(?:叫|是)(?P<value>[^\s，。！？,.!?的]+)",
            r"(?:私|わたし|僕|俺)の名前は(?P<value>[^\s、。！？]+?)(?:です|だ)?(?:[。！!]|$)",
            r"(?P<value>[^\s、。！？はが]+)と(?:申します|いいます|言います)",
            r"(?:제|내|저의) 이름은 (?P<value>[^\s.,!?]+?)(?:입니다|이에요|예요|이야|야)?(?:[.!?]|$|\s)",
        ),
    ),
    Fact(
        "home",
        frozenset({"city", "home", "location", "residence", "current", "town", "lives", "in", "place", "of", "where"}),
        (
            "city",
            "where the user lives",
            "lives",
            "ville",
            "ciudad",
            "cidade",
            "stadt",
            "città",
            "город",
            "城市",
            "住",
            "都市",
            "도시",
            "사는",
        ),
        _p(
            rf"\bi (?:now |currently |still |also )?live in (?P<value>{_W}+(?: {_W}+){{0,3}})",
            rf"\bi(?:'ve| have)? (?:just |recently )?(?:moved|relocated) to (?P<value>{_W}+(?: {_W}+){{0,3}})",
            rf"\bi(?:'m| am) (?:now )?based in (?P<value>{_W}+(?: {_W}+){{0,3}})",
            rf"\b(?:j'habite|je vis|j'ai déménagé|je suis installée?) (?:à|a|en|au) (?P<value>{_W}+(?: {_W}+){{0,3}})",
            rf"\b(?:vivo|resido) en (?P<value>{_W}+(?: {_W}+){{0,3}})",
            rf"\b(?:me mudé|me he mudado) a (?P<value>{_W}+(?: {_W}+){{0,3}})",
            rf"\b(?:moro|vivo) em (?P<value>{_W}+(?: {_W}+){{0,3}})",
            rf"\b(?:me mudei|mudei-me) para (?P<value>{_W}+(?: {_W}+){{0,3}})",
            rf"\bich (?:wohne|lebe) (?:jetzt )?in (?P<value>{_W}+(?: {_W}+){{0,3}})",
            rf"\bich bin nach (?P<value>{_W}+(?: {_W}+){{0,2}}) (?:um)?gezogen",
            rf"\b(?:vivo|abito|mi sono trasferit[oa]) a (?P<value>{_W}+(?: {_W}+){{0,3}})",
            rf"\bя (?:сейчас |теперь )?(?:живу|переехал[аи]?) в (?P<value>{_W}+(?: {_W}+){{0,3}})",
            r"我(?:现在|目前)?(?:住在|搬到了?|搬去了?)(?P<value>[^\s，。！？,.!?了]+)",
            rf"(?:^|[はがも、\s])(?P<value>{_CJK_VALUE})に(?:住んで|引っ越し|引越し)",
            r"(?P<value>[^\s.,!?]+?)에 (?:살아요|살고 있어요|살고 있습니다|삽니다|살아|산다)",
            r"(?P<value>[^\s.,!?]+?)(?:으로|로) 이사(?:했어요|했습니다|했어|왔어요|왔습니다)",
        ),
    ),
    Fact(
        "employer",
        frozenset({"employer", "company", "workplace", "work", "works", "at", "organization", "organisation"}),
        ("employer", "company", "works", "employeur", "empresa", "arbeitgeber", "работ", "公司", "会社", "회사"),
        _p(
            rf"\bi (?:now |currently )?work (?:at|for) (?P<value>{_W}+(?: {_W}+){{0,3}})",
            rf"\bje travaille (?:chez|pour) (?P<value>{_W}+(?: {_W}+){{0,3}})",
            rf"\btrabajo (?:en|para) (?P<value>{_W}+(?: {_W}+){{0,3}})",
            rf"\btrabalho (?:na|no|em|para) (?P<value>{_W}+(?: {_W}+){{0,3}})",
            rf"\bich arbeite (?:bei|für) (?P<value>{_W}+(?: {_W}+){{0,3}})",
            rf"\blavoro (?:presso|per|da) (?P<value>{_W}+(?: {_W}+){{0,3}})",
            rf"\bя работаю в (?P<value>{_W}+(?: {_W}+){{0,3}})",
            r"我(?:现在)?在(?P<value>[^\s，。！？,.!?]+?)(?:工作|上班)",
            rf"(?:^|[はがも、\s])(?P<value>{_CJK_VALUE})で(?:働いて|勤めて)",
            r"(?P<value>[^\s.,!?]+?)에서 (?:일해요|일합니다|일하고 있어요|근무해요|근무합니다)",
        ),
    ),
    Fact(
        "age",
        frozenset({"age", "years", "old"}),
        ("age", "âge", "edad", "idade", "alter", "età", "возраст", "年龄", "年齢", "나이"),
        _p(
            r"\bi(?:'m| am) (?P<value>\d{1,3}) years? old",
            r"\bj'ai (?P<value>\d{1,3}) ans\b",
            r"\b(?:tengo|tenho) (?P<value>\d{1,3}) a(?:ñ|n)os\b",
            r"\bich bin (?P<value>\d{1,3}) jahre",
            r"\bho (?P<value>\d{1,3}) anni\b",
            r"\bмне (?P<value>\d{1,3}) (?:лет|год|года)\b",
            r"我(?:今年)?(?P<value>\d{1,3})岁",
            r"(?P<value>\d{1,3})歳",
            r"(?P<value>\d{1,3})(?:살|세)",
        ),
        number=True,
    ),
)
_NAME_SPLIT = re.compile(r"[_\-\s]+|(?<=[a-z0-9])(?=[A-Z])")


def field_words(name: str) -> list[str]:
    return [word.casefold() for word in _NAME_SPLIT.split(name) if word]


def fact_of(field: str, schema: dict[str, Any]) -> Fact | None:
    """The fact a field asks for, by its name's words or else its description's, or None."""
    words = set(field_words(field))
    for fact in FACTS:
        if words and words <= fact.field_words and words & {fact.name, *_HEADS.get(fact.name, ())}:
            return fact
    description = f"{schema.get('title', '')} {schema.get('description', '')}".casefold()
    return next((fact for fact in FACTS if description.strip() and any(c in description for c in fact.cues)), None)


_HEADS = {
    "name": ("name", "nickname", "username"),
    "home": ("city", "home", "location", "residence", "town"),
    "employer": ("employer", "company", "workplace", "organization", "organisation"),
    "age": ("age",),
}
"""The word a field's name must have for the fact (``current_city`` is a home, ``current`` alone is not)."""


@functools.lru_cache(maxsize=1024)
def _generic(field: str, described: str) -> tuple[re.Pattern[str], ...]:
    """ "my <field in words> is X", and the same with the field's description in other languages (compiled once)."""
    words = " ".join(re.escape(w) for w in field_words(field)).replace("favorite", "favou?rite")
    words = words.replace("color", "colou?r")
    patterns = [rf"\bmy {words}(?: is|'s| are) (?P<value>{_W}+(?: {_W}+){{0,3}})"]
    if 0 < len(described) <= 24:
        d = re.escape(described)
        patterns += [
            rf"我的{d}(?:是|叫)(?P<value>[^\s，。！？,.!?]+)",
            rf"(?:私の)?{d}は(?P<value>[^\s、。！？]+?)(?:です|だ)",
            rf"(?:제|내|저의) {d}(?:은|는) (?P<value>[^\s.,!?]+?)(?:입니다|이에요|예요|이야|야)?(?:[.!?]|$|\s)",
            rf"\b(?:mon|ma|mes) {d} (?:est|sont) (?P<value>{_W}+(?: {_W}+){{0,3}})",
            rf"\b(?:mi|mis) {d} (?:es|son) (?P<value>{_W}+(?: {_W}+){{0,3}})",
            rf"\b(?:meu|minha) {d} é (?P<value>{_W}+(?: {_W}+){{0,3}})",
            rf"\b(?:mein|meine) {d} ist (?P<value>{_W}+(?: {_W}+){{0,3}})",
            rf"(?:мой|моя|моё|мое) {d}\s*(?:—|-|это)?\s*(?P<value>{_W}+(?: {_W}+){{0,3}})",
        ]
    return tuple(re.compile(p, re.I) for p in patterns)


def _typed(raw: str, schema: dict[str, Any], current: Any) -> Any:
    """A said value as the field's type: text, a number, a list grown by it, an enum member; None if it cannot be."""
    value = _TRAILING.sub("", _END.sub("", raw.strip())).strip(" '\"")
    value = _CJK_TAIL.sub("", value).strip()
    if not value:
        return None
    kind = schema.get("type", "STRING")
    if schema.get("enum"):
        folded = value.casefold()
        return next((m for m in schema["enum"] if m.casefold() == folded or m.casefold() in folded.split()), None)
    if kind in ("INTEGER", "NUMBER"):
        digits = re.search(r"-?\d+(?:\.\d+)?", value)
        if digits is None:
            return None
        number = float(digits.group())
        return int(number) if kind == "INTEGER" else number
    if kind == "ARRAY" and (schema.get("items") or {}).get("type", "STRING") == "STRING":
        listed = list(current) if isinstance(current, list) else []
        return listed if value in listed else [*listed, value]
    return value if kind == "STRING" else None


def offline_values(texts: list[str], schema: dict[str, Any], current: Profile) -> Profile:
    """Field values the statements in ``texts`` give, the later statement of a field winning."""
    found: Profile = {}
    for field, field_schema in (schema.get("properties") or {}).items():
        fact = fact_of(field, field_schema)
        described = str(field_schema.get("description") or field_schema.get("title") or "").strip()
        patterns = (*(fact.patterns if fact else ()), *_generic(field, described))
        for text in texts:
            for pattern in patterns:
                match = pattern.search(text)
                if match is None:
                    continue
                value = _typed(match.group("value"), field_schema, found.get(field, current.get(field)))
                if value is not None:
                    found[field] = value
                break
    return found


_INSTRUCTIONS = """You keep structured profiles of a user of an AI agent.
From the conversation, fill the fields of the profile schemas below with what the user stated about
themselves. Leave out fields the conversation does not state; a field stated again with a new value
takes the new value. Keep values in the language they were said in.
Schemas (JSON, Gemini schema format), by schema id:
{schemas}
Current profiles:
{current}
Answer with JSON only: an object {{"<schema id>": {{"<field>": value}}}} with only the fields to set."""


def model_values(model: Any, lines: list[str], schemas: dict[str, dict[str, Any]], current: dict[str, Profile]) -> Any:
    """The model's answer, parsed: ``{schema_id: {field: value}}`` (not yet checked against the schemas)."""
    prompt = "Conversation:\n" + "\n".join(lines)
    system = _INSTRUCTIONS.format(
        schemas=json.dumps(schemas, ensure_ascii=False), current=json.dumps(current, ensure_ascii=False)
    )
    answer = ask(model, prompt, system_instruction=system)
    start, end = answer.find("{"), answer.rfind("}")
    if start < 0 or end < start:
        raise ValueError(f"no JSON object in the model's answer: {answer[:200]!r}")
    parsed = json.loads(answer[start : end + 1])
    if not isinstance(parsed, dict):
        raise ValueError("the model's answer is not an object")
    return parsed


def extract_profiles(
    events: list[dict[str, Any]],
    schemas: dict[str, dict[str, Any]],
    current: dict[str, Profile],
    *,
    model: Any = None,
) -> dict[str, Profile]:
    """``{schema_id: {field: value}}``: the fields ``events`` state, each value fitting its field's schema.

    ``model`` (an ADK model; by default the one memory extraction uses, if any) is asked ``ATTEMPTS`` times,
    as memory extraction does; offline rules read the person's turns without one, and when it keeps failing.
    """
    if not schemas:
        return {}
    if model is None:
        extractor = get_extractor()
        model = extractor.model if isinstance(extractor, LlmExtractor) else None
    found: Any = None
    if model is not None:
        lines = [f"{e.get('author', '?')}: {text}" for e in events if (text := event_text(e))]
        for attempt in range(1, LlmExtractor.ATTEMPTS + 1):
            try:
                found = model_values(model, lines, schemas, current) if lines else {}
                break
            except Exception as error:  # the model is outside: any failure of it is the model's
                logger.warning("profile extraction: attempt %d failed: %s: %s", attempt, type(error).__name__, error)
    if found is None:
        texts = [event_text(e) for e in events if drop_reason(e) is None]
        found = {
            schema_id: offline_values(texts, schema, current.get(schema_id, {}))
            for schema_id, schema in schemas.items()
        }
    return {schema_id: _fitting(schema_id, found.get(schema_id), schema) for schema_id, schema in schemas.items()}


def _fitting(schema_id: str, values: Any, schema: dict[str, Any]) -> Profile:
    """The values that are fields of the schema and fit them; the rest is logged and dropped."""
    if not isinstance(values, dict):
        return {}
    properties = schema.get("properties") or {}
    kept = {}
    for field, value in values.items():
        if field not in properties or value is None:
            continue
        if len(json.dumps(value, ensure_ascii=False)) > MAX_MEMORY_LENGTH:  # a model's runaway answer
            logger.info(
                "profile %s: the value of %s is over %d characters: not kept", schema_id, field, MAX_MEMORY_LENGTH
            )
            continue
        error = value_error(properties[field], value)
        if error is not None:
            logger.info("profile %s: %s=%r does not fit its schema (%s): not kept", schema_id, field, value, error)
            continue
        kept[field] = value
    return kept
