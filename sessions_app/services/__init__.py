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
ADK objects; the callers convert. They live by what they do — ``create_read``,
``append``, ``events``, ``state``, ``lifecycle``, and ``base`` for what all share —
and are imported from here.
"""

from __future__ import annotations

from sessions_app.services.append import (
    SessionHead,
    do_append_event,
    do_append_event_by_id,
    event_preview,
    get_session_head,
)
from sessions_app.services.base import (
    PREVIEW_LENGTH,
    STALE_SESSION_MESSAGE,
    NewEvent,
    SessionAttributes,
    SessionError,
    SessionExists,
    SessionNotFound,
    SeveralSessions,
    StaleSession,
    StaleState,
    StateDelta,
    StoredSession,
    check_key,
    check_session_id,
    check_timestamp,
    to_microseconds,
)
from sessions_app.services.create_read import (
    SessionRef,
    check_attributes,
    do_create_session,
    do_update_session_attributes,
    find_sessions,
    find_whole_sessions,
    get_session,
    get_session_owners,
    get_session_pk,
    get_session_users,
    list_session_page,
    list_sessions,
)
from sessions_app.services.events import (
    StoredEvent,
    StoredEventText,
    find_event_page,
    get_events_after,
    get_events_after_pk,
)
from sessions_app.services.lifecycle import (
    do_delete_expired_sessions,
    do_delete_session,
    do_erase_app,
    do_erase_user,
)
from sessions_app.services.state import (
    check_scoped_state,
    do_patch_app_state,
    do_patch_session_state,
    do_patch_user_state,
    do_replace_app_state,
    do_replace_session_state,
    do_replace_user_state,
    get_app_state,
    get_user_state,
)

__all__ = [
    "PREVIEW_LENGTH",
    "STALE_SESSION_MESSAGE",
    "NewEvent",
    "SessionAttributes",
    "SessionError",
    "SessionExists",
    "SessionHead",
    "SessionNotFound",
    "SessionRef",
    "SeveralSessions",
    "StaleSession",
    "StaleState",
    "StateDelta",
    "StoredEvent",
    "StoredEventText",
    "StoredSession",
    "check_attributes",
    "check_key",
    "check_scoped_state",
    "check_session_id",
    "check_timestamp",
    "do_append_event",
    "do_append_event_by_id",
    "do_create_session",
    "do_delete_expired_sessions",
    "do_delete_session",
    "do_erase_app",
    "do_erase_user",
    "do_patch_app_state",
    "do_patch_session_state",
    "do_patch_user_state",
    "do_replace_app_state",
    "do_replace_session_state",
    "do_replace_user_state",
    "do_update_session_attributes",
    "event_preview",
    "find_event_page",
    "find_sessions",
    "find_whole_sessions",
    "get_app_state",
    "get_events_after",
    "get_events_after_pk",
    "get_session",
    "get_session_head",
    "get_session_owners",
    "get_session_pk",
    "get_session_users",
    "get_user_state",
    "list_session_page",
    "list_sessions",
    "to_microseconds",
]
