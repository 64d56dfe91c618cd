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

from django.db import transaction
from rest_framework.request import Request
from rest_framework.response import Response

from cognizes.access.key_kinds import check_whole_app
from memory_app import services
from memory_app.models import MemoryBankConfig
from runtime_app import deployed
from runtime_app.agents import UnknownAgent, get_runner
from vertex_app import bank_customization, engine_fields, names, profile_config
from vertex_app.base import VertexView, operation
from vertex_app.errors import FailedPrecondition, InvalidArgument
from vertex_app.models import Engine
from vertex_app.services import (
    EngineInUse,
    EngineNotDeletable,
    do_delete_engine,
    do_record_revision,
    do_update_engine,
    get_engine,
)
from vertex_app.wire import camel, duration, duration_text, message, rfc3339, string

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
    "structured_memory_configs": None,  # raw: schemas' property names are the caller's (vertex_app.profile_config)
}
_ENGINE = {
    "name": None,
    "display_name": None,
    "description": None,
    "labels": None,
    "spec": None,
    "etag": None,
    "create_time": None,
    "update_time": None,
    "context_spec": {"memory_bank_config": _BANK},
}
_GRANULAR = ("create_ttl", "generate_created_ttl", "generate_updated_ttl")


def read_body(data: Any) -> dict[str, Any]:
    """An engine resource a client sent (a create's or an update's body), snake_case; an absent body is empty.

    ``runtimes.create()`` sends no body at all (ADK's sandbox executor, ``adk deploy``), others ``null`` or ``{}``.
    """
    if data is None or (hasattr(data, "keys") and not data):
        return {}
    return message(dict(data) if hasattr(data, "keys") else data, _ENGINE)


def apply_bank(app_name: str, bank: dict[str, Any]) -> None:
    """Apply a memoryBankConfig (snake_case) to the app's MemoryBankConfig, as every create and update does."""
    try:
        services.do_configure_bank(app_name=app_name, changes=_config_changes(bank))
    except services.MemoryServiceError as error:
        raise InvalidArgument(str(error)) from error


class EngineView(VertexView):
    """The engine: its app, and the app's Memory Bank configuration."""

    def get(self, request: Request, **kwargs: Any) -> Response:
        """Read the engine and its Memory Bank configuration."""
        return Response(resource(get_engine(self.app_name), self.engine))

    def patch(self, request: Request, **kwargs: Any) -> Response:
        """Change the engine: its display name, description, labels, spec and Memory Bank configuration.

        Without ``updateMask`` (``memory_banks.update``) what the body carries is replaced; with one
        (``runtimes.update``, snake_case paths) exactly the paths named. The operation answered, and the one read
        back by its name, carry the engine as it now is: the SDK builds the updated ``Runtime`` from it.
        """
        check_whole_app(self.scope(None, write=True).only_user, self.app_name, "change the engine")
        body = read_body(request.data)
        mask = engine_fields.mask_of(request.query_params.get("updateMask") or request.query_params.get("update_mask"))
        engine = get_engine(self.app_name)
        update = engine_fields.read(body, mask=mask, engine_spec=engine.spec)
        with transaction.atomic():
            if update.bank is not None:
                apply_bank(self.app_name, update.bank)
            if update.fields:
                engine = do_update_engine(engine, fields=update.fields)
            record_revision(engine)
        return Response(engine_operation(engine, self.engine))

    def delete(self, request: Request, **kwargs: Any) -> Response:
        """Delete an engine a client created, and with force everything in it.

        ``force`` comes in the JSON body (agentplatform) or the query (the proto's mapping).
        """
        check_whole_app(self.scope(None, write=True).only_user, self.app_name, "delete the engine")
        force = _force(request)
        try:
            do_delete_engine(get_engine(self.app_name), force=force)
        except (EngineInUse, EngineNotDeletable) as error:
            raise FailedPrecondition(str(error)) from error
        return Response(operation(names.operation(self.engine)))


def _force(request: Request) -> bool:
    """``force`` from a DELETE's JSON body (as agentplatform sends it) or its query (as the proto maps it)."""
    data: Any = request.data
    if data in (None, ""):
        data = {}
    if not hasattr(data, "keys"):
        raise InvalidArgument("The request body must be a JSON object.")
    unknown = sorted(set(data) - {"force", "name"})
    if unknown:
        raise InvalidArgument(f"Unknown name \"{unknown[0]}\" at 'body'.")
    value = data.get("force", request.query_params.get("force"))
    if value in (None, "", False, "false", "False"):
        return False
    if value in (True, "true", "True"):
        return True
    raise InvalidArgument("'force' must be true or false.")


def engine_operation(engine: Engine, engine_name: str) -> dict[str, Any]:
    """A done operation of a change to the engine, carrying it (a create's, an update's; read back by its name)."""
    return operation(names.engine_operation(engine_name), resource(engine, engine_name), kind="ReasoningEngine")


def record_revision(engine: Engine) -> None:
    """A runtime revision for the engine's configuration, if it is a new one (its name, spec and context spec)."""
    out = resource(engine, "")
    do_record_revision(
        engine, display_name=out["displayName"], spec=out.get("spec"), context_spec=out.get("contextSpec") or {}
    )


def resource(engine: Engine, name: str) -> dict[str, Any]:
    """The engine resource, named ``name`` (the spelling the caller used, or the full one a create answers)."""
    config = services.get_bank_config(engine.app_name)
    changed = [moment for moment in (engine.updated_at, config.updated_at) if moment]
    out: dict[str, Any] = {
        "name": name,
        "displayName": engine.display_name or engine.app_name,
        "createTime": rfc3339(engine.created_at),
        "updateTime": rfc3339(max(changed) if changed else engine.created_at),
        "contextSpec": {"memoryBankConfig": _bank_resource(config)},
    }
    if engine.description:
        out["description"] = engine.description
    if engine.labels:
        out["labels"] = engine.labels
    if engine.spec is not None:
        out["spec"] = engine.spec
    try:
        agent = get_runner(engine.app_name).agent
    except UnknownAgent:
        return out  # an engine of Sessions and Memory Bank only: no spec, so clients register no methods
    out["displayName"] = engine.display_name or agent.name
    if agent.description and not engine.description:
        out["description"] = agent.description
    if engine.spec is None:
        out["spec"] = {"agentFramework": deployed.FRAMEWORK, "classMethods": deployed.CLASS_METHODS}
    return out


def _config_changes(bank: dict[str, Any]) -> dict[str, Any]:
    """MemoryBankConfig fields from Vertex's memoryBankConfig (what it names; the rest stays)."""
    changes: dict[str, Any] = profile_config.config_changes(bank)
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
    out: dict[str, Any] = profile_config.config_resource(config)
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
