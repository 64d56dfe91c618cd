"""The one import surface for agent code.

    from cognizes.adk import runner_for
    runner = runner_for(root_agent, app_name="weather")   # sessions, memory, tools, audit, tracing

or the pieces: PostgresSessionService, PostgresMemoryService, PostgresArtifactService, DatabaseToolset,
AuditPlugin.

Importing this module sets Django up (with ``cognizes.settings`` unless
``DJANGO_SETTINGS_MODULE`` says otherwise), so a plain agent script needs nothing
but ``DATABASE_URL`` (or nothing at all, for the embedded PostgreSQL).
"""

from cognizes.infra.setup import ensure_django

ensure_django()

from artifacts_app.adk import PostgresArtifactService  # noqa: E402  (after ensure_django())
from memory_app.adk import PostgresMemoryService  # noqa: E402  (after ensure_django())
from runtime_app.runner import MemoryIngestionPlugin, runner_for, settle  # noqa: E402  (after ensure_django())
from sessions_app.adk import PostgresSessionService  # noqa: E402  (after ensure_django())
from tools_app.adk import AuditPlugin, DatabaseToolset, approval_message  # noqa: E402  (after ensure_django())
from tracing_app.setup import configure_tracing as enable_tracing  # noqa: E402  (after ensure_django(); on by default: COGNIZES_TRACING)

__all__ = [
    "AuditPlugin",
    "DatabaseToolset",
    "MemoryIngestionPlugin",
    "PostgresArtifactService",
    "PostgresMemoryService",
    "PostgresSessionService",
    "approval_message",
    "enable_tracing",
    "runner_for",
    "settle",
]
