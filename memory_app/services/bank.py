"""An app's memory bank config: its topics, few-shot examples and TTLs, checked before they are kept.

A config holds a default customization (its own topic, example and wording fields) and
customizations for scopes (``scoped_customizations``): a generation whose scope has every key
of one uses it, the one with the most keys if several match (Vertex's ``customizationConfigs``).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import timedelta
from typing import Any

from django.db import transaction

from memory_app.models import MAX_TOPIC_LENGTH, Kind, MemoryBankConfig
from memory_app.profile_schema import SchemaError, check_configs
from memory_app.services.base import MemoryServiceError, get_bank_config

BANK_SETTINGS = (
    "managed_topics",
    "custom_topics",
    "examples",
    "default_ttl",
    "create_ttl",
    "generate_created_ttl",
    "generate_updated_ttl",
    "revision_ttl",
    "third_person",
    "natural_language_memories",
    "revisions_per_candidate",
    "scoped_customizations",
    "keep_revisions",
    "generation_model",
    "generation_trigger",
    "embedding_model",
    "structured_memory_configs",
)
"""What an app's memory bank config holds that a client may set (the admin, the native API, Vertex's engine)."""


def do_configure_bank(*, app_name: str, changes: dict[str, Any]) -> MemoryBankConfig:
    """Change an app's memory bank config (only the fields in ``changes``), checked whole before it is saved."""
    unknown = sorted(set(changes) - set(BANK_SETTINGS))
    if unknown:
        raise MemoryServiceError(f"Not a memory bank setting: {', '.join(unknown)}.")
    with transaction.atomic():
        config, _ = MemoryBankConfig.objects.select_for_update().get_or_create(app_name=app_name)
        for name, value in changes.items():
            setattr(config, name, value)
        check_bank_config(config)
        config.save()
    return config


MAX_SCOPED_CUSTOMIZATIONS = 20
MAX_SCOPE_KEYS = 5
MAX_EXAMPLES = 20
MAX_EXAMPLE_ITEMS = 50  # turns of an example's conversation, and memories it makes
MAX_EXAMPLE_TEXT = 10_000  # characters of one turn or fact: every example is in every extraction prompt
MAX_CUSTOM_TOPICS = 50
MAX_REVISIONS_PER_CANDIDATE = 20
MAX_MODEL_NAME = 512
_CUSTOMIZATION_FIELDS = {
    "scope_keys",
    "managed_topics",
    "custom_topics",
    "examples",
    "third_person",
    "natural_language_memories",
    "revisions_per_candidate",
}
_TRIGGER_FIELDS = {"event_count", "idle_seconds", "interval_seconds"}


@dataclass(frozen=True)
class Customization:
    """How memories of one scope are extracted: what the extractors read (one config entry, or the default)."""

    scope_keys: tuple[str, ...] = ()
    managed_topics: list[str] = field(default_factory=list)
    custom_topics: list[dict[str, str]] = field(default_factory=list)
    examples: list[dict[str, Any]] = field(default_factory=list)
    third_person: bool = False
    natural_language_memories: bool = True
    revisions_per_candidate: int | None = None

    def custom_topic_labels(self) -> list[str]:
        return [topic["label"] for topic in self.custom_topics]

    @classmethod
    def of(cls, entry: dict[str, Any]) -> Customization:
        """An entry of ``scoped_customizations`` (checked by ``check_bank_config``)."""
        return cls(
            scope_keys=tuple(entry.get("scope_keys") or ()),
            managed_topics=list(entry.get("managed_topics") or []),
            custom_topics=list(entry.get("custom_topics") or []),
            examples=list(entry.get("examples") or []),
            third_person=bool(entry.get("third_person", False)),
            natural_language_memories=bool(entry.get("natural_language_memories", True)),
            revisions_per_candidate=entry.get("revisions_per_candidate"),
        )


def default_customization(config: MemoryBankConfig) -> Customization:
    """The config's own fields: the customization of every scope no scoped one matches."""
    return Customization(
        managed_topics=list(config.managed_topics),
        custom_topics=list(config.custom_topics),
        examples=list(config.examples),
        third_person=config.third_person,
        natural_language_memories=config.natural_language_memories,
        revisions_per_candidate=config.revisions_per_candidate,
    )


