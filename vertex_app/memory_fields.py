"""Memory Bank request fields in Cognizes' terms: topics, metadata, generation options, contents.

Vertex writes metadata values as ``{stringValue|doubleValue|boolValue|timestampValue}``
and topics as managed enums or custom labels; Cognizes stores plain JSON values,
memory kinds and custom topic labels of the app's memory bank config.
"""

from __future__ import annotations

import json
from typing import Any

from django.utils import timezone
from google.cloud.aiplatform_v1beta1.types.memory_bank import MemoryBankCustomizationConfig

from memory_app import services
from memory_app.models import Kind, MetadataMerge
from vertex_app.errors import InvalidArgument
from vertex_app.wire import duration, enum, mapping, message, rfc3339, string, timestamp

ManagedTopicEnum = MemoryBankCustomizationConfig.MemoryTopic.ManagedMemoryTopic.ManagedTopicEnum
TOPICS: dict[str, str] = {
    Kind.PERSONAL_INFO: "USER_PERSONAL_INFO",
    Kind.PREFERENCE: "USER_PREFERENCES",
    Kind.KEY_DETAIL: "KEY_CONVERSATION_DETAILS",
    Kind.INSTRUCTION: "EXPLICIT_INSTRUCTIONS",
}
KINDS = {topic: kind for kind, topic in TOPICS.items()}


def kind_and_topic(topics: Any) -> tuple[str, str]:
    """(kind, custom topic) of Vertex topics: the first one given (a plain fact without any)."""
    for topic in topics or []:
        if topic.get("custom_memory_topic_label"):
            return Kind.FACT, string(topic["custom_memory_topic_label"], "customMemoryTopicLabel")
        managed = enum(topic.get("managed_memory_topic"), ManagedTopicEnum, "managedMemoryTopic")
        if managed and managed != "MANAGED_TOPIC_ENUM_UNSPECIFIED":
            if managed not in KINDS:
                raise InvalidArgument(f"Unknown managed topic {managed!r}; one of {', '.join(sorted(KINDS))}.")
            return KINDS[managed], ""
    return Kind.FACT, ""


def stated(item: dict[str, Any], metadata: dict[str, Any]) -> services.Candidate:
    """A direct memory of a generate request as a candidate."""
    kind, topic = kind_and_topic(item.get("topics"))
    return services.Candidate(
        text=string(item.get("fact"), "fact", required=True), kind=kind, topic=topic, metadata=metadata
    )


def topic_id(topic: str) -> dict[str, str]:
    """Vertex's MemoryTopicId of a memory kind or custom topic label."""
    if topic in TOPICS:
        return {"managedMemoryTopic": TOPICS[topic]}
    return {"customMemoryTopicLabel": topic}


def plain_metadata(value: Any) -> dict[str, Any]:
    """Vertex metadata (``{key: {stringValue|doubleValue|boolValue|timestampValue}}``) as plain JSON values."""
    plain = {}
    for key, typed in mapping(value, "metadata").items():
        plain[key] = metadata_plain(typed, f"metadata.{key}")
    return plain


def metadata_plain(typed: Any, where: str) -> Any:
    fields = message(
        typed, {"string_value": None, "double_value": None, "bool_value": None, "timestamp_value": None}, where=where
    )
    given = [(name, value) for name, value in fields.items() if value is not None]
    if len(given) != 1:
        raise InvalidArgument(f"'{where}' holds exactly one of stringValue, doubleValue, boolValue, timestampValue.")
    name, value = given[0]
    types: dict[str, type | tuple[type, ...]] = {
        "string_value": str,
        "double_value": (int, float),
        "bool_value": bool,
        "timestamp_value": str,
    }
    expected = types[name]
    if not isinstance(value, expected) or (name == "double_value" and isinstance(value, bool)):
        raise InvalidArgument(f"'{where}.{name}' has the wrong type.")
    return rfc3339(timestamp(value, where)) if name == "timestamp_value" else value


def metadata_value(value: Any) -> dict[str, Any]:
    if isinstance(value, bool):
        return {"boolValue": value}
    if isinstance(value, (int, float)):
        return {"doubleValue": value}
    if isinstance(value, str):
        return {"stringValue": value}
    return {"stringValue": json.dumps(value, ensure_ascii=False)}


_MERGES = {
    "METADATA_MERGE_STRATEGY_UNSPECIFIED": MetadataMerge.KEEP_ALL,
    "MERGE": MetadataMerge.MERGE,
    "OVERWRITE": MetadataMerge.OVERWRITE,
    "REQUIRE_EXACT_MATCH": MetadataMerge.REQUIRE_EXACT_MATCH,
}


def generation(body: dict[str, Any]) -> services.Generation:
    """The generation options of a generate or ingest request."""
    strategy = str(body.get("metadata_merge_strategy") or "METADATA_MERGE_STRATEGY_UNSPECIFIED").upper()
    if strategy not in _MERGES:
        raise InvalidArgument(f"metadataMergeStrategy is one of {', '.join(_MERGES)}.")
    allowed = []
    for topic in body.get("allowed_topics") or []:
        kind, custom = kind_and_topic([topic])
        if custom:
            raise InvalidArgument("allowedTopics takes managed topics only, for now.")
        allowed.append(kind)
    return services.Generation(
        consolidate=not body.get("disable_consolidation"),
        metadata_merge=_MERGES[strategy],
        allowed_kinds=tuple(allowed),
        **revision_options(body),
    )


def revision_options(body: dict[str, Any]) -> dict[str, Any]:
    """The labels and TTL a request gives the revisions it writes, or none written (``disableMemoryRevisions``)."""
    if body.get("disable_memory_revisions") not in (None, True, False):
        raise InvalidArgument("'disableMemoryRevisions' is true or false.")
    if body.get("revision_ttl") is not None and body.get("revision_expire_time") is not None:
        raise InvalidArgument("Give revisionTtl or revisionExpireTime, not both.")
    ttl = duration(body["revision_ttl"], "revisionTtl") if body.get("revision_ttl") is not None else None
    if body.get("revision_expire_time") is not None:
        ttl = timestamp(body["revision_expire_time"], "revisionExpireTime") - timezone.now()
        if ttl.total_seconds() <= 0:
            raise InvalidArgument("revisionExpireTime is in the past.")
    labels = mapping(body.get("revision_labels"), "revisionLabels")
    if not all(isinstance(value, str) for value in labels.values()):
        raise InvalidArgument("revisionLabels map strings to strings.")
    keep = body.get("disable_memory_revisions") is not True
    return {"revision_labels": labels, "revision_ttl": ttl, "keep_revisions": keep}


def contents_events(source: dict[str, Any]) -> list[dict[str, Any]]:
    """Direct contents as the ADK-shaped events consolidation reads."""
    events = []
    for i, item in enumerate(source.get("events") or []):
        content = mapping(item.get("content"), f"events[{i}].content")
        if not isinstance(content.get("parts", []), list):
            raise InvalidArgument(f"events[{i}].content.parts must be a list.")
        event: dict[str, Any] = {
            "author": "user" if content.get("role", "user") == "user" else "model",
            "content": content,
        }
        if item.get("event_id"):
            event["id"] = string(item["event_id"], f"events[{i}].eventId")
        if item.get("event_time"):
            event["timestamp"] = timestamp(item["event_time"], f"events[{i}].eventTime").timestamp()
        events.append(event)
    if not events:
        raise InvalidArgument("directContentsSource.events is empty.")
    return events
