"""``PostgresMemoryService``: ADK's ``BaseMemoryService`` on PostgreSQL + pgvector.

Sessions and events are consolidated into memories by a Celery worker (or inline
with ``consolidate_inline=True``, for scripts and tests); search is the hybrid
search of ``memory_app.search``.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from google.adk.events.event import Event
from google.adk.memory.base_memory_service import BaseMemoryService, SearchMemoryResponse
from google.adk.memory.memory_entry import MemoryEntry
from google.adk.sessions.session import Session
from google.genai import types
from typing_extensions import override

from cognizes.access import limits
from cognizes.infra.db_threads import run_in_db_thread
from memory_app import consolidation, services
from memory_app.search import MemoryHit, search_memories
from sessions_app import services as session_services
from sessions_app.adk import event_json


class PostgresMemoryService(BaseMemoryService):
    """Long-term memory per (app, user), shared by every process on the database."""

    def __init__(self, *, consolidate_inline: bool = False, search_limit: int = 10) -> None:
        self.consolidate_inline = consolidate_inline
        self.search_limit = search_limit

    @override
    async def add_session_to_memory(self, session: Session) -> None:
        await run_in_db_thread(self._add_session, session)

    def _add_session(self, session: Session) -> None:
        stored = session_services.get_session(
            app_name=session.app_name, user_id=session.user_id, session_id=session.id, num_recent_events=0
        )
        if stored is not None:
            consolidation.do_enqueue_session(
                app_name=session.app_name,
                user_id=session.user_id,
                session_id=session.id,
                run_inline=self.consolidate_inline,
            )
        else:  # a session kept by another session service: take the events it carries
            consolidation.do_enqueue_events(
                app_name=session.app_name,
                user_id=session.user_id,
                session_id=session.id,
                events=_dump(session.events),
                run_inline=self.consolidate_inline,
            )

    @override
    async def add_events_to_memory(
        self,
        *,
        app_name: str,
        user_id: str,
        events: Sequence[Event],
        session_id: str | None = None,
        custom_metadata: Mapping[str, object] | None = None,
    ) -> None:
        await run_in_db_thread(
            consolidation.do_enqueue_events,
            app_name=app_name,
            user_id=user_id,
            events=_dump(events),
            session_id=session_id or "",
            custom_metadata=dict(custom_metadata or {}),
            run_inline=self.consolidate_inline,
        )

    @override
    async def add_memory(
        self,
        *,
        app_name: str,
        user_id: str,
        memories: Sequence[MemoryEntry],
        custom_metadata: Mapping[str, object] | None = None,
    ) -> None:
        candidates = [
            services.Candidate(
                text=_text(entry.content),
                author=entry.author or "",
                metadata={**entry.custom_metadata, **dict(custom_metadata or {})},
            )
            for entry in memories
        ]
        await run_in_db_thread(
            services.do_remember, app_name=app_name, user_id=user_id, candidates=candidates, cause="add_memory"
        )

    @override
    async def search_memory(self, *, app_name: str, user_id: str, query: str) -> SearchMemoryResponse:
        # An agent's turn is not refused for a long user message (ADK's preload tool sends it whole as the
        # query): the service's limit refuses hostile API requests; here the query is cut to it.
        hits = await run_in_db_thread(
            search_memories,
            app_name=app_name,
            user_id=user_id,
            query=query[: limits.max_query_chars()],
            limit=self.search_limit,
        )
        return SearchMemoryResponse(memories=[_entry(hit) for hit in hits])

    @override
    async def delete_memory(self, *, app_name: str, user_id: str, memory_id: str | None = None) -> None:
        """Delete one memory, or with no id everything remembered about the user."""
        if memory_id is None:
            await run_in_db_thread(services.do_erase_user, app_name=app_name, user_id=user_id)
        else:
            await run_in_db_thread(services.do_delete_memory, memory_id=memory_id, app_name=app_name, user_id=user_id)


def _dump(events: Sequence[Event]) -> list[dict[str, Any]]:
    return [event_json(event) for event in events if not event.partial]


def _text(content: types.Content) -> str:
    return " ".join(part.text for part in content.parts or [] if part.text)


def _entry(hit: MemoryHit) -> MemoryEntry:
    when = hit.event_time or hit.created_at
    return MemoryEntry(
        id=str(hit.id),
        content=types.Content(
            role="user" if hit.author in ("", "user") else "model", parts=[types.Part(text=hit.text)]
        ),
        author=hit.author or None,
        timestamp=when.isoformat(),
        custom_metadata=hit.metadata,
    )