def customization_for(config: MemoryBankConfig, scope_keys: Iterable[str]) -> Customization:
    """The customization of a scope with these keys: the matching one with the most keys, else the default.

    Vertex's rule: a config applies when the request's scope includes all its keys (order does not
    matter). No two configs have the same key set (checked), so among equally specific matches the
    first listed wins only for different sets of the same size.
    """
    keys = set(scope_keys)
    matching = [entry for entry in config.scoped_customizations if set(entry["scope_keys"]) <= keys]
    if not matching:
        return default_customization(config)
    return Customization.of(max(matching, key=lambda entry: len(entry["scope_keys"])))


def scope_keys_of(*, user_id: str, extra_scope: dict[str, str]) -> set[str]:
    """The keys of a Cognizes scope as Vertex names them: every memory has an app; a user when it has one."""
    return {"app_name", *(["user_id"] if user_id else []), *extra_scope}


def get_customization(app_name: str, *, user_id: str, extra_scope: dict[str, str]) -> Customization:
    """The customization that generation in this scope follows."""
    return customization_for(get_bank_config(app_name), scope_keys_of(user_id=user_id, extra_scope=extra_scope))


def check_bank_config(config: MemoryBankConfig) -> None:
    """Refuse what the extractor could not use: unknown kinds, unnamed or clashing topics, odd examples, TTLs ≤ 0."""
    own = {name: getattr(config, name) for name in _CUSTOMIZATION_FIELDS - {"scope_keys"}}
    check_customization(own, where="")
    scoped = config.scoped_customizations
    if not isinstance(scoped, list) or len(scoped) > MAX_SCOPED_CUSTOMIZATIONS:
        raise MemoryServiceError(f"scoped_customizations is a list of at most {MAX_SCOPED_CUSTOMIZATIONS}.")
    seen: set[frozenset[str]] = set()
    for i, entry in enumerate(scoped):
        where = f"scoped_customizations[{i}]: "
        if not isinstance(entry, dict) or set(entry) - _CUSTOMIZATION_FIELDS:
            raise MemoryServiceError(f"{where}an entry has only {', '.join(sorted(_CUSTOMIZATION_FIELDS))}.")
        keys = entry.get("scope_keys")
        if (
            not isinstance(keys, list)
            or not 1 <= len(keys) <= MAX_SCOPE_KEYS
            or not all(isinstance(k, str) and 0 < len(k) <= 128 for k in keys)
            or len(set(keys)) != len(keys)
        ):
            raise MemoryServiceError(
                f"{where}scope_keys are 1 to {MAX_SCOPE_KEYS} different keys (the default is the config's own fields)."
            )
        if frozenset(keys) in seen:
            raise MemoryServiceError(f"{where}another customization has the scope keys {sorted(keys)}.")
        seen.add(frozenset(keys))
        check_customization(entry, where=where)
    _check_bank_wide(config)
    _check_ttls(config)
    try:
        config.structured_memory_configs = check_configs(config.structured_memory_configs or [])
    except SchemaError as error:
        raise MemoryServiceError(str(error)) from error


def check_customization(entry: dict[str, Any], *, where: str) -> None:
    """One customization's topics, examples and switches (the default's or a scope's)."""
    managed = [kind for kind in Kind.values if kind != Kind.FACT]
    managed_topics, custom_topics = entry.get("managed_topics", []), entry.get("custom_topics", [])
    if not isinstance(managed_topics, list) or any(k not in managed for k in managed_topics):
        raise MemoryServiceError(f"{where}managed_topics are some of {', '.join(managed)}.")
    if not isinstance(custom_topics, list) or len(custom_topics) > MAX_CUSTOM_TOPICS:
        raise MemoryServiceError(
            f"{where}custom_topics is a list of at most {MAX_CUSTOM_TOPICS} {{label, description}}."
        )
    labels = []
    for topic in custom_topics:
        label = topic.get("label") if isinstance(topic, dict) else None
        if (
            not isinstance(label, str)
            or not label.strip()
            or len(label) > MAX_TOPIC_LENGTH
            or set(topic) - {"label", "description"}
        ):
            raise MemoryServiceError(
                f"{where}a custom topic is {{label, description}} with a label of 1 to {MAX_TOPIC_LENGTH} characters."
            )
        if not isinstance(topic.get("description", ""), str) or len(topic.get("description", "")) > 1000:
            raise MemoryServiceError(f"{where}the description of custom topic {label!r} is text (≤ 1000 characters).")
        labels.append(label)
    if len(set(labels)) != len(labels) or set(labels) & set(Kind.values):
        raise MemoryServiceError(f"{where}custom topic labels are unique and differ from the managed topics.")
    examples = entry.get("examples", [])
    if not isinstance(examples, list) or len(examples) > MAX_EXAMPLES or not all(_valid_example(e) for e in examples):
        raise MemoryServiceError(
            f'{where}examples are at most {MAX_EXAMPLES} of {{"conversation": [{{"role", "text"}}], '
            f'"memories": [{{"fact", "topic"?}}]}}, each with at most {MAX_EXAMPLE_ITEMS} turns and memories '
            f"of at most {MAX_EXAMPLE_TEXT} characters."
        )
    for name in ("third_person", "natural_language_memories"):
        if not isinstance(entry.get(name, False), bool):
            raise MemoryServiceError(f"{where}{name} is true or false.")
    count = entry.get("revisions_per_candidate")
    if count is not None and (
        isinstance(count, bool) or not isinstance(count, int) or not 1 <= count <= MAX_REVISIONS_PER_CANDIDATE
    ):
        raise MemoryServiceError(f"{where}revisions_per_candidate is 1 to {MAX_REVISIONS_PER_CANDIDATE}.")


