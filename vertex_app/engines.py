"""``reasoningEngines/{id}`` itself: the engine, its Memory Bank config (``contextSpec.memoryBankConfig``) and its
agent.

An app of ``COGNIZES_AGENTS`` hosts its agent: the engine is named and described
by it and lists ADK's class methods (``spec.classMethods``, see vertex_app.agents).

Vertex configures Memory Bank on the engine resource; in Cognizes that is the
app's ``MemoryBankConfig`` (memory_app), the same one the admin and the native
API edit. One customization config per engine (no per-scope-key configs);
memory revisions cannot be turned off (they keep their TTL, ``memoryRevisionDefaultTtl``). ``similaritySearchConfig``
and ``generationConfig`` name Google's models and are accepted but have no effect:
Cognizes embeds and extracts with its own (COGNIZES_EMBEDDER, COGNIZES_MEMORY_MODEL).
"""

from __future__ import annotations

from datetime import timedelta
from typing import Any

from rest_framework.request import Request
from rest_framework.response import Response

from cognizes.access.key_kinds import check_whole_app
from memory_app import services
from memory_app.models import MemoryBankConfig
from runtime_app import deployed
from runtime_app.agents import UnknownAgent, get_runner
from vertex_app import names, profile_config
from vertex_app.base import VertexView, operation
from vertex_app.errors import InvalidArgument
from vertex_app.memory_fields import KINDS, TOPICS, ManagedTopicEnum, topic_id
from vertex_app.services import get_engine
from vertex_app.wire import camel, duration, duration_text, enum, field_mask, message, rfc3339

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
_BANK = {
    "customization_configs": [
        {
            "memory_topics": [_TOPIC],
            "generate_memories_examples": [_EXAMPLE],
            "scope_keys": None,
            "enable_third_person_memories": None,
        }
    ],
    "ttl_config": {
        "default_ttl": None,
        "memory_revision_default_ttl": None,
        "granular_ttl_config": {"create_ttl": None, "generate_created_ttl": None, "generate_updated_ttl": None},
    },
    "disable_memory_revisions": None,
    "similarity_search_config": None,
    "generation_config": None,
    "structured_memory_configs": None,  # raw: schemas' property names are the caller's (vertex_app.profile_config)
}
_ENGINE = {
    "name": None,
    "display_name": None,
    "description": None,
    "create_time": None,
    "update_time": None,
    "context_spec": {"memory_bank_config": _BANK},
}
_GRANULAR = ("create_ttl", "generate_created_ttl", "generate_updated_ttl")


class EngineView(VertexView):
    """The engine: its app, and the app's Memory Bank configuration."""

    def get(self, request: Request, **kwargs: Any) -> Response:
        """Read the engine and its Memory Bank configuration."""
        return Response(self.resource())

    def patch(self, request: Request, **kwargs: Any) -> Response:
        """Change the engine's Memory Bank configuration: topics, examples, TTLs."""
        check_whole_app(self.scope(None, write=True).only_user, self.app_name, "change the engine")
        body = message(request.data, _ENGINE)
        mask = field_mask(
            request.query_params.get("updateMask") or request.query_params.get("update_mask"),
            {"context_spec", "context_spec.memory_bank_config", "display_name", "description"},
        )
        bank = (body.get("context_spec") or {}).get("memory_bank_config")
        if bank is not None and (mask is None or mask & {"context_spec", "context_spec.memory_bank_config"}):
            try:
                services.do_configure_bank(app_name=self.app_name, changes=_config_changes(bank))
            except services.MemoryServiceError as error:
                raise InvalidArgument(str(error)) from error
        return Response(operation(names.operation(self.engine), self.resource(), kind="ReasoningEngine"))

    def resource(self) -> dict[str, Any]:
        engine = get_engine(self.app_name)
        config = services.get_bank_config(self.app_name)
        out: dict[str, Any] = {
            "name": self.engine,
            "displayName": self.app_name,
            "createTime": rfc3339(engine.created_at),
            "updateTime": rfc3339(config.updated_at or engine.created_at),
            "contextSpec": {"memoryBankConfig": _bank_resource(config)},
        }
        try:
            agent = get_runner(self.app_name).agent
        except UnknownAgent:
            return out  # an engine of Sessions and Memory Bank only: no spec, so clients register no methods
        out["displayName"] = agent.name
        if agent.description:
            out["description"] = agent.description
        out["spec"] = {"agentFramework": deployed.FRAMEWORK, "classMethods": deployed.CLASS_METHODS}
        return out


