"""Vertex's ``memoryBankConfig`` customization fields in Cognizes' terms, both ways.

``customizationConfigs[]`` becomes the app's default customization (the entry without
``scope_keys``: ``MemoryBankConfig``'s own fields) and ``scoped_customizations`` (the others);
``generationConfig``, ``similaritySearchConfig`` and ``disableMemoryRevisions`` become the config's
bank-wide fields. Requests mix casings (shared/memory-bank-more-wire.md §2.2: the items arrive
snake_case); answers are camelCase, with proto3 JSON's habit of leaving out defaults. The default
entry is answered first, then the scoped ones in the order given.
"""

from __future__ import annotations

from datetime import timedelta
from typing import Any

from memory_app.models import MemoryBankConfig
from vertex_app.errors import InvalidArgument
from vertex_app.memory_fields import KINDS, TOPICS, ManagedTopicEnum, topic_id
from vertex_app.wire import duration, duration_text, enum, integer, string

_TOPIC = {
    "managed_memory_topic": {"managed_topic_enum": None},
    "custom_memory_topic": {"label": None, "description": None},
}
_EXAMPLE = {
    "conversation_source": {"events": [{"content": None}]},
    "generated_memories": [
        {"fact": None, "topics": [{"managed_memory_topic": None, "custom_memory_topic_label": None}]}
    ],
}
CUSTOMIZATION = {
    "memory_topics": [_TOPIC],
    "generate_memories_examples": [_EXAMPLE],
    "scope_keys": None,
    "enable_third_person_memories": None,
    "consolidation_config": {"revisions_per_candidate_count": None},
    "disable_natural_language_memories": None,
}
_RULE = {"idle_duration": None, "event_count": None, "fixed_interval": None, "overlap_event_count": None}
GENERATION = {"model": None, "generation_trigger_config": {"generation_rule": _RULE}}
SIMILARITY_SEARCH = {"embedding_model": None}
MAX_CUSTOMIZATIONS = 21  # the default and at most 20 scoped (memory_app.services.bank)
_DEFAULT_FIELDS = ("managed_topics", "custom_topics", "examples", "third_person")


def customization_changes(customizations: list[dict[str, Any]]) -> dict[str, Any]:
    """MemoryBankConfig fields of ``customizationConfigs``: the default's fields and the scoped list."""
    if len(customizations) > MAX_CUSTOMIZATIONS:
        raise InvalidArgument(f"At most {MAX_CUSTOMIZATIONS} customizationConfigs (one default, 20 by scope).")
    parsed = [_customization(c, f"customizationConfigs[{i}]") for i, c in enumerate(customizations)]
    defaults = [entry for entry in parsed if not entry["scope_keys"]]
    if len(defaults) > 1:
        raise InvalidArgument("Only one customizationConfig may leave scopeKeys empty (the default).")
    default = defaults[0] if defaults else {}
    return {
        "managed_topics": default.get("managed_topics", []),
        "custom_topics": default.get("custom_topics", []),
        "examples": default.get("examples", []),
        "third_person": default.get("third_person", False),
        "natural_language_memories": default.get("natural_language_memories", True),
        "revisions_per_candidate": default.get("revisions_per_candidate"),
        "scoped_customizations": [entry for entry in parsed if entry["scope_keys"]],
    }


def _customization(custom: dict[str, Any], where: str) -> dict[str, Any]:
    keys = custom.get("scope_keys") or []
    if not isinstance(keys, list) or not all(isinstance(key, str) for key in keys):
        raise InvalidArgument(f"'{where}.scopeKeys' is a list of strings.")
    managed, topics = [], []
    for i, topic in enumerate(custom.get("memory_topics") or []):
        if topic.get("managed_memory_topic") is not None:
            managed.append(_kind(topic["managed_memory_topic"].get("managed_topic_enum"), f"{where}.memoryTopics[{i}]"))
        elif topic.get("custom_memory_topic") is not None:
            label = string(topic["custom_memory_topic"].get("label"), f"{where}.memoryTopics[{i}].label", required=True)
            description = string(topic["custom_memory_topic"].get("description"), "description")
            topics.append({"label": label, "description": description})
        else:
            raise InvalidArgument(f"'{where}.memoryTopics[{i}]' is a managedMemoryTopic or a customMemoryTopic.")
    for name in ("enable_third_person_memories", "disable_natural_language_memories"):
        if custom.get(name) is not None and not isinstance(custom[name], bool):
            raise InvalidArgument(f"'{where}.{name}' is true or false.")
    count = integer(
        (custom.get("consolidation_config") or {}).get("revisions_per_candidate_count"),
        f"{where}.consolidationConfig.revisionsPerCandidateCount",
        default=0,
        low=0,
        high=20,
    )
    return {
        "scope_keys": keys,
        "managed_topics": managed,
        "custom_topics": topics,
        "examples": [_example(e, f"{where}.generateMemoriesExamples[{i}]") for i, e in enumerate(_examples(custom))],
        "third_person": custom.get("enable_third_person_memories") is True,
        "natural_language_memories": custom.get("disable_natural_language_memories") is not True,
        "revisions_per_candidate": count or None,
    }


