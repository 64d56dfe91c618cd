"""Session rules: the one place that reads and writes sessions, events and state.

The ADK service (``adk.py``), the admin and the API all call these functions.
Hot paths are single SQL statements, so a write is one round trip and one
transaction:

* every write to a session compares-and-swaps ``sessions.version``: a writer that
  loaded an older version gets ``StaleSession`` and nothing of its write is stored;
* ``app:`` / ``user:`` deltas are merged with ``jsonb ||`` inside the same statement,
  so sessions of one user writing at once never lose each other's keys (no
  process-local lock: many web and worker processes share the database).

Functions here take and return plain data (dicts, JSON text, dataclasses), never
ADK objects; the callers convert.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass, field, replace
from datetime import datetime, timezone
from typing import Any

from django.db import IntegrityError, connection, transaction

from sessions_app.models import MAX_KEY_LENGTH
from sessions_app.signals import DeletedSession, sessions_deleted, user_erased

PREVIEW_LENGTH = 200
STALE_SESSION_MESSAGE = (
    "The session has been modified in storage since it was loaded. "
    "Please reload the session before appending more events."
)


class SessionError(ValueError):
    """Base class of the errors below; a ValueError like ADK's own."""


class SessionNotFound(SessionError):
    pass


class SessionExists(SessionError):
    pass


class StaleSession(SessionError):
    """The session changed in storage since the writer loaded it."""

    def __init__(self, message: str = STALE_SESSION_MESSAGE) -> None:
        super().__init__(message)


class StaleState(SessionError):
    """App or user state changed since the editor loaded it."""


@dataclass(frozen=True)
class StateDelta:
    """A state change split by scope, keys without their ``app:`` / ``user:`` prefix."""

    app: dict[str, Any] = field(default_factory=dict)
    user: dict[str, Any] = field(default_factory=dict)
    session: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class StoredSession:
    """A session as stored: its own state plus the app and user state it sees."""

    app_name: str
    user_id: str
    session_id: str
    state: dict[str, Any]
    app_state: dict[str, Any]
    user_state: dict[str, Any]
    version: int
    last_update_time: float
    events_json: list[str] = field(default_factory=list)
    """Events in append order, each the stored event JSON as text."""
    attributes: SessionAttributes | None = None
    """Creation time, display name, labels and expiry, where the reader asked for them."""

    def merged_state(self) -> dict[str, Any]:
        """The state an agent sees: the session's keys, then ``app:`` and ``user:`` keys with their prefix."""
        state = dict(self.state)
        state.update({f"app:{key}": value for key, value in self.app_state.items()})
        state.update({f"user:{key}": value for key, value in self.user_state.items()})
        return state


@dataclass(frozen=True)
class SessionAttributes:
    """What a session carries besides its state and events (Vertex AI's session fields)."""

    create_time: datetime | None = None
    display_name: str = ""
    labels: dict[str, str] = field(default_factory=dict)
    expire_time: datetime | None = None


@dataclass(frozen=True)
class NewEvent:
    """An event to append, already serialised; ``state_delta`` holds no ``temp:`` keys."""

    event_id: str
    invocation_id: str
    author: str
    branch: str | None
    timestamp: float
    data_json: str
    preview: str
    state_delta: StateDelta
    raw_json: str | None = None
    """A Vertex client's rawEvent, verbatim, when ``data_json`` does not hold all of it."""


def _live(alias: str = "") -> str:
    """The one predicate for "not expired": an expired session is as if deleted until the beat task removes it."""
    p = f"{alias}." if alias else ""
    return f"({p}expire_time IS NULL OR {p}expire_time > now())"


# What PostgreSQL's to_timestamp() accepts: 4713 BC to 294276 AD, in epoch seconds.
_TIMESTAMP_RANGE = (-210866803200.0, 9224318015999.0)


def check_timestamp(value: float) -> None:
    """An event time PostgreSQL can store as a session's update time; NaN, infinities and 1e308 are refused."""
    low, high = _TIMESTAMP_RANGE
    if not isinstance(value, (int, float)) or not math.isfinite(value) or not low <= value <= high:
        raise SessionError(f"The event timestamp {value!r} is not a time (epoch seconds from {low:.0f} to {high:.0f}).")


