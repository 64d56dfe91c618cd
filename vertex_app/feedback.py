"""Agent Engine's feedback entries (v1beta1 ``{engine}/feedbackEntries``) and their feedback context, on sessions_app.

What agentplatform 2.6's ``client.feedback_entries`` sends (``../shared/agent-engine-stores-wire.md`` §2):
create, get, list (``filter``, ``orderBy``, pages), update (``updateMask``), delete, and the singleton
``{entry}/feedbackContext`` (get, patch). Writes answer done operations: the SDK cannot poll the context's
(``KeyError('operation_name')``), and needs not poll the others. The session and the event an entry is about
must exist in the engine's app (404 for the session, 400 for an event not in it); the session's user is the one
whose key may see and change its entries.
"""

from __future__ import annotations

import re
from typing import Any

from rest_framework.request import Request
from rest_framework.response import Response

from cognizes.access.api import parse_id
from sessions_app.models import FeedbackEntry
from sessions_app.services import feedback
from vertex_app import filters, names
from vertex_app.base import EMPTY, operation, page
from vertex_app.errors import InvalidArgument, NotFound
from vertex_app.sessions import SessionLookup
from vertex_app.wire import field_mask, message, rfc3339, snake, timestamp

_ENTRY_FIELDS: dict[str, Any] = {
    "name": None,
    "session_id": None,
    "event_id": None,
    "feedback_type": None,
    "feedback_labels": None,
    "feedback_text": None,
    "user_id": None,
    "source": None,
    "custom_metadata": None,
    "create_time": None,
    "update_time": None,
}
_CONTEXT_FIELDS: dict[str, Any] = {"name": None, "context_events": None}
_ORDER = re.compile(r"^\s*(create_time|createTime|update_time|updateTime)(?:\s+(asc|desc))?\s*$")
_FILTER_TOKEN = re.compile(
    r"""\s*(?:
        (?P<string>"(?:[^"\\]|\\.)*")
      | (?P<op><=|>=|!=|=|<|>|:)
      | (?P<and>AND\b)
      | (?P<bad>OR\b|NOT\b|\(|\))
      | (?P<word>[^\s"<>=!():]+)
    )""",
    re.VERBOSE,
)


class FeedbackView(SessionLookup):
    """What the feedback paths share: an entry of the engine's app, found by its id and checked against the key."""

    def entry_name(self, entry: FeedbackEntry) -> str:
        return f"{self.engine}/feedbackEntries/{entry.pk}"

    def entry(self, entry_id: str, *, write: bool) -> FeedbackEntry:
        number = parse_id(entry_id)
        found = (
            feedback.get_feedback(app_name=self.app_name, entry_id=number, only_user=self.only_user)
            if number is not None and number < 2**63
            else None
        )
        if found is None:
            raise NotFound(f"feedbackEntries/{entry_id} does not exist.")
        self.scope(found.session.user_id, write=write)
        return found

    def resource(self, entry: FeedbackEntry) -> dict[str, Any]:
        return {
            "name": self.entry_name(entry),
            "sessionId": entry.session.session_id,
            "eventId": entry.event_id,
            "feedbackType": entry.feedback_type,
            "feedbackLabels": entry.feedback_labels,
            "feedbackText": entry.feedback_text,
            "userId": entry.user_id,
            "source": entry.source,
            "customMetadata": entry.custom_metadata,
            "createTime": rfc3339(entry.create_time),
            "updateTime": rfc3339(entry.update_time),
        }

    def done(self, entry: FeedbackEntry, response: dict[str, Any] | None, kind: str | None = None) -> Response:
        """A done operation of the entry (the SDK reads ``response``)."""
        return Response(operation(names.operation(self.entry_name(entry)), response, kind=kind))


def _values(body: dict[str, Any], fields: set[str]) -> dict[str, Any]:
    """The entry's fields in ``body`` that ``fields`` names, checked by sessions_app (400 otherwise)."""
    values = {name: body.get(name) for name in fields if name in feedback.UPDATABLE and name != "event_id"}
    if "feedback_type" in values:
        values["feedback_type"] = str(values["feedback_type"] or "").upper()
    try:
        return feedback.check_feedback(values)
    except feedback.FeedbackError as error:
        raise InvalidArgument(str(error)) from error


