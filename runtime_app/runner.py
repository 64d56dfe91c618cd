"""``runner_for``: an ADK ``Runner`` on Cognizes in one call.

    from cognizes.adk import runner_for
    runner = runner_for(root_agent, app_name="weather")

wires the PostgreSQL session and memory services, the app's tool registry
(``DatabaseToolset``), the tool audit log (``AuditPlugin``), tracing, and memory
ingestion (``MemoryIngestionPlugin``): after each turn, or once the session has
been quiet for a while ("session end"), the session goes to a Celery worker
that consolidates its new events into the user's memories.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from datetime import timedelta
from typing import Literal

from django.conf import settings
from google.adk.agents.base_agent import BaseAgent
from google.adk.agents.invocation_context import InvocationContext
from google.adk.agents.llm_agent import LlmAgent
from google.adk.apps import App
from google.adk.apps.app import EventsCompactionConfig
from google.adk.artifacts import BaseArtifactService
from google.adk.auth.credential_service.base_credential_service import BaseCredentialService
from google.adk.memory.base_memory_service import BaseMemoryService
from google.adk.plugins.base_plugin import BasePlugin
from google.adk.runners import Runner
from google.adk.sessions.base_session_service import BaseSessionService

from cognizes.infra.db_threads import run_in_db_thread

logger = logging.getLogger(__name__)

MemoryIngestion = Literal["turn", "session_end", "off"]


class MemoryIngestionPlugin(BasePlugin):
    """Hands each finished run's session to memory consolidation; never fails the run.

    ``"turn"``: a consolidation job after every run (it takes only the events
    since the last job). ``"session_end"``: one job per session, pushed back on
    every run and due once the session has been quiet for ``idle_seconds``.
    """

    def __init__(
        self,
        mode: MemoryIngestion = "turn",
        *,
        idle_seconds: float | None = None,
        name: str = "cognizes_memory_ingestion",
    ) -> None:
        """``name`` as other plugins take it: ``adk web --extra_plugins`` passes one."""
        super().__init__(name=name)
        if mode not in ("turn", "session_end", "off"):
            raise ValueError(f"memory ingestion must be 'turn', 'session_end' or 'off', not {mode!r}")
        self.mode = mode
        self.idle_seconds = settings.COGNIZES_SESSION_IDLE_SECONDS if idle_seconds is None else idle_seconds

    async def after_run_callback(self, *, invocation_context: InvocationContext) -> None:
        session = invocation_context.session
        try:
            if self.mode == "turn" and invocation_context.memory_service is not None:
                await invocation_context.memory_service.add_session_to_memory(session)
            elif self.mode == "session_end":
                from memory_app.consolidation import do_schedule_session

                await run_in_db_thread(
                    do_schedule_session,
                    app_name=session.app_name,
                    user_id=session.user_id,
                    session_id=session.id,
                    delay_seconds=self.idle_seconds,
                )
        except Exception:
            logger.exception("memory ingestion of session %s failed; the run itself is stored", session.id)


def runner_for(
    agent: BaseAgent,
    *,
    app_name: str,
    plugins: Sequence[BasePlugin] = (),
    auto_create_session: bool = True,
    memory: MemoryIngestion = "turn",
    session_idle_seconds: float | None = None,
    compaction: EventsCompactionConfig | None = None,
    registry_tools: bool = True,
    audit: bool = True,
    tracing: bool = True,
    session_ttl: timedelta | None = None,
    session_service: BaseSessionService | None = None,
    memory_service: BaseMemoryService | None = None,
    artifact_service: BaseArtifactService | None = None,
    credential_service: BaseCredentialService | None = None,
    knowledge: Sequence[int | str] = (),
) -> Runner:
    """A Runner for ``agent`` as app ``app_name``, on Cognizes' services.

    ``auto_create_session``: a run on an unknown session id creates it.
    ``memory``: when sessions become memories ("turn", "session_end" after
    ``session_idle_seconds`` of quiet (default COGNIZES_SESSION_IDLE_SECONDS),
    or "off"). ``compaction``: ADK's event compaction (summaries of old events
    in the prompt). ``registry_tools``: give an ``LlmAgent`` without one a
    ``DatabaseToolset`` (the agent object gets it). ``session_ttl``: how long
    the sessions it creates live (default COGNIZES_SESSION_TTL_SECONDS; unset:
    until deleted). Artifacts are stored in PostgreSQL (``PostgresArtifactService``), and so are the
    credentials tools obtain for users (``PostgresCredentialService``: OAuth tokens survive restarts).
    ``knowledge``: corpora of the app (ids or display names) an ``LlmAgent`` searches
    with the ``search_knowledge`` tool.
    """
    from artifacts_app.adk import PostgresArtifactService
    from memory_app.adk import PostgresMemoryService
    from sessions_app.adk import PostgresSessionService
    from tools_app.adk import AuditPlugin, DatabaseToolset
    from tools_app.credential_service import PostgresCredentialService

    if tracing:
        from tracing_app.setup import configure_tracing

        configure_tracing()
    if (
        registry_tools
        and isinstance(agent, LlmAgent)
        and not any(isinstance(tool, DatabaseToolset) for tool in agent.tools)
    ):
        agent.tools.append(DatabaseToolset())
    if knowledge and isinstance(agent, LlmAgent):
        from knowledge_app.adk import knowledge_tool

        if not any(getattr(tool, "name", "") == "search_knowledge" for tool in agent.tools):
            agent.tools.append(knowledge_tool(app_name, knowledge))
    app_plugins = list(plugins)
    if audit:
        app_plugins.append(AuditPlugin())
    if memory != "off":
        app_plugins.append(MemoryIngestionPlugin(memory, idle_seconds=session_idle_seconds))
    app = App(name=app_name, root_agent=agent, plugins=app_plugins, events_compaction_config=compaction)
    return Runner(
        app=app,
        session_service=session_service or PostgresSessionService(ttl=session_ttl),
        memory_service=memory_service or PostgresMemoryService(),
        artifact_service=artifact_service or PostgresArtifactService(),
        credential_service=credential_service or PostgresCredentialService(),
        auto_create_session=auto_create_session,
    )


async def settle(runner: Runner) -> None:
    """Wait for the runner's background writes (audit rows): call it before its event loop ends.

    ``asyncio.run`` cancels unfinished tasks on the way out, so a script or a
    command that ends right after a run would otherwise lose its last rows.
    """
    from tools_app.adk import AuditPlugin

    for plugin in runner.app.plugins:
        if isinstance(plugin, AuditPlugin):
            await plugin.flush()