def check_key(name: str, value: str) -> str:
    """Validate an app name, user id or session id."""
    if not isinstance(value, str) or not value.strip():
        raise SessionError(f"{name} must be a non-empty string.")
    if len(value) > MAX_KEY_LENGTH:
        raise SessionError(f"{name} is longer than {MAX_KEY_LENGTH} characters.")
    if "\x00" in value:
        raise SessionError(f"{name} may not contain NUL characters (PostgreSQL cannot store them).")
    return value


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
    for name, value in (("app_name", app_name), ("user_id", user_id), ("session_id", session_id)):
        check_key(name, value)
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
    with connection.cursor() as cursor:
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
        attributes=replace(attributes, create_time=datetime.fromtimestamp(now, tz=timezone.utc)),
    )


_GET_SQL = """
SELECT s.id, s.state, s.version, s.last_update_time,
       COALESCE(a.state, '{{}}'), COALESCE(u.state, '{{}}'),
       s.create_time, s.display_name, s.labels, s.expire_time
FROM sessions s
LEFT JOIN app_states a ON a.app_name = s.app_name
LEFT JOIN user_states u ON u.app_name = s.app_name AND u.user_id = s.user_id
WHERE s.app_name = %s AND s.user_id = %s AND s.session_id = %s AND {live}
""".format(live=_live("s"))


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
    keeps events at or after that time. The session row is read before its
    events, so an event appended in between bumps the version past the one
    returned: the caller's next append is then stale rather than blind.
    """
    with connection.cursor() as cursor:
        cursor.execute(_GET_SQL, [app_name, user_id, session_id])
        row = cursor.fetchone()
        if row is None:
            return None
        pk, state, version, last_update_time, app_state, user_state, *attributes = row
        events_json: list[str] = []
        if num_recent_events != 0:
            sql = "SELECT data::text FROM events WHERE session_id = %s"
            params: list[Any] = [pk]
            if after_timestamp is not None:
                sql += " AND timestamp >= %s"
                params.append(after_timestamp)
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
    *, app_name: str, user_id: str | None = None, limit: int | None = None, offset: int = 0
) -> list[StoredSession]:
    """Sessions of an app (or of one user), oldest update first, without events; a page with ``limit``."""
    sql = f"""
        SELECT s.user_id, s.session_id, s.state, s.version, s.last_update_time,
               COALESCE(u.state, '{{}}'),
               COALESCE((SELECT state FROM app_states WHERE app_name = %s), '{{}}'),
               s.create_time, s.display_name, s.labels, s.expire_time
        FROM sessions s
        LEFT JOIN user_states u ON u.app_name = s.app_name AND u.user_id = s.user_id
        WHERE s.app_name = %s AND {_live("s")}
    """
    params: list[Any] = [app_name, app_name]
    if user_id is not None:
        sql += " AND s.user_id = %s"
        params.append(user_id)
    sql += " ORDER BY s.last_update_time, s.user_id, s.session_id"
    if limit is not None:
        sql += " LIMIT %s OFFSET %s"
        params += [limit, offset]
    with connection.cursor() as cursor:
        cursor.execute(sql, params)
        rows = cursor.fetchall()
    app_states: dict[str, dict[str, Any]] = {}
    return [
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
        for row_user, sid, state, version, last_update_time, user_state, app_state, *attributes in rows
    ]


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


def do_update_session_attributes(
    *, app_name: str, user_id: str, session_id: str, changes: dict[str, Any]
) -> None:
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
            f"UPDATE sessions SET {assignments} WHERE app_name = %s AND user_id = %s AND session_id = %s "
            f"AND {_live()}",
            [*values, app_name, user_id, session_id],
        )
        if cursor.rowcount == 0:
            raise SessionNotFound(f"Session {session_id} not found.")


def get_session_users(*, app_name: str, session_id: str, limit: int = 2) -> list[str]:
    """The users of the app that have a session with this id (for callers that know only the id)."""
    with connection.cursor() as cursor:
        cursor.execute(
            f"SELECT user_id FROM sessions WHERE app_name = %s AND session_id = %s AND {_live()} "
            "ORDER BY user_id LIMIT %s",
            [app_name, session_id, limit],
        )
        return [user for (user,) in cursor.fetchall()]


def _delete_sessions(cursor: Any, *, expired: bool = False, batch: int = 0, **keys: str) -> list[DeletedSession]:
    """Delete the sessions with these keys (only expired ones, with ``expired``) and their events; the ones that went.

    With ``batch``: at most that many, skipping any a writer holds locked (they
    are the next batch's), so removal neither waits on writers nor holds them up
    long. Once the deletion commits, ``signals.sessions_deleted`` names them
    (memory_app may forget what they gave).
    """
    where = " AND ".join(
        [f"{column} = %({column})s" for column in keys] + (["expire_time <= now()"] if expired else [])
    )
    if batch:
        where = (f"id IN (SELECT id FROM sessions WHERE {where} ORDER BY expire_time LIMIT {int(batch)} "
                 "FOR UPDATE SKIP LOCKED)")
    cursor.execute(
        f"""
        WITH s AS (
            DELETE FROM sessions WHERE {where} RETURNING id, app_name, user_id, session_id
        ), e AS (
            DELETE FROM events WHERE session_id IN (SELECT id FROM s) RETURNING session_id, event_id
        )
        SELECT s.app_name, s.user_id, s.session_id,
               coalesce(array_agg(e.event_id) FILTER (WHERE e.event_id IS NOT NULL), '{{}}')
        FROM s LEFT JOIN e ON e.session_id = s.id
        GROUP BY s.id, s.app_name, s.user_id, s.session_id
        """,
        keys,
    )
    deleted = [DeletedSession(app, user, sid, tuple(event_ids)) for app, user, sid, event_ids in cursor.fetchall()]
    if deleted:
        transaction.on_commit(lambda: sessions_deleted.send(sender=DeletedSession, sessions=deleted))
    return deleted


def do_delete_expired_sessions(*, batch: int = 500) -> int:
    """Remove the expired sessions and their events (already invisible), ``batch`` per transaction; how many went."""
    removed = 0
    while True:
        with transaction.atomic(), connection.cursor() as cursor:
            count = len(_delete_sessions(cursor, expired=True, batch=batch))
        removed += count
        if count < batch:
            return removed


def do_erase_user(*, app_name: str, user_id: str) -> dict[str, int]:
    """Erase everything stored of one user of an app, in one transaction; rows deleted per table.

    Sessions, events and user state here; every other app's share (memories,
    artifacts, tool calls, traces…) through the ``user_erased`` signal. The app's
    own state and the user's API keys stay.
    """
    check_key("app_name", app_name)
    check_key("user_id", user_id)
    with transaction.atomic(), connection.cursor() as cursor:
        deleted = _delete_sessions(cursor, app_name=app_name, user_id=user_id)
        counts = {"sessions": len(deleted), "events": sum(len(session.event_ids) for session in deleted)}
        cursor.execute("DELETE FROM user_states WHERE app_name = %s AND user_id = %s", [app_name, user_id])
        counts["user_states"] = cursor.rowcount
        for _, erased in user_erased.send(sender=DeletedSession, app_name=app_name, user_id=user_id):
            counts.update(erased)
    return counts


def do_delete_session(*, app_name: str, user_id: str, session_id: str) -> bool:
    """Delete a session and its events (app and user state stay); False if it was missing."""
    with connection.cursor() as cursor:
        return bool(_delete_sessions(cursor, app_name=app_name, user_id=user_id, session_id=session_id))


_APPEND_SQL = """
WITH s AS (
    UPDATE sessions
    SET version = version + 1,
        state = state || %(session_delta)s::jsonb,
        last_update_time = %(ts)s,
        update_time = to_timestamp(%(ts)s)
    WHERE app_name = %(app)s AND user_id = %(user)s AND session_id = %(sid)s
      AND (version = %(expected)s OR %(expected)s::bigint IS NULL) AND {live}
    RETURNING id, version
), e AS (
    INSERT INTO events (session_id, version, event_id, invocation_id, author, branch,
                        timestamp, data, preview, raw_event)
    SELECT s.id, s.version, %(event_id)s, %(invocation_id)s, %(author)s, %(branch)s,
           %(ts)s, %(data)s::jsonb, %(preview)s, %(raw)s::jsonb
    FROM s
){scoped}
SELECT version FROM s
"""

_APP_MERGE_SQL = """, a AS (
    INSERT INTO app_states (app_name, state, version, update_time)
    SELECT %(app)s, %(app_delta)s::jsonb, 1, now() FROM s
    ON CONFLICT (app_name) DO UPDATE
        SET state = app_states.state || EXCLUDED.state,
            version = app_states.version + 1, update_time = EXCLUDED.update_time
)"""

_USER_MERGE_SQL = """, u AS (
    INSERT INTO user_states (app_name, user_id, state, version, update_time)
    SELECT %(app)s, %(user)s, %(user_delta)s::jsonb, 1, now() FROM s
    ON CONFLICT (app_name, user_id) DO UPDATE
        SET state = user_states.state || EXCLUDED.state,
            version = user_states.version + 1, update_time = EXCLUDED.update_time
)"""

_APPEND_STATEMENTS = {
    (has_app, has_user): _APPEND_SQL.format(
        scoped=(_APP_MERGE_SQL if has_app else "") + (_USER_MERGE_SQL if has_user else ""), live=_live()
    )
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
    check_timestamp(event.timestamp)
    delta = event.state_delta
    params = {
        "app": app_name,
        "user": user_id,
        "sid": session_id,
        "expected": expected_version,
        "session_delta": json.dumps(delta.session),
        "app_delta": json.dumps(delta.app),
        "user_delta": json.dumps(delta.user),
        "ts": event.timestamp,
        "event_id": event.event_id,
        "invocation_id": event.invocation_id,
        "author": event.author,
        "branch": event.branch,
        "data": event.data_json,
        "preview": event.preview,
        "raw": event.raw_json,
    }
    try:
        with connection.cursor() as cursor:
            cursor.execute(_APPEND_STATEMENTS[bool(delta.app), bool(delta.user)], params)
            row = cursor.fetchone()
    except IntegrityError as error:
        raise SessionError(f"Event {event.event_id} is already stored in session {session_id}.") from error
    if row is None:
        _raise_missing_or_stale(app_name=app_name, user_id=user_id, session_id=session_id)
    return row[0]


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


def do_replace_session_state(
    *, app_name: str, user_id: str, session_id: str, state: dict[str, Any], expected_version: int
) -> int:
    """Replace the session-scoped state (an edit by a person), compare-and-swap on version.

    Bumping the version makes an agent holding an older copy of the session stale,
    so it reloads instead of overwriting the edit.
    """
    check_scoped_state(state)
    with connection.cursor() as cursor:
        cursor.execute(
            f"""
            UPDATE sessions SET state = %s::jsonb, version = version + 1
            WHERE app_name = %s AND user_id = %s AND session_id = %s AND version = %s
              AND {_live()}
            RETURNING version
            """,
            [json.dumps(state), app_name, user_id, session_id, expected_version],
        )
        row = cursor.fetchone()
    if row is None:
        _raise_missing_or_stale(app_name=app_name, user_id=user_id, session_id=session_id)
    return row[0]


def get_app_state(*, app_name: str) -> tuple[dict[str, Any], int]:
    """The app's shared state and its version (0 if nothing was ever stored)."""
    with connection.cursor() as cursor:
        cursor.execute("SELECT state, version FROM app_states WHERE app_name = %s", [app_name])
        row = cursor.fetchone()
    return (_json(row[0]), row[1]) if row else ({}, 0)


