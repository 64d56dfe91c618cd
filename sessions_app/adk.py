"""``PostgresSessionService``: ADK's ``BaseSessionService`` on PostgreSQL.

A thin adapter: converts between ADK's Pydantic objects and ``sessions_app.services``,
runs the database work on ``cognizes.infra.db_threads`` and raises ADK's own errors.
Sessions it returns carry the stored ``version`` as ADK's storage marker, so the
next ``append_event`` is a compare-and-swap against exactly what was read.
"""

from __future__ import annotations

import json
from datetime import timedelta
from typing import Any

from django.conf import settings
from django.utils import timezone
from google.adk.errors._stale_session_error import StaleSessionError
from google.adk.errors.already_exists_error import AlreadyExistsError
from google.adk.errors.session_not_found_error import SessionNotFoundError
from google.adk.events.event import Event
from google.adk.platform import time as platform_time
from google.adk.platform import uuid as platform_uuid
from google.adk.sessions import _session_util
from google.adk.sessions.base_session_service import (
    BaseSessionService,
    GetSessionConfig,
    ListSessionsResponse,
)
from google.adk.sessions.session import Session
from typing_extensions import override

from cognizes.infra.db_threads import run_in_db_thread
from sessions_app import services
from sessions_app.stored_events import events_from_json


class PostgresSessionService(BaseSessionService):
    """Sessions, events and app/user state in PostgreSQL, safe across processes."""

    def __init__(self, *, ttl: timedelta | None = None) -> None:
        """``ttl``: how long each session it creates lives (then it is gone, as if deleted); by default
        ``COGNIZES_SESSION_TTL_SECONDS``, and with that unset sessions live until deleted."""
        super().__init__()
        seconds = settings.COGNIZES_SESSION_TTL_SECONDS
        self.ttl = ttl if ttl is not None else (timedelta(seconds=seconds) if seconds else None)

    @override
    async def create_session(
        self,
        *,
        app_name: str,
        user_id: str,
        state: dict[str, Any] | None = None,
        session_id: str | None = None,
    ) -> Session:
        session_id = session_id.strip() if session_id else platform_uuid.new_uuid()
        try:
            stored = await run_in_db_thread(
                services.do_create_session,
                app_name=app_name,
                user_id=user_id,
                session_id=session_id,
                delta=split_delta(state or {}),
                now=platform_time.get_time(),
                attributes=services.SessionAttributes(expire_time=timezone.now() + self.ttl if self.ttl else None),
            )
        except services.SessionExists as error:
            raise AlreadyExistsError(str(error)) from error
        return _to_session(stored, events=[])

    @override
    async def get_session(
        self,
        *,
        app_name: str,
        user_id: str,
        session_id: str,
        config: GetSessionConfig | None = None,
    ) -> Session | None:
        config = config or GetSessionConfig()
        return await run_in_db_thread(
            _load_session,
            app_name=app_name,
            user_id=user_id,
            session_id=session_id.strip(),  # as create_session and ADK's own services: padded ids name the same session
            num_recent_events=config.num_recent_events,
            after_timestamp=config.after_timestamp,
        )

    @override
    async def list_sessions(self, *, app_name: str, user_id: str | None = None) -> ListSessionsResponse:
        stored = await run_in_db_thread(services.list_sessions, app_name=app_name, user_id=user_id)
        return ListSessionsResponse(sessions=[_to_session(each, events=[]) for each in stored])

    @override
    async def delete_session(self, *, app_name: str, user_id: str, session_id: str) -> None:
        await run_in_db_thread(
            services.do_delete_session, app_name=app_name, user_id=user_id, session_id=session_id.strip()
        )

    @override
    async def get_user_state(self, *, app_name: str, user_id: str) -> dict[str, Any]:
        state, _version = await run_in_db_thread(services.get_user_state, app_name=app_name, user_id=user_id)
        return state

    @override
    async def append_event(self, session: Session, event: Event) -> Event:
        if event.partial:
            return event
        # As ADK's base class: temp: keys reach the in-memory session, never storage.
        self._apply_temp_state(session, event)
        event = self._trim_temp_delta_state(event)
        new_event = to_new_event(event)
        try:
            version = await run_in_db_thread(_append, session, new_event)
        except services.SessionNotFound as error:
            raise SessionNotFoundError(str(error)) from error
        except services.StaleSession as error:
            raise StaleSessionError(str(error)) from error
        session._storage_update_marker = str(version)
        session.last_update_time = event.timestamp
        return self._commit_event_to_session(session, event)


def _load_session(**query: Any) -> Session | None:
    """Read and rebuild a session on the database thread, keeping the event loop free.

    Rebuilding ADK's event objects costs more than the query itself (``stored_events`` halves it).
    """
    stored = services.get_session(**query)
    if stored is None:
        return None
    return _to_session(stored, events=events_from_json(stored.events_json))


def trim_temp_state(event: Event) -> Event:
    """Drop ``temp:`` keys from the event's delta, by ADK's own rule (for writers with no live session)."""
    return PostgresSessionService()._trim_temp_delta_state(event)


def event_json(event: Event) -> dict[str, Any]:
    """An ADK event as JSON data: how it is stored, shown by the API and handed to memory."""
    return event.model_dump(mode="json", exclude_none=True)


def to_new_event(event: Event) -> services.NewEvent:
    """An ADK event (``temp:`` keys already trimmed) as the services store it."""
    data = event_json(event)
    return services.NewEvent(
        event_id=event.id,
        invocation_id=event.invocation_id,
        author=event.author,
        branch=event.branch,
        timestamp=event.timestamp,
        data_json=json.dumps(data, ensure_ascii=False),
        preview=services.event_preview(data),
        state_delta=split_delta(event.actions.state_delta if event.actions else {}),
    )


def _append(session: Session, event: services.NewEvent) -> int:
    """Append at the version the session was loaded at.

    A session that carries no version of ours (built by hand, or by another
    service) is checked as ADK's DatabaseSessionService does: it is stale only if
    storage moved past the last event it holds.
    """
    keys = {"app_name": session.app_name, "user_id": session.user_id, "session_id": session.id}
    expected = _stored_version(session)
    if expected is None:
        head = services.get_session_head(**keys)
        if head is None:
            raise services.SessionNotFound(f"Session {session.id} not found.")
        last_seen = session.events[-1].id if session.events else None
        if head.last_update_time > session.last_update_time and head.last_event_id != last_seen:
            raise services.StaleSession()
        expected = head.version
    return services.do_append_event(**keys, expected_version=expected, event=event)


def _stored_version(session: Session) -> int | None:
    marker = session._storage_update_marker
    return int(marker) if marker is not None and marker.isdigit() else None


def split_delta(state: dict[str, Any]) -> services.StateDelta:
    """State keys by scope (app:, user:, session), made JSON-safe as ADK's own services do."""
    deltas = _session_util.extract_json_safe_state_delta(state)
    return services.StateDelta(app=deltas["app"], user=deltas["user"], session=deltas["session"])


def _to_session(stored: services.StoredSession, *, events: list[Event]) -> Session:
    session = Session(
        id=stored.session_id,
        app_name=stored.app_name,
        user_id=stored.user_id,
        state=stored.merged_state(),
        events=events,
        last_update_time=stored.last_update_time,
    )
    session._storage_update_marker = str(stored.version)
    return session
