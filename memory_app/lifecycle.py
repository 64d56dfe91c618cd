"""What happens to memories when the sessions they came from, or their user, are deleted.

By default nothing (as in Vertex AI: memories outlive their sessions and keep
their own TTL). With ``COGNIZES_FORGET_MEMORIES_WITH_SESSIONS`` on, deleting a
session — through ADK, the API, the admin or expiry — forgets the memories that
came only from it and takes it away as a source of the others. The explicit
action (API, admin) does the same whatever the setting.
"""

from __future__ import annotations

from typing import Any

from django.conf import settings

from memory_app.services import do_erase_app, do_erase_user, do_forget_session_memories
from sessions_app.signals import DeletedSession, app_erased, sessions_deleted, user_erased


def forget_with_sessions(*, sessions: list[DeletedSession], **_: Any) -> None:
    if not settings.COGNIZES_FORGET_MEMORIES_WITH_SESSIONS:
        return
    for session in sessions:
        do_forget_session_memories(
            app_name=session.app_name,
            user_id=session.user_id,
            session_id=session.session_id,
            event_ids=session.event_ids,
            cause=f"session {session.session_id} deleted",
        )


def erase_user(*, app_name: str, user_id: str, **_: Any) -> dict[str, int]:
    """A user erased: their memories, revisions and consolidation jobs go too."""
    return do_erase_user(app_name=app_name, user_id=user_id)


def erase_app(*, app_name: str, **_: Any) -> dict[str, int]:
    """An app erased: every memory of it, whatever its scope, and its memory bank config go too."""
    return do_erase_app(app_name=app_name)


def connect() -> None:
    sessions_deleted.connect(forget_with_sessions, dispatch_uid="memory_app.lifecycle")
    user_erased.connect(erase_user, dispatch_uid="memory_app.erase_user")
    app_erased.connect(erase_app, dispatch_uid="memory_app.erase_app")
