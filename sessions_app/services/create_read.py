"""Creating sessions and reading them: one, a list, their attributes, who owns an id."""

from __future__ import annotations

import json
from dataclasses import dataclass, replace
from datetime import UTC, datetime
from typing import Any

from django.db import connection

from cognizes.infra.postgres.base import prepared_cursor
from sessions_app.services.base import (
    SessionAttributes,
    SessionError,
    SessionExists,
    SessionNotFound,
    StateDelta,
    StoredSession,
    _json,
    _live,
    check_key,
    check_session_id,
    to_microseconds,
)
from sessions_app.services.lifecycle import _delete_sessions

_CREATE_SQL = """
WITH s AS (
    INSERT INTO sessions (app_name, user_id, session_id, state, version,
                          create_time, update_time, last_update_time, display_name, labels, expire_time)
    VALUES (%(app)s, %(user)s, %(sid)s, %(state)s::jsonb, 1,
            to_timestamp(%(now)s), to_timestamp(%(now)s), %(now)s,
            %(display_name)s, %(labels)s::jsonb, %(expire_time)s)
    ON CONFLICT (app_name, user_id, session_id) DO NOTHING
    RETURNING version
), a AS (
    INSERT INTO app_states (app_name, state, version, update_time)
    SELECT %(app)s, %(app_delta)s::jsonb, 1, now() FROM s WHERE %(has_app)s
    ON CONFLICT (app_name) DO UPDATE
        SET state = app_states.state || EXCLUDED.state,
            version = app_states.version + 1, update_time = EXCLUDED.update_time
    RETURNING state
), u AS (
    INSERT INTO user_states (app_name, user_id, state, version, update_time)
    SELECT %(app)s, %(user)s, %(user_delta)s::jsonb, 1, now() FROM s WHERE %(has_user)s
    ON CONFLICT (app_name, user_id) DO UPDATE
        SET state = user_states.state || EXCLUDED.state,
            version = user_states.version + 1, update_time = EXCLUDED.update_time
    RETURNING state
)
SELECT (SELECT version FROM s),
       COALESCE((SELECT state FROM a),
                (SELECT state FROM app_states WHERE app_name = %(app)s), '{}'),
       COALESCE((SELECT state FROM u),
                (SELECT state FROM user_states WHERE app_name = %(app)s AND user_id = %(user)s), '{}')
"""


def do_create_session(
    *,
    app_name: str,
    user_id: str,
    session_id: str,
    delta: StateDelta,
    now: float,
    attributes: SessionAttributes | None = None,
) -> StoredSession:
    """Create a session with its initial state; ``SessionExists`` if the id is taken.

    One statement: the insert, and the app/user state merges that happen only if
    the insert did, so a duplicate id changes nothing.
    """
    for name, value in (("app_name", app_name), ("user_id", user_id)):
        check_key(name, value)
    check_session_id(session_id)
    attributes = attributes or SessionAttributes()
    check_attributes(display_name=attributes.display_name, labels=attributes.labels)
    params = {
        "display_name": attributes.display_name,
        "labels": json.dumps(attributes.labels),
        "expire_time": attributes.expire_time,
        "app": app_name,
        "user": user_id,
        "sid": session_id,
        "state": json.dumps(delta.session),
        "now": now,
        "app_delta": json.dumps(delta.app),
        "has_app": bool(delta.app),
        "user_delta": json.dumps(delta.user),
        "has_user": bool(delta.user),
    }
    with prepared_cursor() as cursor:
        cursor.execute(_CREATE_SQL, params)
        version, app_state, user_state = cursor.fetchone()
        if version is None and _delete_sessions(
            cursor, expired=True, app_name=app_name, user_id=user_id, session_id=session_id
        ):
            cursor.execute(_CREATE_SQL, params)  # the id was held by an expired session, which is now gone
            version, app_state, user_state = cursor.fetchone()
    if version is None:
        raise SessionExists(f"Session with id {session_id} already exists.")
    return StoredSession(
        app_name=app_name,
        user_id=user_id,
        session_id=session_id,
        state=dict(delta.session),
        app_state=_json(app_state),
        user_state=_json(user_state),
        version=version,
        last_update_time=now,
        attributes=replace(attributes, create_time=datetime.fromtimestamp(now, tz=UTC)),
    )


_SESSION_SQL = """
SELECT s.id, s.state, s.version, s.last_update_time,
       COALESCE(a.state, '{{}}'), COALESCE(u.state, '{{}}'),
       s.create_time, s.display_name, s.labels, s.expire_time, s.user_id
FROM sessions s
LEFT JOIN app_states a ON a.app_name = s.app_name
LEFT JOIN user_states u ON u.app_name = s.app_name AND u.user_id = s.user_id
WHERE s.app_name = %s AND s.session_id = %s AND {live}
""".format(live=_live("s"))
"""A session row with the app and user state it sees (its user last): ``get_session`` names the user,
``find_whole_sessions`` only the id."""
_GET_SQL = _SESSION_SQL + " AND s.user_id = %s"
_FIND_WHOLE_SQL = _SESSION_SQL + " AND (s.user_id = %s OR %s::text IS NULL) ORDER BY s.user_id LIMIT %s"