def _examples(custom: dict[str, Any]) -> list[dict[str, Any]]:
    return custom.get("generate_memories_examples") or []


def _kind(value: Any, where: str) -> str:
    name = enum(value, ManagedTopicEnum, f"{where}.managedTopicEnum")
    if name not in KINDS:
        raise InvalidArgument(f"Unknown managed topic {name!r} at '{where}'; one of {', '.join(sorted(KINDS))}.")
    return KINDS[name]


def _example(example: dict[str, Any], where: str) -> dict[str, Any]:
    conversation = []
    for event in (example.get("conversation_source") or {}).get("events") or []:
        content = event.get("content") or {}
        if not isinstance(content, dict) or not isinstance(content.get("parts") or [], list):
            raise InvalidArgument(f"'{where}' events hold a content with a list of parts.")
        text = " ".join(
            part["text"]
            for part in content.get("parts") or []
            if isinstance(part, dict) and isinstance(part.get("text"), str)
        )
        role = content.get("role", "user")
        conversation.append({"role": role if isinstance(role, str) else "user", "text": text})
    memories = []
    for memory in example.get("generated_memories") or []:
        topic: dict[str, Any] = next(iter(memory.get("topics") or []), {})
        label = topic.get("custom_memory_topic_label")
        if label is None and topic.get("managed_memory_topic") is not None:
            label = _kind(topic["managed_memory_topic"], f"{where}.generatedMemories.topics")
        memories.append({"fact": string(memory.get("fact"), f"{where}.fact"), "topic": string(label, "topic")})
    return {"conversation": conversation, "memories": memories}


def generation_changes(generation: dict[str, Any]) -> dict[str, Any]:
    """``generationConfig``: the model named, and the default trigger of ``ingestEvents``."""
    rule = (generation.get("generation_trigger_config") or {}).get("generation_rule") or {}
    if rule.get("overlap_event_count"):
        raise InvalidArgument("generationConfig's overlapEventCount is not supported yet.")
    trigger: dict[str, Any] = {}
    count = integer(rule.get("event_count"), "generationRule.eventCount", default=0, low=0, high=10_000)
    if count:
        trigger["event_count"] = count
    for name, field in (("idle_duration", "idle_seconds"), ("fixed_interval", "interval_seconds")):
        if rule.get(name) is not None and (seconds := duration(rule[name], f"generationRule.{name}").total_seconds()):
            trigger[field] = seconds
    return {
        "generation_model": string(generation.get("model"), "generationConfig.model"),
        "generation_trigger": trigger,
    }


def customization_resources(config: MemoryBankConfig) -> list[dict[str, Any]]:
    """``customizationConfigs``: the default (when it says anything), then the scoped ones."""
    default = {name: getattr(config, name) for name in _DEFAULT_FIELDS}
    default["natural_language_memories"] = config.natural_language_memories
    default["revisions_per_candidate"] = config.revisions_per_candidate
    entries = [default, *config.scoped_customizations]
    return [out for entry in entries if (out := _customization_resource(entry))]


def _customization_resource(entry: dict[str, Any]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    if entry.get("scope_keys"):
        out["scopeKeys"] = list(entry["scope_keys"])
    topics = [{"managedMemoryTopic": {"managedTopicEnum": TOPICS[kind]}} for kind in entry.get("managed_topics") or []]
    topics += [{"customMemoryTopic": topic} for topic in entry.get("custom_topics") or []]
    if topics:
        out["memoryTopics"] = topics
    examples = [_example_resource(example) for example in entry.get("examples") or []]
    if examples:
        out["generateMemoriesExamples"] = examples
    if entry.get("third_person"):
        out["enableThirdPersonMemories"] = True
    if entry.get("revisions_per_candidate"):
        out["consolidationConfig"] = {"revisionsPerCandidateCount": entry["revisions_per_candidate"]}
    if entry.get("natural_language_memories") is False:
        out["disableNaturalLanguageMemories"] = True
    return out


def _example_resource(example: dict[str, Any]) -> dict[str, Any]:
    return {
        "conversationSource": {
            "events": [
                {"content": {"role": turn.get("role", "user"), "parts": [{"text": turn["text"]}]}}
                for turn in example["conversation"]
            ]
        },
        "generatedMemories": [
            {"fact": memory["fact"], **({"topics": [topic_id(memory["topic"])]} if memory.get("topic") else {})}
            for memory in example["memories"]
        ],
    }


def generation_resource(config: MemoryBankConfig) -> dict[str, Any]:
    """``generationConfig`` as stored ({} when it names nothing)."""
    out: dict[str, Any] = {}
    if config.generation_model:
        out["model"] = config.generation_model
    trigger = config.generation_trigger or {}
    rule: dict[str, Any] = {}
    if trigger.get("event_count"):
        rule["eventCount"] = trigger["event_count"]
    if trigger.get("idle_seconds"):
        rule["idleDuration"] = duration_text(timedelta(seconds=trigger["idle_seconds"]))
    if trigger.get("interval_seconds"):
        rule["fixedInterval"] = duration_text(timedelta(seconds=trigger["interval_seconds"]))
    if rule:
        out["generationTriggerConfig"] = {"generationRule": rule}
    return out