def get_user_state(*, app_name: str, user_id: str) -> tuple[dict[str, Any], int]:
    """The user's shared state and its version (0 if nothing was ever stored)."""
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT state, version FROM user_states WHERE app_name = %s AND user_id = %s",
            [app_name, user_id],
        )
        row = cursor.fetchone()
    return (_json(row[0]), row[1]) if row else ({}, 0)


def do_replace_app_state(*, app_name: str, state: dict[str, Any], expected_version: int) -> int:
    """Replace an app's shared state if it is still at ``expected_version`` (0: never stored)."""
    check_key("app_name", app_name)
    check_scoped_state(state)
    return _replace_shared_state(
        table="app_states", keys={"app_name": app_name}, state=state, expected_version=expected_version
    )


def do_replace_user_state(
    *, app_name: str, user_id: str, state: dict[str, Any], expected_version: int
) -> int:
    """Replace a user's shared state if it is still at ``expected_version`` (0: never stored)."""
    check_key("app_name", app_name)
    check_key("user_id", user_id)
    check_scoped_state(state)
    return _replace_shared_state(
        table="user_states",
        keys={"app_name": app_name, "user_id": user_id},
        state=state,
        expected_version=expected_version,
    )


def _replace_shared_state(
    *, table: str, keys: dict[str, str], state: dict[str, Any], expected_version: int
) -> int:
    columns = ", ".join(keys)
    placeholders = ", ".join(["%s"] * len(keys))
    with transaction.atomic(), connection.cursor() as cursor:
        if expected_version == 0:
            cursor.execute(
                f"INSERT INTO {table} ({columns}, state, version, update_time) "
                f"VALUES ({placeholders}, %s::jsonb, 1, now()) ON CONFLICT DO NOTHING RETURNING version",
                [*keys.values(), json.dumps(state)],
            )
        else:
            where = " AND ".join(f"{column} = %s" for column in keys)
            cursor.execute(
                f"UPDATE {table} SET state = %s::jsonb, version = version + 1, update_time = now() "
                f"WHERE {where} AND version = %s RETURNING version",
                [json.dumps(state), *keys.values(), expected_version],
            )
        row = cursor.fetchone()
    if row is None:
        raise StaleState("The state was changed by someone else since it was loaded; reload and retry.")
    return row[0]