def _check_bank_wide(config: MemoryBankConfig) -> None:
    """The generation model, its default trigger and the embedding model's name."""
    for name in ("generation_model", "embedding_model"):
        value = getattr(config, name)
        if not isinstance(value, str) or len(value) > MAX_MODEL_NAME or any(ord(c) < 32 for c in value):
            raise MemoryServiceError(f"{name} is a model name of at most {MAX_MODEL_NAME} characters.")
    trigger = config.generation_trigger
    if not isinstance(trigger, dict) or set(trigger) - _TRIGGER_FIELDS:
        raise MemoryServiceError(f"generation_trigger has only {', '.join(sorted(_TRIGGER_FIELDS))}.")
    count = trigger.get("event_count")
    if count is not None and (isinstance(count, bool) or not isinstance(count, int) or not 1 <= count <= 10_000):
        raise MemoryServiceError("generation_trigger.event_count is 1 to 10000.")
    for name in ("idle_seconds", "interval_seconds"):
        seconds = trigger.get(name)
        if seconds is not None and (
            isinstance(seconds, bool) or not isinstance(seconds, (int, float)) or not 0 < seconds <= 366 * 86400
        ):
            raise MemoryServiceError(f"generation_trigger.{name} is more than 0 and at most a year.")


def _check_ttls(config: MemoryBankConfig) -> None:
    for name in ("default_ttl", "create_ttl", "generate_created_ttl", "generate_updated_ttl", "revision_ttl"):
        ttl = getattr(config, name)
        if ttl is not None and ttl <= timedelta(0):
            raise MemoryServiceError(f"{name} is a positive duration.")


def _valid_example(example: Any) -> bool:
    if not isinstance(example, dict) or set(example) != {"conversation", "memories"}:
        return False
    turns, memories = example["conversation"], example["memories"]
    return (
        isinstance(turns, list)
        and isinstance(memories, list)
        and len(turns) <= MAX_EXAMPLE_ITEMS
        and len(memories) <= MAX_EXAMPLE_ITEMS
        and all(
            isinstance(t, dict)
            and isinstance(t.get("text"), str)
            and len(t["text"]) <= MAX_EXAMPLE_TEXT
            and isinstance(t.get("role", ""), str)
            for t in turns
        )
        and all(
            isinstance(m, dict)
            and isinstance(m.get("fact"), str)
            and len(m["fact"]) <= MAX_EXAMPLE_TEXT
            and isinstance(m.get("topic", ""), str)
            for m in memories
        )
    )


NO_REVISIONS = (
    "This memory bank keeps no revisions (disableMemoryRevisions / keep_revisions is off), so changes made since "
    "cannot be listed or rolled back."
)


def check_revision_exists(config: MemoryBankConfig, exists: bool, otherwise: str) -> None:
    """Refuse a rollback to a revision that is not there, saying why when the bank keeps none."""
    if not exists:
        raise MemoryServiceError(otherwise if config.keep_revisions else f"{otherwise} {NO_REVISIONS}")


def check_topic(config: MemoryBankConfig, topic: str) -> None:
    """A custom topic of the config: the default's, or a scope's (generation in that scope labels with it)."""
    labels = set(config.custom_topic_labels())
    for entry in config.scoped_customizations:
        labels.update(topic["label"] for topic in entry.get("custom_topics") or [])
    if topic not in labels:
        raise MemoryServiceError(f"{topic!r} is not a custom topic of {config.app_name}'s memory bank config.")