class FeedbackEntriesView(FeedbackView):
    """``{engine}/feedbackEntries``: create an entry, list the engine's."""

    def post(self, request: Request, **kwargs: Any) -> Response:
        """Create a feedback entry on an event of a session."""
        body = message(request.data, _ENTRY_FIELDS)
        session_id = body.get("session_id")
        event_id = body.get("event_id")
        if not isinstance(session_id, str) or not session_id or not isinstance(event_id, str) or not event_id:
            raise InvalidArgument("'sessionId' and 'eventId' are required strings.")
        if "/" in session_id:  # a session's resource name
            session_id = names.session_of(session_id, self.engine_id) or ""
        values = _values(body, set(body) - {"session_id", "event_id"})
        if not values.get("feedback_type"):
            raise InvalidArgument("'feedbackType' is required: THUMBS_UP or THUMBS_DOWN.")
        session = self.find(session_id, write=True)
        try:
            entry = feedback.do_create_feedback(
                session_pk=session.pk,
                app_name=self.app_name,
                session_user=session.user_id,
                event_id=event_id,
                values=values,
            )
        except feedback.EventNotFound as error:
            raise InvalidArgument(
                f"{error} Feedback is given on an event of the session (ADK's rawEvent.id)."
            ) from error
        except feedback.FeedbackError as error:
            raise InvalidArgument(str(error)) from error
        entry = self.entry(str(entry.pk), write=False)
        return self.done(entry, self.resource(entry))

    def get(self, request: Request, **kwargs: Any) -> Response:
        """List the engine's feedback entries (filter, orderBy, pageSize, pageToken)."""
        params = request.query_params
        conditions = _conditions(params.get("filter"))
        order = _order(params.get("orderBy") or params.get("order_by"))
        entries = feedback.list_feedback(
            app_name=self.app_name, only_user=self.only_user, conditions=conditions, order_by=order
        )
        out = page(request, entries, "feedbackEntries", self.resource)
        if not out["feedbackEntries"]:
            out.pop("feedbackEntries")
        return Response(out)


class FeedbackEntryView(FeedbackView):
    """``{engine}/feedbackEntries/{id}``: get, update, delete."""

    def get(self, request: Request, entry_id: str, **kwargs: Any) -> Response:
        """Read a feedback entry."""
        return Response(self.resource(self.entry(entry_id, write=False)))

    def patch(self, request: Request, entry_id: str, **kwargs: Any) -> Response:
        """Change a feedback entry's fields (those its updateMask names, else those sent)."""
        body = message(request.data, _ENTRY_FIELDS)
        mask = field_mask(
            request.query_params.get("updateMask") or request.query_params.get("update_mask"),
            set(feedback.UPDATABLE) | {"session_id"},
        )
        fields = mask if mask is not None else {name for name, value in body.items() if value is not None}
        if "session_id" in fields:
            raise InvalidArgument("An entry stays on its session: create another for another session.")
        entry = self.entry(entry_id, write=True)
        changes = _values(body, fields)
        if "event_id" in fields:
            changes["event_id"] = body.get("event_id")
        try:
            feedback.do_update_feedback(entry, changes)
        except feedback.EventNotFound as error:
            raise InvalidArgument(str(error)) from error
        except feedback.FeedbackError as error:
            raise InvalidArgument(str(error)) from error
        return self.done(entry, self.resource(entry))

    def delete(self, request: Request, entry_id: str, **kwargs: Any) -> Response:
        """Delete a feedback entry and its feedback context."""
        entry = self.entry(entry_id, write=True)
        name = self.entry_name(entry)
        feedback.do_delete_feedback(entry)
        return Response(operation(names.operation(name), kind=EMPTY))


class FeedbackContextView(FeedbackView):
    """``{engine}/feedbackEntries/{id}/feedbackContext``: the events the rater saw."""

    def get(self, request: Request, entry_id: str, **kwargs: Any) -> Response:
        """Read an entry's feedback context."""
        entry = self.entry(entry_id, write=False)
        return Response(self.context(entry))

    def patch(self, request: Request, entry_id: str, **kwargs: Any) -> Response:
        """Replace an entry's feedback context (done at once: the SDK cannot poll this operation)."""
        body = message(request.data, _CONTEXT_FIELDS)
        mask = field_mask(
            request.query_params.get("updateMask") or request.query_params.get("update_mask"), {"context_events"}
        )
        entry = self.entry(entry_id, write=True)
        if mask is None or "context_events" in mask:
            events = body.get("context_events") or []
            if not isinstance(events, list):
                raise InvalidArgument("'contextEvents' must be a list of events.")
            try:
                feedback.do_set_feedback_context(entry, events)
            except feedback.FeedbackError as error:
                raise InvalidArgument(str(error)) from error
        return self.done(entry, self.context(entry))

    def context(self, entry: FeedbackEntry) -> dict[str, Any]:
        return {"name": f"{self.entry_name(entry)}/feedbackContext", "contextEvents": entry.context_events}


def _order(text: str | None) -> str:
    """A column to sort by, ``-`` first when descending: ``create_time desc`` (either spelling), oldest first by
    default."""
    if not text:
        return "create_time"
    match = _ORDER.match(text)
    if match is None:
        raise InvalidArgument("orderBy takes create_time or update_time, optionally followed by desc.")
    return ("-" if match.group(2) == "desc" else "") + snake(match.group(1))


def _conditions(text: str | None) -> list[feedback.FeedbackCondition]:
    """The filter as conditions on the documented fields (``feedbackLabels:"x"`` is "has")."""
    out: list[feedback.FeedbackCondition] = []
    for condition in filters.parse(text, fields=feedback.FILTER_FIELDS, pattern=_FILTER_TOKEN, typed=False):
        value: Any = condition.value
        if "\x00" in value:
            raise InvalidArgument("A filter may not contain NUL characters.")
        if condition.field in ("create_time", "update_time"):
            value = timestamp(value, condition.field)
        elif condition.op not in ("=", "!=", ":"):
            raise InvalidArgument(f"{condition.field} is compared with = or !=.")
        out.append(feedback.FeedbackCondition(field=condition.field, op=condition.op, value=value))
    return out
