"""Make ``cognizes://`` work for ``adk web`` / ``adk api_server`` on this agents directory.

From the project root::

    .venv/bin/adk web --session_service_uri cognizes:// --memory_service_uri cognizes:// \
        --extra_plugins cognizes.adk.AuditPlugin --extra_plugins cognizes.adk.MemoryIngestionPlugin demo_agents

(``adk api_server`` takes the same options; the plugins add the audit log and memory ingestion.)

or, through Cognizes' Vertex AI REST surface, as an agent written for Vertex would::

    COGNIZES_API_KEY=cgz_… .venv/bin/adk web --session_service_uri cognizes+vertex://127.0.0.1:8000/ENGINE_ID \
        --memory_service_uri cognizes+vertex://127.0.0.1:8000/ENGINE_ID demo_agents

(ENGINE_ID from ``manage.py vertex_engine weather``). With ``cognizes://``,
``DATABASE_URL`` selects the database (the embedded PostgreSQL when unset);
``cognizes://`` takes no host, path or query. For your own agents directory, copy
this file into it (adjust ``_ROOT`` or make ``cognizes`` importable), or write just
``from cognizes.adk_services import register; register()``.
"""

import sys
from pathlib import Path

# ADK imports this file as the top-level module ``services`` with only the agents
# directory on sys.path; the agents import ``cognizes`` and ``demo_agents`` from the
# project root. Appended, so the root's top-level names shadow nothing installed.
_ROOT = str(Path(__file__).resolve().parents[1])
if _ROOT not in sys.path:
    sys.path.append(_ROOT)

from cognizes.adk_services import register  # noqa: E402  (after the project root is on sys.path)
from cognizes.vertex import register as register_vertex  # noqa: E402  (after the project root is on sys.path)

register()
register_vertex()
