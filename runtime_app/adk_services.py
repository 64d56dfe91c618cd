"""The ``cognizes://`` scheme for ADK's CLI: ``adk web`` and ``adk api_server`` on Cognizes.

Both commands build their session and memory services from URIs, through ADK's
service registry, after importing ``services.py`` from the agents directory. An
agents directory opts in with a ``services.py`` of two lines (``cognizes`` must
be importable: installed, on ``PYTHONPATH``, or put on ``sys.path`` first as
``demo_agents/services.py`` does)::

    from cognizes.adk_services import register
    register()

then::

    .venv/bin/adk web --session_service_uri cognizes:// --memory_service_uri cognizes:// \
        --artifact_service_uri cognizes:// demo_agents
    .venv/bin/adk api_server --session_service_uri cognizes:// --memory_service_uri cognizes:// demo_agents

The URI names no database: ``DATABASE_URL`` does, as everywhere in Cognizes
(the embedded PostgreSQL when it is unset), so the CLI, ``make run`` and the
workers cannot drift apart. ``cognizes://host/db`` is refused rather than ignored.

ADK builds its own Runners from the services, without what ``runner_for`` adds;
``--extra_plugins cognizes.adk.AuditPlugin --extra_plugins
cognizes.adk.MemoryIngestionPlugin`` adds the audit log and memory ingestion
(tracing is on once Django is set up).
"""

from __future__ import annotations

from typing import Any
from urllib.parse import urlsplit

from google.adk.artifacts import BaseArtifactService
from google.adk.cli.service_registry import get_service_registry
from google.adk.memory.base_memory_service import BaseMemoryService
from google.adk.sessions.base_session_service import BaseSessionService

from cognizes.infra.setup import ensure_django

SCHEME = "cognizes"


def register() -> None:
    """Register the ``cognizes://`` session, memory and artifact factories; calling it again changes nothing."""
    registry = get_service_registry()
    registry.register_session_service(SCHEME, session_service_factory)
    registry.register_memory_service(SCHEME, memory_service_factory)
    registry.register_artifact_service(SCHEME, artifact_service_factory)


def session_service_factory(uri: str, **_: Any) -> BaseSessionService:
    """``PostgresSessionService`` for ``cognizes://``; ADK's kwargs (agents_dir…) do not apply."""
    _check_uri(uri)
    # Django is set up here, not when services.py is imported: ADK turns an error
    # while importing services.py into a logged warning followed by "unsupported
    # URI"; raised from the factory, it reaches the user.
    ensure_django()
    from sessions_app.adk import PostgresSessionService

    return PostgresSessionService()


def memory_service_factory(uri: str, **_: Any) -> BaseMemoryService:
    """``PostgresMemoryService`` for ``cognizes://``; ADK's kwargs (agents_dir…) do not apply."""
    _check_uri(uri)
    ensure_django()
    from memory_app.adk import PostgresMemoryService

    return PostgresMemoryService()


def artifact_service_factory(uri: str, **_: Any) -> BaseArtifactService:
    """``PostgresArtifactService`` for ``cognizes://`` (``--artifact_service_uri``)."""
    _check_uri(uri)
    ensure_django()
    from artifacts_app.adk import PostgresArtifactService

    return PostgresArtifactService()


def _check_uri(uri: str) -> None:
    parts = urlsplit(uri)
    if parts.scheme != SCHEME or parts.netloc or parts.path or parts.query or parts.fragment:
        raise ValueError(
            f"{uri!r}: use plain 'cognizes://'. The database is the one DATABASE_URL names "
            "(e.g. DATABASE_URL=postgresql://user:pass@host:5432/cognizes), not part of the URI."
        )
