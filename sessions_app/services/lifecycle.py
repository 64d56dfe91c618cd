"""The end of sessions: deleted one by one, expired in batches, or erased with their user (with their events and
the feedback on them)."""

from __future__ import annotations

from typing import Any, cast

from django.db import connection, transaction

from sessions_app.services.base import check_key
from sessions_app.signals import DeletedSession, app_erased, sessions_deleted, user_erased


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
        where = (
            f"id IN (SELECT id FROM sessions WHERE {where} ORDER BY expire_time LIMIT {int(batch)} "
            "FOR UPDATE SKIP LOCKED)"
        )
    cursor.execute(
        f"""
        WITH s AS (
            DELETE FROM sessions WHERE {where} RETURNING id, app_name, user_id, session_id
        ), e AS (
            DELETE FROM events WHERE session_id IN (SELECT id FROM s) RETURNING session_id, event_id
        ), f AS (
            DELETE FROM feedback_entries WHERE session_id IN (SELECT id FROM s)
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
        # Feedback on the user's sessions and feedback the user gave on others': counted here, before the
        # sessions' deletion would take the first kind silently.
        cursor.execute(
            "DELETE FROM feedback_entries WHERE app_name = %s AND (user_id = %s OR session_id IN "
            "(SELECT id FROM sessions WHERE app_name = %s AND user_id = %s))",
            [app_name, user_id, app_name, user_id],
        )
        feedback = cursor.rowcount
        deleted = _delete_sessions(cursor, app_name=app_name, user_id=user_id)
        counts = {"sessions": len(deleted), "events": sum(len(session.event_ids) for session in deleted)}
        cursor.execute("DELETE FROM user_states WHERE app_name = %s AND user_id = %s", [app_name, user_id])
        counts["user_states"] = cursor.rowcount
        if feedback:
            counts["feedback_entries"] = feedback
        for _, erased in user_erased.send(sender=DeletedSession, app_name=app_name, user_id=user_id):
            counts.update(cast(dict[str, int], erased))  # each receiver answers its counts
    return counts


def do_erase_app(*, app_name: str) -> dict[str, int]:
    """Erase everything stored of an app, in one transaction; rows deleted per kind.

    Each user known here (by a session or user state) is erased as ``do_erase_user`` does, so every app's per-user
    share goes the way it always goes; then the app's state, and, through the ``app_erased`` signal, what other apps
    hold of the app as a whole (memories of users without a session, the memory bank config). API keys stay: an
    operator revokes them.
    """
    check_key("app_name", app_name)
    counts: dict[str, int] = {}
    with transaction.atomic(), connection.cursor() as cursor:
        cursor.execute(
            "SELECT user_id FROM sessions WHERE app_name = %(app)s "
            "UNION SELECT user_id FROM user_states WHERE app_name = %(app)s",
            {"app": app_name},
        )
        for (user_id,) in cursor.fetchall():
            for kind, count in do_erase_user(app_name=app_name, user_id=user_id).items():
                counts[kind] = counts.get(kind, 0) + count
        cursor.execute("DELETE FROM app_states WHERE app_name = %s", [app_name])
        counts["app_states"] = cursor.rowcount
        for _, erased in app_erased.send(sender=DeletedSession, app_name=app_name):
            for kind, count in cast(dict[str, int], erased).items():
                counts[kind] = counts.get(kind, 0) + count
    return counts


def do_delete_session(*, app_name: str, user_id: str, session_id: str) -> bool:
    """Delete a session and its events (app and user state stay); False if it was missing."""
    with connection.cursor() as cursor:
        return bool(_delete_sessions(cursor, app_name=app_name, user_id=user_id, session_id=session_id))
