"""``reasoningEngines/{id}`` itself: the engine, its Memory Bank config (``contextSpec.memoryBankConfig``) and its
agent.

An app of ``COGNIZES_AGENTS`` hosts its agent: the engine is named and described
by it and lists ADK's class methods (``spec.classMethods``, see vertex_app.agents).

Vertex configures Memory Bank on the engine resource; in Cognizes that is the
app's ``MemoryBankConfig`` (memory_app), the same one the admin and the native
API edit: customization configs per scope, revisions kept or not
(``disableMemoryRevisions``), TTLs, and the models it names (vertex_app.bank_customization).
``similaritySearchConfig`` names Google's embedding model: kept and shown, while Cognizes
embeds with COGNIZES_EMBEDDER; ``generationConfig.model`` is used when it is a Gemini model and
the server extracts with Gemini (memory_app.extraction.extraction_model), else kept and shown.
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
from vertex_app import bank_customization, names
from vertex_app.base import VertexView, operation
from vertex_app.errors import InvalidArgument
from vertex_app.services import get_engine
from vertex_app.wire import camel, duration, duration_text, field_mask, message, rfc3339, string

_BANK = {
    "customization_configs": [bank_customization.CUSTOMIZATION],
    "ttl_config": {
        "default_ttl": None,
        "memory_revision_default_ttl": None,
        "granular_ttl_config": {"create_ttl": None, "generate_created_ttl": None, "generate_updated_ttl": None},
    },
    "disable_memory_revisions": None,
    "similarity_search_config": bank_customization.SIMILARITY_SEARCH,
    "generation_config": bank_customization.GENERATION,
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
        """Change the engine's Memory Bank configuration: customizations by scope, revisions, models, TTLs."""
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
    changes: dict[str, Any] = {}
    if bank.get("disable_memory_revisions") is not None:
        if not isinstance(bank["disable_memory_revisions"], bool):
            raise InvalidArgument("'disableMemoryRevisions' is true or false.")
        changes["keep_revisions"] = not bank["disable_memory_revisions"]
    if bank.get("customization_configs") is not None:
        changes.update(bank_customization.customization_changes(bank["customization_configs"]))
    if bank.get("generation_config") is not None:
        changes.update(bank_customization.generation_changes(bank["generation_config"]))
    if bank.get("similarity_search_config") is not None:
        changes["embedding_model"] = string(
            bank["similarity_search_config"].get("embedding_model"), "similaritySearchConfig.embeddingModel"
        )
    ttl = bank.get("ttl_config")
    if ttl is not None:
        granular = ttl.get("granular_ttl_config") or {}
        changes["default_ttl"] = _ttl(ttl.get("default_ttl"), "defaultTtl")
        changes["revision_ttl"] = _ttl(ttl.get("memory_revision_default_ttl"), "memoryRevisionDefaultTtl")
        changes.update({name: _ttl(granular.get(name), name) for name in _GRANULAR})
    return changes


def _ttl(value: Any, name: str) -> timedelta | None:
    return None if value in (None, "") else duration(value, name)


def _bank_resource(config: MemoryBankConfig) -> dict[str, Any]:
    out: dict[str, Any] = {}
    customizations = bank_customization.customization_resources(config)
    if customizations:
        out["customizationConfigs"] = customizations
    if not config.keep_revisions:
        out["disableMemoryRevisions"] = True
    generation = bank_customization.generation_resource(config)
    if generation:
        out["generationConfig"] = generation
    if config.embedding_model:
        out["similaritySearchConfig"] = {"embeddingModel": config.embedding_model}
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