def get_session(
    *,
    app_name: str,
    user_id: str,
    session_id: str,
    num_recent_events: int | None = None,
    after_timestamp: float | None = None,
) -> StoredSession | None:
    """Return the session with its events in append order, or None if missing.

    ``num_recent_events`` keeps the last N events (0: none); ``after_timestamp``
    keeps events at or after that time, to the microsecond (``to_microseconds``). The session row is read before its
    events, so an event appended in between bumps the version past the one
    returned: the caller's next append is then stale rather than blind.
    """
    with prepared_cursor() as cursor:
        cursor.execute(_GET_SQL, [app_name, session_id, user_id])
        row = cursor.fetchone()
        if row is None:
            return None
        pk, state, version, last_update_time, app_state, user_state, *attributes, _ = row
        events_json: list[str] = []
        if num_recent_events != 0:
            sql = "SELECT data::text FROM events WHERE session_id = %s"
            params: list[Any] = [pk]
            if after_timestamp is not None:
                sql += " AND timestamp >= %s"
                params.append(to_microseconds(after_timestamp))
            sql += " ORDER BY version DESC"
            if num_recent_events is not None:
                sql += " LIMIT %s"
                params.append(num_recent_events)
            cursor.execute(sql, params)
            events_json = [data for (data,) in cursor.fetchall()]
            events_json.reverse()
    return StoredSession(
        app_name=app_name,
        user_id=user_id,
        session_id=session_id,
        state=_json(state),
        app_state=_json(app_state),
        user_state=_json(user_state),
        version=version,
        last_update_time=last_update_time,
        events_json=events_json,
        attributes=_attributes(*attributes),
    )


def list_sessions(
    *,
    app_name: str,
    user_id: str | None = None,
    updated_since: datetime | None = None,
    limit: int | None = None,
    offset: int = 0,
) -> list[StoredSession]:
    """Sessions of an app (or of one user), oldest update first, without events; a page with ``limit``;
    ``updated_since``: only those changed at or after that time."""
    return _list(app_name, user_id, updated_since, limit, offset, counted=False)[0]


def list_session_page(
    *,
    app_name: str,
    user_id: str | None = None,
    updated_since: datetime | None = None,
    limit: int,
    offset: int = 0,
) -> tuple[list[StoredSession], int]:
    """``list_sessions``' page and how many sessions there are in all, in one prepared statement (the native
    API's list: built with the ORM, compiling it took a third of the request's CPU)."""
    sessions, total = _list(app_name, user_id, updated_since, limit, offset, counted=True)
    if total is None:  # no row carried the count: there are none, or the page is past the last
        total = (_list(app_name, user_id, updated_since, 1, 0, counted=True)[1] or 0) if offset else 0
    return sessions, total


def _list(
    app_name: str,
    user_id: str | None,
    updated_since: datetime | None,
    limit: int | None,
    offset: int,
    *,
    counted: bool,
) -> tuple[list[StoredSession], int | None]:
    sql = f"""
        SELECT s.user_id, s.session_id, s.state, s.version, s.last_update_time,
               COALESCE(u.state, '{{}}'),
               COALESCE((SELECT state FROM app_states WHERE app_name = %s), '{{}}'),
               {"count(*) OVER ()" if counted else "NULL::bigint"},
               s.create_time, s.display_name, s.labels, s.expire_time
        FROM sessions s
        LEFT JOIN user_states u ON u.app_name = s.app_name AND u.user_id = s.user_id
        WHERE s.app_name = %s AND {_live("s")}
    """
    params: list[Any] = [app_name, app_name]
    if user_id is not None:
        sql += " AND s.user_id = %s"
        params.append(user_id)
    if updated_since is not None:
        sql += " AND s.update_time >= %s"
        params.append(updated_since)
    sql += " ORDER BY s.last_update_time, s.user_id, s.session_id"
    if limit is not None:
        sql += " LIMIT %s OFFSET %s"
        params += [limit, offset]
    with prepared_cursor() as cursor:
        cursor.execute(sql, params)
        rows = cursor.fetchall()
    app_states: dict[str, dict[str, Any]] = {}
    sessions = [
        StoredSession(
            app_name=app_name,
            user_id=row_user,
            session_id=sid,
            state=_json(state),
            app_state=app_states.setdefault(app_state, _json(app_state)),
            user_state=_json(user_state),
            version=version,
            last_update_time=last_update_time,
            attributes=_attributes(*attributes),
        )
        for row_user, sid, state, version, last_update_time, user_state, app_state, _, *attributes in rows
    ]
    return sessions, rows[0][7] if rows else None