def _config_changes(bank: dict[str, Any]) -> dict[str, Any]:
    """MemoryBankConfig fields from Vertex's memoryBankConfig (what it names; the rest stays)."""
    if bank.get("disable_memory_revisions"):
        raise InvalidArgument("Cognizes always keeps memory revisions (they are how a change is rolled back).")
    changes: dict[str, Any] = profile_config.config_changes(bank)
    customizations = bank.get("customization_configs")
    if customizations is not None:
        if len(customizations) > 1 or any(c.get("scope_keys") for c in customizations):
            raise InvalidArgument("One customization config per engine, without scopeKeys.")
        custom = customizations[0] if customizations else {}
        managed, topics = [], []
        for topic in custom.get("memory_topics") or []:
            if topic.get("managed_memory_topic"):
                name = enum(
                    topic["managed_memory_topic"].get("managed_topic_enum"), ManagedTopicEnum, "managedTopicEnum"
                )
                if name not in KINDS:
                    raise InvalidArgument(f"Unknown managed topic {name!r}; one of {', '.join(sorted(KINDS))}.")
                managed.append(KINDS[name])
            elif topic.get("custom_memory_topic"):
                topics.append(
                    {
                        "label": topic["custom_memory_topic"].get("label") or "",
                        "description": topic["custom_memory_topic"].get("description") or "",
                    }
                )
        changes.update(
            managed_topics=managed,
            custom_topics=topics,
            examples=[_example(e) for e in custom.get("generate_memories_examples") or []],
        )
    ttl = bank.get("ttl_config")
    if ttl is not None:
        granular = ttl.get("granular_ttl_config") or {}
        changes["default_ttl"] = _ttl(ttl.get("default_ttl"), "defaultTtl")
        changes["revision_ttl"] = _ttl(ttl.get("memory_revision_default_ttl"), "memoryRevisionDefaultTtl")
        changes.update({name: _ttl(granular.get(name), name) for name in _GRANULAR})
    return changes


def _example(example: dict[str, Any]) -> dict[str, Any]:
    conversation = []
    for event in (example.get("conversation_source") or {}).get("events") or []:
        content = event.get("content") or {}
        text = " ".join(part.get("text", "") for part in content.get("parts") or [] if isinstance(part, dict))
        conversation.append({"role": content.get("role", "user"), "text": text})
    memories = []
    for memory in example.get("generated_memories") or []:
        topic: dict[str, Any] = next(iter(memory.get("topics") or []), {})
        label = topic.get("custom_memory_topic_label") or _kind_of(topic.get("managed_memory_topic"))
        memories.append({"fact": memory.get("fact") or "", "topic": label})
    return {"conversation": conversation, "memories": memories}


def _kind_of(managed: Any) -> str:
    return KINDS.get(enum(managed, ManagedTopicEnum, "managedMemoryTopic"), "")


def _ttl(value: Any, name: str) -> timedelta | None:
    return None if value in (None, "") else duration(value, name)


def _bank_resource(config: MemoryBankConfig) -> dict[str, Any]:
    topics = [{"managedMemoryTopic": {"managedTopicEnum": TOPICS[kind]}} for kind in config.managed_topics]
    topics += [{"customMemoryTopic": topic} for topic in config.custom_topics]
    examples = [
        {
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
        for example in config.examples
    ]
    out: dict[str, Any] = profile_config.config_resource(config)
    if topics or examples:
        out["customizationConfigs"] = [{"memoryTopics": topics, "generateMemoriesExamples": examples}]
    granular = {name: duration_text(getattr(config, name)) for name in _GRANULAR if getattr(config, name)}
    ttl: dict[str, Any] = {}
    if config.default_ttl:
        ttl["defaultTtl"] = duration_text(config.default_ttl)
    if config.revision_ttl:
        ttl["memoryRevisionDefaultTtl"] = duration_text(config.revision_ttl)
    if granular:
        ttl["granularTtlConfig"] = {camel(name): value for name, value in granular.items()}
    if ttl:
        out["ttlConfig"] = ttl
    return out
