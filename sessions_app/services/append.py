"""Appending an event: one statement that compares-and-swaps the version and merges shared state."""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from django.db import IntegrityError, connection

from cognizes.infra.postgres.base import prepared_cursor
from sessions_app.services.base import (
    PREVIEW_LENGTH,
    NewEvent,
    SessionError,
    SessionNotFound,
    SeveralSessions,
    _live,
    _raise_missing_or_stale,
    check_timestamp,
    to_microseconds,
)
from sessions_app.services.create_read import get_session_users

_APPEND_SQL = """
WITH s AS (
    UPDATE sessions
    SET version = version + 1,
        state = state || %(session_delta)s::jsonb,
        last_update_time = %(ts)s,
        update_time = to_timestamp(%(ts)s)
    WHERE app_name = %(app)s AND user_id = {user} AND session_id = %(sid)s
      AND (version = %(expected)s OR %(expected)s::bigint IS NULL) AND {live}
    RETURNING id, version, user_id
), e AS (
    INSERT INTO events (session_id, version, event_id, invocation_id, author, branch,
                        timestamp, data, preview, raw_event)
    SELECT s.id, s.version, %(event_id)s, %(invocation_id)s, %(author)s, %(branch)s,
           %(event_ts)s, %(data)s::jsonb, %(preview)s, %(raw)s::jsonb
    FROM s
){scoped}
SELECT version, user_id FROM s
"""

_THE_USER = "%(user)s"
_THE_ONE_USER = """(
        SELECT min(user_id) FROM sessions
        WHERE app_name = %(app)s AND session_id = %(sid)s AND {live}
          AND (user_id = %(only_user)s OR %(only_user)s::text IS NULL)
        HAVING count(*) = 1)"""
"""The user of the one live session of the app with this id (of ``only_user``, if given); NULL if none or several."""


_APP_MERGE_SQL = """, a AS (
    INSERT INTO app_states (app_name, state, version, update_time)
    SELECT %(app)s, %(app_delta)s::jsonb, 1, now() FROM s
    ON CONFLICT (app_name) DO UPDATE
        SET state = app_states.state || EXCLUDED.state,
            version = app_states.version + 1, update_time = EXCLUDED.update_time
)"""


_USER_MERGE_SQL = """, u AS (
    INSERT INTO user_states (app_name, user_id, state, version, update_time)
    SELECT %(app)s, s.user_id, %(user_delta)s::jsonb, 1, now() FROM s
    ON CONFLICT (app_name, user_id) DO UPDATE
        SET state = user_states.state || EXCLUDED.state,
            version = user_states.version + 1, update_time = EXCLUDED.update_time
)"""


_APPEND_STATEMENTS = {
    (by_id, has_app, has_user): _APPEND_SQL.format(
        scoped=(_APP_MERGE_SQL if has_app else "") + (_USER_MERGE_SQL if has_user else ""),
        live=_live(),
        user=_THE_ONE_USER.format(live=_live()) if by_id else _THE_USER,
    )
    for by_id in (False, True)
    for has_app in (False, True)
    for has_user in (False, True)
}


def do_append_event(
    *, app_name: str, user_id: str, session_id: str, expected_version: int | None, event: NewEvent
) -> int:
    """Store an event and its state delta if the session is still at ``expected_version``.

    Returns the new version. ``StaleSession`` if another writer got there first,
    ``SessionNotFound`` if the session is gone; either way nothing is stored.
    ``expected_version=None`` appends at whatever version the session is at, for
    writers that carry none (Vertex's appendEvent): concurrent ones queue on the
    session's row lock in the one statement, so each lands and none is refused.
    """
    row = _append(
        app_name=app_name,
        user_id=user_id,
        only_user=None,
        session_id=session_id,
        expected_version=expected_version,
        event=event,
    )
    if row is None:
        _raise_missing_or_stale(app_name=app_name, user_id=user_id, session_id=session_id)
    return row[0]


