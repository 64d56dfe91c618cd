"""One turn per session at a time, across processes and across the surfaces that run agents.

The run API and A2A both claim a session before its turn: a second turn of the
same session would interleave its events with the first one's and make the
later writer fail with a stale version halfway. The claim is a key in Redis
(Django's cache), released when the turn ends and expiring after
COGNIZES_RUN_TIMEOUT_SECONDS should a process die mid-turn.
"""

from __future__ import annotations

import hashlib
import json
import uuid
from collections.abc import Callable

from django.conf import settings
from django.core.cache import cache

BUSY = "Another turn of this session is running; try again when it has finished."


class SessionBusy(Exception):
    """Another turn of the session holds it."""

    def __init__(self) -> None:
        super().__init__(BUSY)


def claim_turn(app_name: str, user_id: str, session_id: str) -> Callable[[], None]:
    """Claim the session for one turn (``SessionBusy`` if taken); returns the release function."""
    key = "cognizes:turn:" + hashlib.sha256(json.dumps([app_name, user_id, session_id]).encode()).hexdigest()
    token = uuid.uuid4().hex
    if not cache.add(key, token, timeout=settings.COGNIZES_RUN_TIMEOUT_SECONDS):
        raise SessionBusy()

    def release() -> None:
        if cache.get(key) == token:
            cache.delete(key)

    return release
