"""Reading a session's events: after a version (what memory has not seen), or a page at a time."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from django.db import connection

from cognizes.infra.postgres.base import prepared_cursor
from sessions_app.services.base import _json, _live, to_microseconds
from sessions_app.services.create_read import SessionRef, get_session_pk


def get_events_after(
    *, app_name: str, user_id: str, session_id: str, after_version: int = 0
) -> list[tuple[int, dict[str, Any]]] | None:
    """(version, event) pairs of the session's events stored after ``after_version``; None if no such session.

    Consumers that follow a session (memory consolidation, live views) keep the
    last version they took as their watermark.
    """
    pk = get_session_pk(app_name=app_name, user_id=user_id, session_id=session_id)
    return None if pk is None else get_events_after_pk(pk, after_version=after_version)


def get_events_after_pk(session_pk: int, *, after_version: int = 0) -> list[tuple[int, dict[str, Any]]] | None:
    """``get_events_after`` by row id, for callers that resolved (and scope-checked) the session already."""
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT s.id, e.version, e.data FROM sessions s "
            "LEFT JOIN events e ON e.session_id = s.id AND e.version > %s "
            "WHERE s.id = %s ORDER BY e.version",
            [after_version, session_pk],
        )
        rows = cursor.fetchall()
    if not rows:
        return None
    return [(version, _json(data)) for _, version, data in rows if version is not None]


@dataclass(frozen=True)
class StoredEvent:
    version: int
    data: dict[str, Any]
    raw_event: dict[str, Any] | None


@dataclass(frozen=True)
class StoredEventText:
    """A stored event as the database wrote its JSON, not yet decoded: a reader that has rendered this very
    text before (Vertex's ListEvents, every turn) compares it and decodes nothing (``decoded`` when it must)."""

    version: int
    data: Any
    """The event's JSON text (or, on a connection that decodes jsonb itself, the value)."""
    raw_event: Any

    def decoded(self) -> StoredEvent:
        return StoredEvent(self.version, _json(self.data), None if self.raw_event is None else _json(self.raw_event))


_FIND_PAGE_SQL = f"""
SELECT s.user_id, s.id, e.version, e.data, e.raw_event
FROM (
    SELECT user_id, id, count(*) OVER () AS found FROM sessions
    WHERE app_name = %(app)s AND session_id = %(sid)s AND {_live()} AND (user_id = %(only)s OR %(only)s::text IS NULL)
    ORDER BY user_id LIMIT 2
) s
LEFT JOIN LATERAL (
    SELECT version, data, raw_event FROM events
    WHERE session_id = s.id AND version > %(after)s AND (%(since)s::float8 IS NULL OR timestamp >= %(since)s::float8)
    ORDER BY version LIMIT %(limit)s
) e ON s.found = 1
ORDER BY e.version
"""


def find_event_page(
    *,
    app_name: str,
    session_id: str,
    only_user: str | None = None,
    after_version: int = 0,
    since: float | None = None,
    limit: int = 100,
) -> tuple[list[SessionRef], list[StoredEventText]]:
    """``find_sessions`` (two at most) and, if it found one, a page of its events in order as stored text (any
    rawEvent kept verbatim; ``since`` in epoch seconds, compared to the microsecond), in one statement: for callers
    that know only the session's id (Vertex's ListEvents), one round trip, not two. The caller checks the session it
    gets before it shows any event."""
    params = {
        "app": app_name,
        "sid": session_id,
        "only": only_user,
        "after": after_version,
        "since": None if since is None else to_microseconds(since),
        "limit": limit,
    }
    with prepared_cursor() as cursor:
        cursor.execute(_FIND_PAGE_SQL, params)
        rows = cursor.fetchall()
    refs = [SessionRef(user_id, pk) for user_id, pk in dict.fromkeys((user_id, pk) for user_id, pk, *_ in rows)]
    return refs, [StoredEventText(version, data, raw) for _, _, version, data, raw in rows if version is not None]
