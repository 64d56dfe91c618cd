"""Extraction: turn new conversation events into memory candidates.

Two extractors behind one interface. ``LlmExtractor`` asks a model (any ADK
model; Gemini when an API key is configured) for durable facts in Vertex AI
Memory Bank's topics and for which known memories they contradict.
``OfflineExtractor`` needs no model: every turn a person said becomes a
candidate unless it carries nothing (``memory_app.statements``), and a new
value of something one has one of (a name, a home, a preference) supersedes the old.
Events are the stored ADK event JSON (dicts).
"""

from __future__ import annotations

import json
import logging
import os
import re
from abc import ABC, abstractmethod
from datetime import UTC, datetime
from typing import Any

from django.conf import settings

from cognizes.infra.models import ask, model_named
from memory_app import replacement, statements
from memory_app.models import Kind
from memory_app.person import third_person
from memory_app.services import Candidate, Customization

logger = logging.getLogger(__name__)

_KIND_PATTERNS = [
    (Kind.PREFERENCE, re.compile(r"\b(i (really )?(prefer|like|love|enjoy|hate|dislike)|my favou?rite)\b", re.I)),
    (
        Kind.PERSONAL_INFO,
        re.compile(r"\b(my name is|i am|i'm|i live|i work|my (wife|husband|son|daughter|birthday))\b", re.I),
    ),
    (Kind.INSTRUCTION, re.compile(r"^(please |always |never |don't |do not |remember )", re.I)),
]


class Extractor(ABC):
    @abstractmethod
    def extract(
        self,
        events: list[dict[str, Any]],
        *,
        known: list[tuple[str, str]],
        session_id: str = "",
        config: Customization | None = None,
    ) -> list[Candidate]:
        """Candidates from ``events``; ``known`` is (id, text) of the user's current memories.

        ``config`` is the customization of the events' scope (memory_app.services.bank): its topics
        and examples steer a model; its ``third_person`` says how a memory is worded.
        """


def event_text(event: dict[str, Any]) -> str:
    """The visible text of an event: its text parts, without thoughts or tool traffic."""
    parts = (event.get("content") or {}).get("parts") or []
    texts = [p["text"] for p in parts if p.get("text") and not p.get("thought")]
    return " ".join(" ".join(texts).split())


def _event_time(event: dict[str, Any]) -> datetime | None:
    timestamp = event.get("timestamp")
    return datetime.fromtimestamp(timestamp, tz=UTC) if timestamp else None


class OfflineExtractor(Extractor):
    """Every turn a person said that carries something becomes a candidate, as said; no model.

    A person's turn is one whose content has the role ``user``, whoever its
    author (ADK writes ``"user"``; a multi-party session may write names) —
    never a function response, the agent's replies, failed turns or streamed
    fragments; the turn before it is kept as its context (``drop_reason`` says
    why any other event is not a memory). A statement that says a known one again with a
    new value of something a person has one of (a home, a name, a preference) supersedes it,
    in any language (``memory_app.replacement``): "I prefer Celsius" replaces "I prefer
    Fahrenheit", "I like bananas" does not replace "I like apples". A scope customized for the third
    person gets it worded about the user (``memory_app.person``: "The user likes tea").
    """

    def extract(
        self,
        events: list[dict[str, Any]],
        *,
        known: list[tuple[str, str]],
        session_id: str = "",
        config: Customization | None = None,
    ) -> list[Candidate]:
        candidates: list[Candidate] = []
        before = ""  # the turn this one answers or continues: the memory's context
        for event in events:
            if not _readable(event):
                continue
            said, before = before, event_text(event) or before
            if drop_reason(event) is not None:
                continue
            text = event_text(event)
            kind = _offline_kind(text)  # read as said: its patterns are the speaker's own words
            if config is not None and config.third_person:
                text = third_person(text)
            # A value given twice in these events: the later holds.
            earlier = replacement.replaced(text, [(str(i), c.text) for i, c in enumerate(candidates)])
            candidates = [c for i, c in enumerate(candidates) if str(i) not in earlier]
            candidates.append(
                Candidate(
                    text=text,
                    author=event.get("author", ""),
                    kind=kind,
                    importance=0.7 if kind != Kind.FACT else 0.5,
                    event_ids=(event["id"],) if event.get("id") else (),
                    event_time=_event_time(event),
                    session_id=session_id,
                    metadata=dict(event.get("custom_metadata") or {}),
                    supersedes=replacement.replaced(text, known),
                    context=said,
                )
            )
        return candidates


DROP_REASONS = (
    "streamed fragment",
    "failed turn",
    "function response",
    "not a person's turn",
    "no text",
    "carries nothing",
)


