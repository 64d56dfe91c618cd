"""The one import surface for agent code.

    from cognizes.adk import runner_for
    runner = runner_for(root_agent, app_name="weather")   # sessions, memory, tools, audit, tracing

or the pieces: PostgresSessionService, PostgresMemoryService, PostgresArtifactService, PostgresCredentialService,
PostgresEvalSetsManager, PostgresEvalSetResultsManager, DatabaseToolset, AuditPlugin, PostgresExampleStore
(ExampleTool's few-shot examples from an Example Store).

Importing this module sets Django up (with ``cognizes.settings`` unless ``DJANGO_SETTINGS_MODULE`` says otherwise),
so an agent script in any directory needs nothing but the installed package. Its database is the first of:

- ``DATABASE_URL`` (and ``REDIS_URL``), when set: servers of your own, migrated with ``cognizes migrate``;
- the embedded PostgreSQL and Redis that ``cognizes run`` keeps under ``COGNIZES_VAR_DIR`` (by default the user's
  data folder, or ``var/`` in a checkout): the script joins them while ``cognizes run`` is running, and otherwise
  starts them itself, as every process of a checkout does (they stop when the last process using them exits).

The secret key is the one ``cognizes run`` wrote into that folder (``DJANGO_SECRET_KEY`` overrides it). A folder
where ``cognizes run`` never ran holds no migrated database: the import then exits with a message saying so
(``cognizes.infra.setup``) rather than failing later at the first query.
"""

from cognizes.infra.setup import ensure_django

ensure_django()

from artifacts_app.adk import PostgresArtifactService  # noqa: E402  (after ensure_django())
from memory_app.adk import PostgresMemoryService  # noqa: E402  (after ensure_django())
from memory_app.example_provider import PostgresExampleStore  # noqa: E402  (after ensure_django())
from runtime_app.evals import PostgresEvalSetResultsManager, PostgresEvalSetsManager  # noqa: E402  (after ensure_django())
from runtime_app.runner import MemoryIngestionPlugin, runner_for, settle  # noqa: E402  (after ensure_django())
from sessions_app.adk import PostgresSessionService  # noqa: E402  (after ensure_django())
from tools_app.adk import AuditPlugin, DatabaseToolset, approval_message  # noqa: E402  (after ensure_django())
from tools_app.credential_service import PostgresCredentialService  # noqa: E402  (after ensure_django())
from tracing_app.setup import configure_tracing as enable_tracing  # noqa: E402  (after ensure_django(); on by default: COGNIZES_TRACING)

__all__ = [
    "AuditPlugin",
    "DatabaseToolset",
    "MemoryIngestionPlugin",
    "PostgresArtifactService",
    "PostgresCredentialService",
    "PostgresEvalSetResultsManager",
    "PostgresEvalSetsManager",
    "PostgresExampleStore",
    "PostgresMemoryService",
    "PostgresSessionService",
    "approval_message",
    "enable_tracing",
    "runner_for",
    "settle",
]
