"""RAG Engine's ``ragEngineConfig``: agentplatform's ``rag.get_config`` and ``rag.update_config``.

``GET {location}/ragEngineConfig`` answers the app's ``RagEngineConfig``; ``PATCH`` sets its
``ragManagedDbConfig`` (one tier: ``basic``, ``enterprise``, ``scaled``, ``serverless``,
``unprovisioned``, or ``spanner`` holding ``basic``, ``scaled`` or ``unprovisioned``) and answers
an operation, done when it returns, which the client polls at the location before reading the
config again. Express mode spells the path ``v1beta1/ragEngineConfig``. The tier is recorded
per app and changes nothing (``vertex_app.models.RagEngineConfig`` says why).
"""

from __future__ import annotations

import time
from typing import Any

from rest_framework.request import Request
from rest_framework.response import Response

from vertex_app import errors, names, wire
from vertex_app.base import operation
from vertex_app.models import RagEngineConfig
from vertex_app.rag import RagView

_TIERS = ("basic", "enterprise", "scaled", "serverless", "unprovisioned")
_SPANNER_TIERS = ("basic", "scaled", "unprovisioned")
_DB_SPEC: wire.Spec = {**{tier: {} for tier in _TIERS}, "spanner": {tier: {} for tier in _SPANNER_TIERS}}
_CONFIG_SPEC: wire.Spec = {"name": None, "rag_managed_db_config": _DB_SPEC}
DEFAULT: dict[str, Any] = {"basic": {}}
"""What an app that never set one reads: Vertex's default tier."""


class RagEngineConfigView(RagView):
    def get(self, request: Request, **kwargs: Any) -> Response:
        """Read the app's RAG Engine config."""
        stored = RagEngineConfig.objects.filter(app_name=self.app_name).first()
        return Response(self.config_json(stored.rag_managed_db_config if stored else DEFAULT))

    def patch(self, request: Request, **kwargs: Any) -> Response:
        """Set the app's tier (the whole app's key only): an operation, done when it returns."""
        self.manage()
        body = wire.message(request.data, _CONFIG_SPEC)
        given = body.get("rag_managed_db_config")
        if given is not None:
            RagEngineConfig.objects.update_or_create(
                app_name=self.app_name, defaults={"rag_managed_db_config": _tier(given)}
            )
        project, location = kwargs.get("project"), kwargs.get("location")
        name = names.location_operation(str(time.time_ns()), project=project, location=location)
        stored = RagEngineConfig.objects.filter(app_name=self.app_name).first()
        config = self.config_json(stored.rag_managed_db_config if stored else DEFAULT)
        return Response(operation(name, config, kind=self.message_type("RagEngineConfig")))

    def config_json(self, tier: dict[str, Any]) -> dict[str, Any]:
        return {"name": f"{self.prefix}ragEngineConfig", "ragManagedDbConfig": tier}


def _tier(given: dict[str, Any]) -> dict[str, Any]:
    """The one tier a ``ragManagedDbConfig`` names (a oneof, as in Vertex's proto), in Vertex's spelling."""
    chosen = [name for name, value in given.items() if value is not None]
    if len(chosen) != 1:
        raise errors.InvalidArgument(
            "ragManagedDbConfig names one tier: one of " + ", ".join((*_TIERS, "spanner")) + f" (got {len(chosen)})."
        )
    tier = chosen[0]
    if tier != "spanner":
        return {tier: {}}
    inner = [name for name, value in given["spanner"].items() if value is not None]
    if len(inner) > 1:
        raise errors.InvalidArgument("ragManagedDbConfig.spanner names one tier: " + ", ".join(_SPANNER_TIERS) + ".")
    return {"spanner": {inner[0] if inner else "basic": {}}}  # Basic: Spanner's tier when none is chosen