def drop_reason(event: dict[str, Any]) -> str | None:
    """Why the offline extractor makes no memory of ``event`` (one of ``DROP_REASONS``), or None: it does."""
    if event.get("partial"):
        return DROP_REASONS[0]
    if event.get("error_code") or event.get("error_message"):
        return DROP_REASONS[1]
    parts = (event.get("content") or {}).get("parts") or []
    if any(part.get("function_response") or part.get("functionResponse") for part in parts):
        return DROP_REASONS[2]
    if not _said_by_a_person(event):
        return DROP_REASONS[3]
    text = event_text(event)
    if not text:
        return DROP_REASONS[4]
    if statements.carries_nothing(text):
        return DROP_REASONS[5]
    return None


def _readable(event: dict[str, Any]) -> bool:
    """An event extractors read: final (not a partial chunk), and not a failed turn (its error is no memory)."""
    return not event.get("partial") and not event.get("error_code") and not event.get("error_message")


def _said_by_a_person(event: dict[str, Any]) -> bool:
    """Content in the user role (any author), or, without a role, authored ``user`` (ADK's own)."""
    role = (event.get("content") or {}).get("role")
    return role == "user" or (not role and event.get("author") == "user")


def _offline_kind(text: str) -> str:
    """A label for the memory (what it is kept as does not depend on it)."""
    filled = statements.slots(text)
    if filled:
        first = filled[0]
        return Kind.PREFERENCE if first.open or first.key.startswith("favourite") else Kind.PERSONAL_INFO
    if statements.is_request(text):
        return Kind.INSTRUCTION
    return next((k for k, pattern in _KIND_PATTERNS if pattern.search(text)), Kind.FACT)


_INSTRUCTIONS = """You maintain long-term memories about a user of an AI agent.
From the conversation, extract durable facts worth remembering in later conversations, in these
topics (the "kind" of a memory):
{topics}
Skip small talk, tool traffic and things only true right now.
Each memory is one short self-contained sentence in the language of the conversation, {person}.
Known memories are listed with ids; if a new memory contradicts or replaces one, list that id in
"supersedes". Do not repeat known memories unchanged.
Answer with JSON only: a list of objects {{"text": str, "kind": str, "importance": number 0-1,
"supersedes": [ids]}}.{examples}"""
_MANAGED_TOPICS = {
    Kind.PERSONAL_INFO: "personal information about the user",
    Kind.PREFERENCE: "the user's preferences",
    Kind.KEY_DETAIL: "key details of the conversation",
    Kind.INSTRUCTION: "explicit instructions to the agent",
}


_PERSONS = {
    False: 'in the first person, as the user would say it ("I like tea")',
    True: 'in the third person, about the user ("The user likes tea")',
}


def instructions(config: Customization | None) -> str:
    """The extraction instructions for an app: its topics (managed and custom) and its few-shot examples."""
    managed = [Kind(k) for k in (config.managed_topics if config else [])] or list(_MANAGED_TOPICS)
    topics = [f"- {kind.value}: {_MANAGED_TOPICS[kind]}" for kind in managed]
    topics += [
        f"- {t['label']}: {t.get('description') or t['label']}" for t in (config.custom_topics if config else [])
    ]
    topics.append(f"- {Kind.FACT.value}: any other durable fact")
    examples = ""
    for example in config.examples if config else []:
        conversation = "\n".join(f"{turn.get('role', 'user')}: {turn['text']}" for turn in example["conversation"])
        memories = json.dumps(
            [{"text": m["fact"], "kind": m.get("topic") or Kind.FACT.value} for m in example["memories"]],
            ensure_ascii=False,
        )
        examples += f"\n\nExample conversation:\n{conversation}\nExample answer: {memories}"
    person = _PERSONS[bool(config and config.third_person)]
    return _INSTRUCTIONS.format(topics="\n".join(topics), examples=examples, person=person)


class MalformedAnswer(ValueError):
    """The model's answer holds no JSON list of memories (prose, a refusal, broken JSON)."""