def _attributes(
    create_time: datetime, display_name: str, labels: Any, expire_time: datetime | None
) -> SessionAttributes:
    return SessionAttributes(
        create_time=create_time, display_name=display_name, labels=_json(labels), expire_time=expire_time
    )


def check_attributes(*, display_name: str, labels: Any) -> None:
    """A display name fits its column; labels are a map of strings (as Vertex's)."""
    if len(display_name) > 256:
        raise SessionError("display_name is at most 256 characters.")
    if not isinstance(labels, dict) or not all(isinstance(k, str) and isinstance(v, str) for k, v in labels.items()):
        raise SessionError("labels must map strings to strings.")


def do_update_session_attributes(*, app_name: str, user_id: str, session_id: str, changes: dict[str, Any]) -> None:
    """Change a session's display name, labels or expiry (``changes`` names only those); not its version.

    These are about the session, not part of what an agent reads, so an agent
    holding the session does not become stale.
    """
    unknown = set(changes) - {"display_name", "labels", "expire_time"}
    if unknown:
        raise SessionError(f"Not a session attribute: {', '.join(sorted(unknown))}.")
    check_attributes(display_name=changes.get("display_name", ""), labels=changes.get("labels", {}))
    if not changes:
        return
    assignments = ", ".join(f"{name} = %s" + ("::jsonb" if name == "labels" else "") for name in changes)
    values = [json.dumps(value) if name == "labels" else value for name, value in changes.items()]
    with connection.cursor() as cursor:
        cursor.execute(
            f"UPDATE sessions SET {assignments} WHERE app_name = %s AND user_id = %s AND session_id = %s AND {_live()}",
            [*values, app_name, user_id, session_id],
        )
        if cursor.rowcount == 0:
            raise SessionNotFound(f"Session {session_id} not found.")


@dataclass(frozen=True)
class SessionRef:
    user_id: str
    pk: int
    """The session's row id (what event notifications carry)."""


def find_sessions(*, app_name: str, session_id: str, only_user: str | None = None, limit: int = 2) -> list[SessionRef]:
    """The live sessions of the app with this id, by user (for callers that know only the id);
    with ``only_user``, that user's if it has one."""
    with connection.cursor() as cursor:
        cursor.execute(
            f"SELECT user_id, id FROM sessions WHERE app_name = %s AND session_id = %s AND {_live()} "
            "AND (user_id = %s OR %s::text IS NULL) ORDER BY user_id LIMIT %s",
            [app_name, session_id, only_user, only_user, limit],
        )
        return [SessionRef(user, pk) for user, pk in cursor.fetchall()]


def find_whole_sessions(
    *, app_name: str, session_id: str, only_user: str | None = None, limit: int = 2
) -> list[StoredSession]:
    """``find_sessions``, each session read whole (state, attributes; no events) in the same statement:
    for callers that know only the id and answer with the session (Vertex's GetSession), one round trip."""
    with prepared_cursor() as cursor:
        cursor.execute(_FIND_WHOLE_SQL, [app_name, session_id, only_user, only_user, limit])
        rows = cursor.fetchall()
    return [
        StoredSession(
            app_name=app_name,
            user_id=user_id,
            session_id=session_id,
            state=_json(state),
            app_state=_json(app_state),
            user_state=_json(user_state),
            version=version,
            last_update_time=last_update_time,
            attributes=_attributes(*attributes),
        )
        for _, state, version, last_update_time, app_state, user_state, *attributes, user_id in rows
    ]


def get_session_users(*, app_name: str, session_id: str, only_user: str | None = None, limit: int = 2) -> list[str]:
    """The users of the app that have a session with this id (``find_sessions``' users)."""
    return [
        ref.user_id for ref in find_sessions(app_name=app_name, session_id=session_id, only_user=only_user, limit=limit)
    ]


def get_session_pk(*, app_name: str, user_id: str, session_id: str) -> int | None:
    """The session's row id (what event notifications carry), or None if there is no such session."""
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT id FROM sessions WHERE app_name = %s AND user_id = %s AND session_id = %s AND " + _live(),
            [app_name, user_id, session_id],
        )
        row = cursor.fetchone()
    return row[0] if row else None


def get_session_owners(session_id: str, *, limit: int = 2) -> list[tuple[str, str]]:
    """(app_name, user_id) of the sessions with this id — for records that know only the id (trace spans)."""
    with connection.cursor() as cursor:
        cursor.execute("SELECT app_name, user_id FROM sessions WHERE session_id = %s LIMIT %s", [session_id, limit])
        return cursor.fetchall()