def check_scoped_state(state: Any) -> None:
    """Reject non-objects and prefixed keys in state stored for one scope."""
    if not isinstance(state, dict):
        raise SessionError("State must be a JSON object.")
    prefixed = sorted(key for key in state if key.startswith(("app:", "user:", "temp:")))
    if prefixed:
        raise SessionError(f"Keys with a scope prefix do not belong in this state: {', '.join(prefixed)}.")


def _raise_missing_or_stale(*, app_name: str, user_id: str, session_id: str) -> None:
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT 1 FROM sessions WHERE app_name = %s AND user_id = %s AND session_id = %s AND " + _live(),
            [app_name, user_id, session_id],
        )
        exists = cursor.fetchone() is not None
    if not exists:
        raise SessionNotFound(f"Session {session_id} not found.")
    raise StaleSession()


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


def _json(value: Any) -> dict[str, Any]:
    """Decode a jsonb column, which raw cursors return as text."""
    return json.loads(value) if isinstance(value, str) else value


def get_session_pk(*, app_name: str, user_id: str, session_id: str) -> int | None:
    """The session's row id (what event notifications carry), or None if there is no such session."""
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT id FROM sessions WHERE app_name = %s AND user_id = %s AND session_id = %s AND " + _live(),
            [app_name, user_id, session_id],
        )
        row = cursor.fetchone()
    return row[0] if row else None


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