class LlmExtractor(Extractor):
    """Memory Bank-style extraction with an ADK model (``BaseLlm``), in the app's topics.

    A call that fails or an answer that is no list of memories is asked again,
    ``ATTEMPTS`` times in all; then the offline extractor takes this job's events,
    so a model that is down or misbehaves costs memories' quality, never the memories.
    """

    ATTEMPTS = 3

    def __init__(self, model: Any) -> None:
        self.model = model

    def extract(
        self,
        events: list[dict[str, Any]],
        *,
        known: list[tuple[str, str]],
        session_id: str = "",
        config: Customization | None = None,
    ) -> list[Candidate]:
        lines = [f"{e.get('author', '?')}: {text}" for e in events if _readable(e) and (text := event_text(e))]
        if not lines:
            return []
        prompt = (
            "Known memories:\n"
            + ("\n".join(f"[{memory_id}] {text}" for memory_id, text in known) or "(none)")
            + "\n\nConversation:\n"
            + "\n".join(lines)
        )
        for attempt in range(1, self.ATTEMPTS + 1):
            try:
                items = _parse_json_list(ask(self.model, prompt, system_instruction=instructions(config)))
                break
            except Exception as error:  # the model is outside: any failure of it is the model's
                logger.warning(
                    "memory extraction: attempt %d of %d failed: %s: %s",
                    attempt,
                    self.ATTEMPTS,
                    type(error).__name__,
                    str(error)[:300],
                )
        else:
            logger.warning(
                "memory extraction: the model failed %d times; the offline extractor takes these events", self.ATTEMPTS
            )
            return OfflineExtractor().extract(events, known=known, session_id=session_id, config=config)
        last = events[-1]
        metadata: dict[str, Any] = {}
        for event in events:
            metadata.update(event.get("custom_metadata") or {})
        candidates = []
        for item in items:
            text = str(item.get("text", "")).strip()
            if not text:
                continue
            kind = str(item.get("kind")) if item.get("kind") in Kind.values else Kind.FACT
            custom = str(item.get("kind")) if config and item.get("kind") in config.custom_topic_labels() else ""
            candidates.append(
                Candidate(
                    text=text,
                    author="user",
                    kind=kind,
                    topic=custom,
                    importance=min(max(float(item.get("importance", 0.5) or 0.5), 0.0), 1.0),
                    event_ids=tuple(e["id"] for e in events if e.get("id")),
                    event_time=_event_time(last),
                    session_id=session_id,
                    metadata=metadata,
                    supersedes=tuple(str(i) for i in item.get("supersedes") or []),
                )
            )
        return candidates


def _parse_json_list(answer: str) -> list[dict[str, Any]]:
    """The first JSON list in the model's answer (models like to wrap it in prose or fences)."""
    start, end = answer.find("["), answer.rfind("]")
    if start < 0 or end < start:
        raise MalformedAnswer(f"no JSON list in the model's answer: {answer[:200]!r}")
    try:
        items = json.loads(answer[start : end + 1])
    except json.JSONDecodeError as error:
        raise MalformedAnswer(f"the model's answer is not valid JSON: {error}") from None
    if not isinstance(items, list) or not all(isinstance(item, dict) for item in items):
        raise MalformedAnswer("the model's answer is not a list of objects")
    return items


def get_extractor(bank_model: str = "") -> Extractor:
    """The LLM extractor when a model is configured (or a Gemini key is present), else the offline one.

    ``bank_model`` is the model an engine's ``generationConfig`` names
    (``projects/…/publishers/google/models/gemini-2.5-flash`` or just ``gemini-2.5-flash``): used
    instead when the server's memory model is a Gemini one too (same provider, same key), since
    Cognizes can serve it; any other is kept on the engine and shown, not used.
    """
    model_name = extraction_model(bank_model)
    if not model_name or model_name == "offline":
        return OfflineExtractor()
    return LlmExtractor(memory_model(model_name))


def extraction_model(bank_model: str = "") -> str:
    """The name of the model extracting for a bank naming ``bank_model`` ('' or "offline": none)."""
    model_name = getattr(settings, "COGNIZES_MEMORY_MODEL", "")
    if not model_name and (os.environ.get("GOOGLE_API_KEY") or os.environ.get("GEMINI_API_KEY")):
        model_name = "gemini-2.5-flash"
    wanted = bank_model.rsplit("/", 1)[-1]
    if model_name.startswith("gemini-") and re.fullmatch(r"gemini-[a-z0-9.\-]{1,64}", wanted):
        return wanted
    return model_name


def memory_model(name: str) -> Any:
    """The ADK model ``name`` names (``cognizes.infra.models.model_named``): Gemini's, or LiteLLM's for
    ``provider/model`` (``openai/…``, ``anthropic/…``, ``ollama_chat/…``).

    With ``COGNIZES_MEMORY_MODEL_API_BASE`` it is LiteLLM's, talking to that
    server (an OpenAI-compatible vLLM or Ollama: ``openai/<model>``), within
    ``COGNIZES_MEMORY_MODEL_TIMEOUT_SECONDS`` a call and without retries of its
    own (``LlmExtractor`` retries, then falls back).
    """
    return model_named(
        name,
        api_base=getattr(settings, "COGNIZES_MEMORY_MODEL_API_BASE", ""),
        timeout=settings.COGNIZES_MEMORY_MODEL_TIMEOUT_SECONDS,
    )
