"""What every session rule shares: the errors, the data they take and return, the checks of keys and times."""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, NoReturn

import pydantic_core
from django.db import connection

from sessions_app.models import MAX_KEY_LENGTH

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


class SeveralSessions(SessionError):
    """Several users of the app have a session with the id a caller named alone (Vertex's URLs)."""


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


def to_microseconds(value: float) -> float:
    """``value`` (epoch seconds) at the one precision event times are stored and compared at: whole microseconds.

    Vertex's wire (RFC 3339, protobuf Timestamp) and Python's ``datetime`` carry microseconds, while ADK's event time
    is a float with finer digits. Stored as the float and filtered by its RFC 3339 form, an event was dropped by a
    filter at its own time whenever the float rounded up (issue 43 item 11). Rounded as ``datetime.fromtimestamp``
    rounds (the fraction to the nearest microsecond, ties to even), so ADK's RFC 3339 time of an event, parsed back,
    is this same float; migration 0006 rounds stored rows by the same arithmetic.
    """
    whole = math.floor(value)
    return (int(whole) * 1_000_000 + round((value - whole) * 1e6)) / 1_000_000


def check_key(name: str, value: str) -> str:
    """Validate an app name, user id or session id."""
    if not isinstance(value, str) or not value.strip():
        raise SessionError(f"{name} must be a non-empty string.")
    if len(value) > MAX_KEY_LENGTH:
        raise SessionError(f"{name} is longer than {MAX_KEY_LENGTH} characters.")
    if "\x00" in value:
        raise SessionError(f"{name} may not contain NUL characters (PostgreSQL cannot store them).")
    return value


def check_session_id(value: str) -> str:
    """A session id every surface can address: not '.' or '..', no '/' (issue 30).

    Session ids go in URL paths (the native API, Vertex, the admin), where a '/'
    splits the path and '.' and '..' are path steps clients resolve away: such a
    session could be created but never read or deleted. Every other character
    is addressed percent-encoded.
    """
    check_key("session_id", value)
    if "/" in value or value.strip() in (".", ".."):
        raise SessionError(
            f"session_id {value!r} cannot be addressed in a URL: it may not contain '/' nor be '.' or '..' "
            "(any other character is fine)."
        )
    return value


def _raise_missing_or_stale(*, app_name: str, user_id: str, session_id: str) -> NoReturn:
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT 1 FROM sessions WHERE app_name = %s AND user_id = %s AND session_id = %s AND " + _live(),
            [app_name, user_id, session_id],
        )
        exists = cursor.fetchone() is not None
    if not exists:
        raise SessionNotFound(f"Session {session_id} not found.")
    raise StaleSession()


def _json(value: Any) -> dict[str, Any]:
    """Decode a jsonb column, which raw cursors return as text: by pydantic-core's parser (pydantic's own core,
    which ADK depends on), twice as fast as ``json.loads`` for an event and the same values (PostgreSQL's jsonb
    text holds no NaN, duplicate keys or lone surrogates; its huge numbers become ``inf`` in both) — a page of
    50 Vertex events decodes each of them."""
    return pydantic_core.from_json(value) if isinstance(value, str) else value