def get_event_page(
    session_pk: int, *, after_version: int = 0, since: float | None = None, limit: int = 100
) -> list[StoredEvent]:
    """A page of a session's events in order, with any rawEvent kept verbatim; ``since`` in epoch seconds."""
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT version, data, raw_event FROM events WHERE session_id = %s AND version > %s "
            "AND (%s::float8 IS NULL OR timestamp >= %s::float8) ORDER BY version LIMIT %s",
            [session_pk, after_version, since, since, limit],
        )
        return [StoredEvent(version, _json(data), raw and _json(raw)) for version, data, raw in cursor.fetchall()]


def do_patch_session_state(
    *, app_name: str, user_id: str, session_id: str, patch: dict[str, Any], expected_version: int
) -> int:
    """Merge-patch the session state (null removes a key) if still at ``expected_version``."""
    check_scoped_state(patch)
    with connection.cursor() as cursor:
        cursor.execute(
            f"""
            UPDATE sessions SET state = (state || %s::jsonb) - %s::text[], version = version + 1
            WHERE app_name = %s AND user_id = %s AND session_id = %s AND version = %s
              AND {_live()}
            RETURNING version
            """,
            [*_merge_patch(patch), app_name, user_id, session_id, expected_version],
        )
        row = cursor.fetchone()
    if row is None:
        _raise_missing_or_stale(app_name=app_name, user_id=user_id, session_id=session_id)
    return row[0]


def do_patch_app_state(*, app_name: str, patch: dict[str, Any], expected_version: int) -> int:
    """Merge-patch an app's shared state (null removes a key) if still at ``expected_version``."""
    state, version = get_app_state(app_name=app_name)
    if version != expected_version:
        raise StaleState("The state was changed by someone else since it was loaded; reload and retry.")
    return do_replace_app_state(app_name=app_name, state=_apply_patch(state, patch), expected_version=version)


def do_patch_user_state(*, app_name: str, user_id: str, patch: dict[str, Any], expected_version: int) -> int:
    """Merge-patch a user's shared state (null removes a key) if still at ``expected_version``."""
    state, version = get_user_state(app_name=app_name, user_id=user_id)
    if version != expected_version:
        raise StaleState("The state was changed by someone else since it was loaded; reload and retry.")
    return do_replace_user_state(
        app_name=app_name, user_id=user_id, state=_apply_patch(state, patch), expected_version=version
    )


def _merge_patch(patch: dict[str, Any]) -> tuple[str, list[str]]:
    """RFC 7386 at the top level: the keys to set (as JSON) and the keys to remove."""
    return (
        json.dumps({key: value for key, value in patch.items() if value is not None}),
        [key for key, value in patch.items() if value is None],
    )


def _apply_patch(state: dict[str, Any], patch: dict[str, Any]) -> dict[str, Any]:
    check_scoped_state(patch)
    merged = {**state, **{key: value for key, value in patch.items() if value is not None}}
    return {key: value for key, value in merged.items() if patch.get(key, 0) is not None}


def get_session_owners(session_id: str, *, limit: int = 2) -> list[tuple[str, str]]:
    """(app_name, user_id) of the sessions with this id — for records that know only the id (trace spans)."""
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT app_name, user_id FROM sessions WHERE session_id = %s LIMIT %s", [session_id, limit]
        )
        return cursor.fetchall()
