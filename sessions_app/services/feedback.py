"""Feedback on session events (Agent Engine's ``feedbackEntries``, issue 47 item 4): the rules of what may be stored.

An entry is about one event of one session, both of which must exist when it is made (a verdict on nothing is
kept by no one); it goes with its session (``lifecycle``) and with its user. Entries are listed with the few
conditions Vertex documents, each one a column here, so a list is one indexed query.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any

from django.db import transaction
from django.db.models import Q, QuerySet

from sessions_app.models import MAX_KEY_LENGTH, Event, FeedbackEntry, FeedbackType
from sessions_app.services.base import SessionError

MAX_LABELS = 64
MAX_LABEL_LENGTH = 256
MAX_TEXT_LENGTH = 20_000
MAX_METADATA_ENTRIES = 64
MAX_CONTEXT_EVENTS = 200
UPDATABLE = frozenset(
    {"feedback_type", "feedback_labels", "feedback_text", "user_id", "source", "custom_metadata", "event_id"}
)


class FeedbackError(SessionError):
    """What a client sent cannot be stored as feedback (the surfaces answer 400)."""


class EventNotFound(SessionError):
    """The event the feedback is about is not in its session."""


@dataclass(frozen=True)
class FeedbackCondition:
    """One condition of a list's filter: ``field op value`` on a column (``feedback_labels`` ``:`` is "has")."""

    field: str
    op: str
    value: str | datetime


_COMPARE = {"=": "", "<": "__lt", "<=": "__lte", ">": "__gt", ">=": "__gte"}
FILTER_FIELDS = frozenset({"session_id", "user_id", "feedback_type", "feedback_labels", "create_time", "update_time"})


def check_feedback(values: dict[str, Any]) -> dict[str, Any]:
    """``values`` (the model's field names) checked and normalised; ``FeedbackError`` names the first bad one."""
    out: dict[str, Any] = {}
    for name, value in values.items():
        if name == "feedback_type":
            if value not in FeedbackType.values:
                raise FeedbackError(f"feedbackType must be one of {', '.join(FeedbackType.values)}.")
        elif name == "feedback_labels":
            value = value or []
            if (
                not isinstance(value, list)
                or len(value) > MAX_LABELS
                or any(not isinstance(label, str) or not label or len(label) > MAX_LABEL_LENGTH for label in value)
            ):
                raise FeedbackError(f"feedbackLabels is at most {MAX_LABELS} strings of 1 to {MAX_LABEL_LENGTH}.")
        elif name == "feedback_text":
            value = value or ""
            if not isinstance(value, str) or len(value) > MAX_TEXT_LENGTH:
                raise FeedbackError(f"feedbackText is a string of at most {MAX_TEXT_LENGTH} characters.")
        elif name in ("user_id", "source", "event_id"):
            value = value or ""
            if not isinstance(value, str) or len(value) > MAX_KEY_LENGTH:
                raise FeedbackError(f"{name} is a string of at most {MAX_KEY_LENGTH} characters.")
        elif name == "custom_metadata":
            value = value or {}
            if (
                not isinstance(value, dict)
                or len(value) > MAX_METADATA_ENTRIES
                or not all(isinstance(v, str) and len(k) <= MAX_LABEL_LENGTH for k, v in value.items())
            ):
                raise FeedbackError(f"customMetadata is at most {MAX_METADATA_ENTRIES} string pairs.")
        else:
            raise FeedbackError(f"{name} is not a field of a feedback entry.")
        out[name] = value
    return out


def _check_event(session_pk: int, event_id: str) -> None:
    if not event_id or not Event.objects.filter(session_id=session_pk, event_id=event_id).exists():
        raise EventNotFound(f"Event {event_id!r} is not an event of the session.")


def do_create_feedback(
    *, session_pk: int, app_name: str, session_user: str, event_id: str, values: dict[str, Any]
) -> FeedbackEntry:
    """Store a verdict on an event of the session (the row ``session_pk`` of ``app_name``, ``session_user``'s)."""
    checked = check_feedback({"event_id": event_id, **values})
    _check_event(session_pk, checked["event_id"])
    checked["user_id"] = checked.get("user_id") or session_user
    return FeedbackEntry.objects.create(session_id=session_pk, app_name=app_name, **checked)


def feedback_of(*, app_name: str, only_user: str | None) -> QuerySet[FeedbackEntry]:
    """The app's entries, those on one user's sessions if ``only_user`` (a key of that user sees no other)."""
    entries = FeedbackEntry.objects.filter(app_name=app_name).select_related("session")
    return entries.filter(session__user_id=only_user) if only_user is not None else entries


def get_feedback(*, app_name: str, entry_id: int, only_user: str | None) -> FeedbackEntry | None:
    return feedback_of(app_name=app_name, only_user=only_user).filter(pk=entry_id).first()


def list_feedback(
    *, app_name: str, only_user: str | None, conditions: list[FeedbackCondition], order_by: str = "create_time"
) -> QuerySet[FeedbackEntry]:
    """The entries matching every condition, in ``order_by`` (a column, ``-`` first for descending; then by id)."""
    entries = feedback_of(app_name=app_name, only_user=only_user)
    for condition in conditions:
        entries = entries.filter(_condition(condition))
    descending = order_by.startswith("-")
    return entries.order_by(order_by, "-pk" if descending else "pk")


def _condition(condition: FeedbackCondition) -> Q:
    field = "session__session_id" if condition.field == "session_id" else condition.field
    if condition.field == "feedback_labels":
        if condition.op not in (":", "="):
            raise FeedbackError('Filter labels as feedback_labels:"label".')
        return Q(feedback_labels__contains=[condition.value])
    if condition.op == "!=":
        return ~Q(**{field: condition.value})
    if condition.op == ":":
        return Q(**{field: condition.value})
    return Q(**{field + _COMPARE[condition.op]: condition.value})


def do_update_feedback(entry: FeedbackEntry, changes: dict[str, Any]) -> FeedbackEntry:
    """Change the named fields (an event named must be of the entry's session)."""
    checked = check_feedback(changes)
    if "event_id" in checked:
        _check_event(entry.session_id, checked["event_id"])
    if "user_id" in checked and not checked["user_id"]:
        checked["user_id"] = entry.session.user_id
    for name, value in checked.items():
        setattr(entry, name, value)
    entry.save(update_fields=[*checked, "update_time"])
    return entry


def do_set_feedback_context(entry: FeedbackEntry, events: list[dict[str, Any]]) -> FeedbackEntry:
    """Replace the entry's feedback context: the events (as the client sent them) the rater saw."""
    if len(events) > MAX_CONTEXT_EVENTS or not all(isinstance(event, dict) for event in events):
        raise FeedbackError(f"contextEvents is a list of at most {MAX_CONTEXT_EVENTS} events.")
    entry.context_events = events
    entry.save(update_fields=["context_events", "update_time"])
    return entry


def do_delete_feedback(entry: FeedbackEntry) -> None:
    with transaction.atomic():
        entry.delete()


def get_session_feedback(session_pk: int) -> list[FeedbackEntry]:
    """The session's entries, oldest first (its admin page shows them beside the events)."""
    return list(FeedbackEntry.objects.filter(session_id=session_pk).order_by("create_time", "pk"))
