"""An app's memory bank config: its topics, few-shot examples and TTLs, checked before they are kept."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

from django.db import transaction

from memory_app.models import MAX_TOPIC_LENGTH, Kind, MemoryBankConfig
from memory_app.profile_schema import SchemaError, check_configs
from memory_app.services.base import MemoryServiceError


def do_configure_bank(*, app_name: str, changes: dict[str, Any]) -> MemoryBankConfig:
    """Change an app's memory bank config (only the fields in ``changes``), checked whole before it is saved."""
    allowed = {
        "managed_topics",
        "custom_topics",
        "examples",
        "default_ttl",
        "create_ttl",
        "generate_created_ttl",
        "generate_updated_ttl",
        "revision_ttl",
        "structured_memory_configs",
    }
    unknown = sorted(set(changes) - allowed)
    if unknown:
        raise MemoryServiceError(f"Not a memory bank setting: {', '.join(unknown)}.")
    with transaction.atomic():
        config, _ = MemoryBankConfig.objects.select_for_update().get_or_create(app_name=app_name)
        for name, value in changes.items():
            setattr(config, name, value)
        check_bank_config(config)
        config.save()
    return config


def check_bank_config(config: MemoryBankConfig) -> None:
    """Refuse what the extractor could not use: unknown kinds, unnamed or clashing topics, odd examples, TTLs ≤ 0."""
    managed = [kind for kind in Kind.values if kind != Kind.FACT]
    if not isinstance(config.managed_topics, list) or any(k not in managed for k in config.managed_topics):
        raise MemoryServiceError(f"managed_topics are some of {', '.join(managed)}.")
    if not isinstance(config.custom_topics, list):
        raise MemoryServiceError("custom_topics is a list of {label, description}.")
    labels = []
    for topic in config.custom_topics:
        label = topic.get("label") if isinstance(topic, dict) else None
        if (
            not isinstance(label, str)
            or not label.strip()
            or len(label) > MAX_TOPIC_LENGTH
            or set(topic) - {"label", "description"}
        ):
            raise MemoryServiceError(
                f"A custom topic is {{label, description}} with a label of 1 to {MAX_TOPIC_LENGTH} characters."
            )
        if not isinstance(topic.get("description", ""), str):
            raise MemoryServiceError(f"The description of custom topic {label!r} is text.")
        labels.append(label)
    if len(set(labels)) != len(labels) or set(labels) & set(Kind.values):
        raise MemoryServiceError("Custom topic labels are unique and differ from the managed topics.")
    if not isinstance(config.examples, list) or not all(_valid_example(e) for e in config.examples):
        raise MemoryServiceError(
            'An example is {"conversation": [{"role", "text"}], "memories": [{"fact", "topic"?}]}.'
        )
    try:
        config.structured_memory_configs = check_configs(config.structured_memory_configs or [])
    except SchemaError as error:
        raise MemoryServiceError(str(error)) from error
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
        and all(
            isinstance(t, dict) and isinstance(t.get("text"), str) and isinstance(t.get("role", ""), str) for t in turns
        )
        and all(
            isinstance(m, dict) and isinstance(m.get("fact"), str) and isinstance(m.get("topic", ""), str)
            for m in memories
        )
    )


def check_topic(config: MemoryBankConfig, topic: str) -> None:
    if topic not in config.custom_topic_labels():
        raise MemoryServiceError(f"{topic!r} is not a custom topic of {config.app_name}'s memory bank config.")