def do_append_event_by_id(*, app_name: str, session_id: str, only_user: str | None, event: NewEvent) -> tuple[int, str]:
    """``do_append_event`` at the current version to the one live session of the app with this id, whoever
    its user (of ``only_user`` only, if given): for callers that name a session by its id alone (Vertex).

    Finding the session is part of the one statement. Returns (version, user_id); ``SessionNotFound``
    if there is no such session, ``SeveralSessions`` if several users have one; nothing is stored then.
    """
    row = _append(
        app_name=app_name, user_id=None, only_user=only_user, session_id=session_id, expected_version=None, event=event
    )
    if row is None:
        users = get_session_users(app_name=app_name, session_id=session_id, only_user=only_user)
        if len(users) > 1:
            raise SeveralSessions(f"Several users of app {app_name} have a session {session_id}.")
        raise SessionNotFound(f"Session {session_id} not found.")
    return row


def _append(
    *,
    app_name: str,
    user_id: str | None,
    only_user: str | None,
    session_id: str,
    expected_version: int | None,
    event: NewEvent,
) -> tuple[int, str] | None:
    check_timestamp(event.timestamp)
    delta = event.state_delta
    params = {
        "app": app_name,
        "user": user_id,
        "only_user": only_user,
        "sid": session_id,
        "expected": expected_version,
        "session_delta": json.dumps(delta.session),
        "app_delta": json.dumps(delta.app),
        "user_delta": json.dumps(delta.user),
        "ts": event.timestamp,  # the session's update time: the exact float ADK reports as last_update_time
        "event_ts": to_microseconds(event.timestamp),  # what after_timestamp filters compare with
        "event_id": event.event_id,
        "invocation_id": event.invocation_id,
        "author": event.author,
        "branch": event.branch,
        "data": event.data_json,
        "preview": event.preview,
        "raw": event.raw_json,
    }
    try:
        with prepared_cursor() as cursor:
            cursor.execute(_APPEND_STATEMENTS[user_id is None, bool(delta.app), bool(delta.user)], params)
            return cursor.fetchone()
    except IntegrityError as error:
        raise SessionError(f"Event {event.event_id} is already stored in session {session_id}.") from error


@dataclass(frozen=True)
class SessionHead:
    version: int
    last_update_time: float
    last_event_id: str | None


def get_session_head(*, app_name: str, user_id: str, session_id: str) -> SessionHead | None:
    """The session's version, update time and newest event id (for writers without a version)."""
    with connection.cursor() as cursor:
        cursor.execute(
            f"""
            SELECT s.version, s.last_update_time,
                   (SELECT event_id FROM events WHERE session_id = s.id ORDER BY version DESC LIMIT 1)
            FROM sessions s
            WHERE s.app_name = %s AND s.user_id = %s AND s.session_id = %s
              AND {_live("s")}
            """,
            [app_name, user_id, session_id],
        )
        row = cursor.fetchone()
    return SessionHead(*row) if row else None


def event_preview(data: dict[str, Any]) -> str:
    """A one-line summary of an event for people: its text, or the calls it makes."""
    pieces: list[str] = []
    for part in (data.get("content") or {}).get("parts") or []:
        if part.get("text"):
            pieces.append(part["text"])
        elif part.get("function_call"):
            call = part["function_call"]
            pieces.append(f"→ {call.get('name')}({json.dumps(call.get('args') or {}, ensure_ascii=False)})")
        elif part.get("function_response"):
            response = part["function_response"]
            pieces.append(f"← {response.get('name')}: {json.dumps(response.get('response'), ensure_ascii=False)}")
    if not pieces and (data.get("actions") or {}).get("state_delta"):
        pieces.append(f"state: {json.dumps(data['actions']['state_delta'], ensure_ascii=False)}")
    text = " ".join(" ".join(pieces).split())
    return text if len(text) <= PREVIEW_LENGTH else text[: PREVIEW_LENGTH - 1] + "…"
