"""Vertex AI Agent Engine Sessions (v1beta1) on sessions_app's services.

Google's shapes in, Cognizes' services out, the same rows as ADK's
``PostgresSessionService`` and the native API:

* ``appendEvent``'s ``actions.state_delta`` is routed by prefix as everywhere
  in Cognizes (``app:`` / ``user:`` keys are shared state), so Vertex clients
  share app and user state too; ``temp:`` keys are never stored.
* An event is stored as the ADK event it is: from ``rawEvent`` when the client
  sends one (ADK does), else rebuilt from the named fields; it is read back with
  its ``rawEvent``, so ADK's events round-trip exactly.
* Vertex appends carry no version: each is applied at the session's version
  of the moment, in one statement that queues on the session's row, so
  concurrent appends all land and no state key is lost (a state replacement is a
  compare-and-swap at the version just read, retried if another writer got in).
* Session ids are unique per engine in Vertex and per user in Cognizes: a URL
  names only the id, so it finds the one session of the app with that id
  (a user-restricted key, its user's).
"""

from __future__ import annotations

import copy
import json
import re
import time
import uuid
from collections.abc import Callable
from dataclasses import replace
from typing import Any, Protocol, TypeVar, cast

from google.adk.events.event import Event
from google.adk.sessions.state import State
from pydantic import ValidationError
from rest_framework.exceptions import PermissionDenied
from rest_framework.renderers import BaseRenderer, JSONRenderer
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.settings import api_settings

from cognizes.access.api import check_state_write
from cognizes.access.renderers import FastJSONRenderer
from sessions_app import services
from sessions_app.adk import split_delta, to_new_event, trim_temp_state
from vertex_app import event_cache, filters, names
from vertex_app.base import EMPTY, VertexView, operation, page_token
from vertex_app.errors import Aborted, AlreadyExists, FailedPrecondition, InvalidArgument, NotFound
from vertex_app.raw_events import raw_event
from vertex_app.wire import expiry, field_mask, integer, mapping, message, rfc3339, string, timestamp


class _OfUser(Protocol):
    @property
    def user_id(self) -> str: ...


T = TypeVar("T")
Owned = TypeVar("Owned", bound=_OfUser)  # a session found by id: whose it is decides who may see it
SESSION_ID = re.compile(r"^[A-Za-z0-9_-]{1,128}$")
WRITE_ATTEMPTS = 10
# Event fields ADK keeps under names of its own in the Vertex API (custom_metadata keys).
_COMPACTION_KEY, _USAGE_KEY = "_compaction", "_usage_metadata"

_SESSION_FIELDS = {
    "user_id": None,
    "session_state": None,
    "ttl": None,
    "expire_time": None,
    "display_name": None,
    "labels": None,
    "name": None,
    "create_time": None,
    "update_time": None,  # the last three are output only
}
_EVENT_FIELDS = {
    "name": None,
    "author": None,
    "invocation_id": None,
    "timestamp": None,
    "content": None,
    "error_code": None,
    "error_message": None,
    "raw_event": None,
    "actions": {
        "skip_summarization": None,
        "state_delta": None,
        "artifact_delta": None,
        "transfer_agent": None,
        "escalate": None,
        "requested_auth_configs": None,
        # Not in Vertex's EventActions, but sent by ADK for Java (which ignores a refusal): kept, not lost.
        "end_of_agent": None,
        "requested_tool_confirmations": None,
        "agent_state": None,
    },
    "event_metadata": {
        "partial": None,
        "turn_complete": None,
        "interrupted": None,
        "branch": None,
        "custom_metadata": None,
        "long_running_tool_ids": None,
        "grounding_metadata": None,
        "input_transcription": None,
        "output_transcription": None,
        "usage_metadata": None,  # ADK for Java's, as above
    },
}
_UPDATABLE = {"display_name", "labels", "session_state", "ttl", "expire_time"}


class SessionLookup(VertexView):
    """Finds a session of the engine's app by the id a Vertex URL names."""

    # What these views answer is JSON they read or wrote (times as rfc3339 strings): pydantic-core writes it.
    renderer_classes = [
        FastJSONRenderer if renderer is JSONRenderer else renderer
        # api_settings imports the dotted paths: classes, where the stubs say strings.
        for renderer in cast(list[type[BaseRenderer]], api_settings.DEFAULT_RENDERER_CLASSES)
    ]

    def session_name(self, session_id: str) -> str:
        return names.session(self.engine, session_id)

    def load(self, session_id: str, *, write: bool) -> services.StoredSession:
        """The session without events; 404 if the caller may not see it. One query: it is found and read at once."""
        _check_id(session_id)
        found = services.find_whole_sessions(app_name=self.app_name, session_id=session_id, only_user=self.only_user)
        return self.one_of(found, session_id, write=write)

    def owner(self, session_id: str, *, write: bool) -> str:
        """The user whose session of this app has this id, checked against the caller's key."""
        return self.find(session_id, write=write).user_id

    def find(self, session_id: str, *, write: bool) -> services.SessionRef:
        """``owner``, with the session's row id."""
        _check_id(session_id)
        found = services.find_sessions(app_name=self.app_name, session_id=session_id, only_user=self.only_user)
        return self.one_of(found, session_id, write=write)

    def one_of(self, found: list[Owned], session_id: str, *, write: bool) -> Owned:
        """The one rule for the sessions a URL's id found (each with a ``user_id``): 404 if none, 412 if the
        ids of several users, else the one, once the caller's scope for its user is checked."""
        if not found:
            raise NotFound(f"Session {session_id} does not exist.")
        if len(found) > 1:
            raise FailedPrecondition(_several_users(session_id))
        self.scope(found[0].user_id, write=write)
        return found[0]


def _check_id(session_id: str) -> None:
    """A session id a Vertex URL may name (anything else is a 400 before any query)."""
    if not session_id or len(session_id) > 128 or "\x00" in session_id:
        raise InvalidArgument("A session id is 1 to 128 characters.")


def _several_users(session_id: str) -> str:
    return (
        f"Several users of this app have a session {session_id}: reach it through the native API "
        "(/api/v1/apps/{app}/users/{user}/sessions/{id}/) or with a key of one user."
    )


class SessionsView(SessionLookup):
    """``{engine}/sessions``: create, list."""

    rpcs = {"post": "CreateSession", "get": "ListSessions"}

    def post(self, request: Request, **kwargs: Any) -> Response:
        """Create a session for a user (the id is chosen with sessionId, or made up)."""
        body = message(request.data, _SESSION_FIELDS)
        user_id = string(body.get("user_id"), "userId", required=True)
        session_id = string(
            request.query_params.get("sessionId") or request.query_params.get("session_id"), "sessionId"
        )
        if session_id and not SESSION_ID.match(session_id):
            raise InvalidArgument("sessionId is 1 to 128 letters, digits, '_' or '-'.")
        scope = self.scope(user_id, write=True)
        state = mapping(body.get("session_state"), "sessionState")
        check_state_write(scope, state)
        attributes = services.SessionAttributes(
            display_name=string(body.get("display_name"), "displayName"),
            labels=mapping(body.get("labels"), "labels"),
            expire_time=expiry(body),
        )
        session_id = session_id or str(uuid.uuid4().int >> 65)  # Vertex-like: 18-19 digits
        if services.get_session_users(app_name=self.app_name, session_id=session_id, limit=1):
            raise AlreadyExists(f"Session {session_id} already exists.")
        try:
            stored = services.do_create_session(
                app_name=self.app_name,
                user_id=user_id,
                session_id=session_id,
                delta=split_delta(state),
                now=time.time(),
                attributes=attributes,
            )
        except services.SessionExists as error:
            raise AlreadyExists(str(error)) from error
        except services.SessionError as error:
            raise InvalidArgument(str(error)) from error
        name = self.session_name(session_id)
        return Response(operation(names.operation(name), session_resource(name, stored), kind="Session"))

    def get(self, request: Request, **kwargs: Any) -> Response:
        """List the engine's sessions, or one user's (filter user_id="USER")."""
        conditions = filters.parse(request.query_params.get("filter"), fields={"user_id"})
        user_id = self.only_user
        for condition in conditions:
            if condition.op != "=" or not isinstance(condition.value, str):
                raise InvalidArgument('Filter sessions by user as user_id="USER".')
            if user_id is not None and condition.value != user_id:
                return Response({"sessions": []})  # a key of one user sees no one else's sessions
            user_id = condition.value
        size = integer(request.query_params.get("pageSize"), "pageSize", default=100, low=1, high=1000)
        offset = page_token(request.query_params.get("pageToken"))
        stored = services.list_sessions(app_name=self.app_name, user_id=user_id, limit=size + 1, offset=offset)
        out: dict[str, Any] = {
            "sessions": [session_resource(self.session_name(each.session_id), each) for each in stored[:size]]
        }
        if len(stored) > size:
            out["nextPageToken"] = str(offset + size)
        return Response(out)


class SessionView(SessionLookup):
    """``{engine}/sessions/{id}``: get, patch, delete."""

    rpcs = {"get": "GetSession", "patch": "UpdateSession", "delete": "DeleteSession"}

    def get(self, request: Request, session_id: str, **kwargs: Any) -> Response:
        """Read a session (without its events)."""
        stored = self.load(session_id, write=False)
        return Response(session_resource(self.session_name(session_id), stored))

    def patch(self, request: Request, session_id: str, **kwargs: Any) -> Response:
        """Change a session's state, display name, labels or expiry."""
        body = message(request.data, _SESSION_FIELDS)
        mask = field_mask(request.query_params.get("updateMask") or request.query_params.get("update_mask"), _UPDATABLE)
        fields = mask if mask is not None else _UPDATABLE & {name for name, value in body.items() if value is not None}
        stored = self.load(session_id, write=True)
        keys = {"app_name": self.app_name, "user_id": stored.user_id, "session_id": session_id}
        changes: dict[str, Any] = {}
        if "display_name" in fields:
            changes["display_name"] = string(body.get("display_name"), "displayName")
        if "labels" in fields:
            changes["labels"] = mapping(body.get("labels"), "labels")
        if fields & {"ttl", "expire_time"}:
            changes["expire_time"] = expiry(body)
        try:
            services.do_update_session_attributes(**keys, changes=changes)
            if "session_state" in fields:
                _replace_state(keys, mapping(body.get("session_state"), "sessionState"))
        except services.SessionNotFound as error:
            raise NotFound(str(error)) from error
        except services.SessionError as error:
            raise InvalidArgument(str(error)) from error
        return self.get(request, session_id)

    def delete(self, request: Request, session_id: str, **kwargs: Any) -> Response:
        """Delete a session and its events."""
        stored = self.load(session_id, write=True)
        services.do_delete_session(app_name=self.app_name, user_id=stored.user_id, session_id=session_id)
        return Response(operation(names.operation(self.session_name(session_id)), kind=EMPTY))


class SessionOperationView(SessionLookup):
    """``{session}/operations/{id}``: Cognizes' session operations are done when they are returned."""

    rpcs = {"get": "GetOperation"}

    def get(self, request: Request, session_id: str, operation_id: str, **kwargs: Any) -> Response:
        """Read an operation of a session."""
        stored = self.load(session_id, write=False)
        name = self.session_name(session_id)
        return Response(operation(names.operation(name, operation_id), session_resource(name, stored), kind="Session"))


class AppendEventView(SessionLookup):
    """``{session}:appendEvent``."""

    rpcs = {"post": "AppendEvent"}

    def post(self, request: Request, session_id: str, **kwargs: Any) -> Response:
        """Append an event to a session, applying its state delta."""
        body = message(request.data, _EVENT_FIELDS)
        _check_id(session_id)
        try:
            scope = self.scope(None, write=True)  # the user's own check: the statement finds only_user's sessions
        except PermissionDenied:
            self.owner(session_id, write=True)  # 404 for a session that is not there, as for any key
            raise
        event = _event(body)
        if event.partial:
            return Response({})  # streaming fragments: Cognizes stores the complete event that follows
        check_state_write(scope, event.actions.state_delta)
        new_event = to_new_event(trim_temp_state(event))
        if body.get("raw_event") is not None and _raw(event) != _as_sent(body["raw_event"], event):
            new_event = replace(new_event, raw_json=json.dumps(_as_sent(body["raw_event"], event), ensure_ascii=False))
        try:
            services.do_append_event_by_id(
                app_name=self.app_name, session_id=session_id, only_user=scope.only_user, event=new_event
            )
        except services.SessionNotFound as error:
            raise NotFound(f"Session {session_id} does not exist.") from error
        except services.SeveralSessions as error:
            raise FailedPrecondition(_several_users(session_id)) from error
        except services.SessionError as error:  # the event id is taken
            raise AlreadyExists(str(error)) from error
        return Response({})


class EventsView(SessionLookup):
    """``{session}/events``: list, oldest first, ``filter=timestamp>="…"``."""

    rpcs = {"get": "ListEvents"}

    def get(self, request: Request, session_id: str, **kwargs: Any) -> Response:
        """List a session's events, oldest first: the session is found and its page read in one query."""
        try:
            since, size, after = _page_query(request)
        except InvalidArgument:
            self.find(session_id, write=False)  # a session that is not there (or not the caller's) says so first
            raise
        _check_id(session_id)
        found, stored = services.find_event_page(
            app_name=self.app_name,
            session_id=session_id,
            only_user=self.only_user,
            after_version=after,
            since=since,
            limit=size + 1,
        )
        session = self.one_of(found, session_id, write=False)
        name = self.session_name(session_id)
        out: dict[str, Any] = {
            "sessionEvents": [
                event_cache.events.resource(session.pk, name, event, event_resource) for event in stored[:size]
            ]
        }
        if len(stored) > size:
            out["nextPageToken"] = str(stored[size - 1].version)
        return Response(out)


def _page_query(request: Request) -> tuple[float | None, int, int]:
    """ListEvents' query: the time of its ``timestamp>=`` filter (epoch seconds, or None), page size, page token."""
    since: float | None = None
    for condition in filters.parse(request.query_params.get("filter"), fields={"timestamp"}):
        if condition.op not in (">=", ">"):
            raise InvalidArgument('Filter events by time as timestamp>="RFC 3339 time".')
        moment = timestamp(str(condition.value), "timestamp").timestamp()
        since = max(since or moment, moment + (1e-6 if condition.op == ">" else 0))
    size = integer(request.query_params.get("pageSize"), "pageSize", default=100, low=1, high=1000)
    return since, size, page_token(request.query_params.get("pageToken"))


def session_resource(name: str, stored: services.StoredSession) -> dict[str, Any]:
    attributes = stored.attributes or services.SessionAttributes()
    out: dict[str, Any] = {
        "name": name,
        "userId": stored.user_id,
        "sessionState": stored.merged_state(),
        "createTime": rfc3339(attributes.create_time),
        "updateTime": rfc3339(stored.last_update_time),
    }
    if attributes.display_name:
        out["displayName"] = attributes.display_name
    if attributes.labels:
        out["labels"] = attributes.labels
    if attributes.expire_time:
        out["expireTime"] = rfc3339(attributes.expire_time)
    return out


def event_resource(session_name: str, stored: services.StoredEvent) -> dict[str, Any]:
    """A stored ADK event as Vertex's SessionEvent, with the whole event as ``rawEvent`` (verbatim if kept).

    Read from the stored JSON as it is (``raw_events``), not rebuilt as an ADK ``Event``: the stored
    dump holds every field that is not None, so a field it lacks is the model's default.
    """
    data = stored.data
    raw = stored.raw_event or raw_event(data)
    out: dict[str, Any] = {
        "name": names.event(session_name, data.get("id", "")),
        "author": data.get("author"),
        "invocationId": data.get("invocation_id", ""),
        "timestamp": rfc3339(data["timestamp"]),
        "rawEvent": raw,
    }
    if "content" in raw:
        out["content"] = raw["content"]
    actions = data.get("actions") or {}
    out["actions"] = {
        key: actions[name]
        for key, name in (
            ("stateDelta", "state_delta"),
            ("artifactDelta", "artifact_delta"),
            ("transferAgent", "transfer_to_agent"),
            ("escalate", "escalate"),
            ("skipSummarization", "skip_summarization"),
        )
        if actions.get(name) not in (None, {})
    }
    metadata = {
        "partial": data.get("partial"),
        "turnComplete": data.get("turn_complete"),
        "interrupted": data.get("interrupted"),
        "branch": data.get("branch"),
        "customMetadata": data.get("custom_metadata"),
        "longRunningToolIds": sorted(data["long_running_tool_ids"]) if data.get("long_running_tool_ids") else None,
    }
    out["eventMetadata"] = {key: value for key, value in metadata.items() if value is not None}
    if data.get("error_code"):
        out["errorCode"] = data["error_code"]
    if data.get("error_message"):
        out["errorMessage"] = data["error_message"]
    return out


def _raw(event: Event) -> dict[str, Any]:
    """An ADK event as ADK's Vertex client sends it as ``rawEvent``."""
    return event.model_dump(mode="json", by_alias=True, exclude_none=True)


def _as_sent(raw: dict[str, Any], event: Event) -> dict[str, Any]:
    """A client's rawEvent with the fields the resource sets (author, invocation, time) as stored, and
    without ``temp:`` keys in its state delta (which are never stored, here neither)."""
    kept = {key: value for key, value in raw.items() if key not in ("invocation_id", "author", "timestamp")}
    actions = kept.get("actions")
    if isinstance(actions, dict):
        kept["actions"] = actions = dict(actions)
        for name in ("stateDelta", "state_delta"):
            if isinstance(actions.get(name), dict):
                actions[name] = {k: v for k, v in actions[name].items() if not k.startswith(State.TEMP_PREFIX)}
    return {**kept, "invocationId": event.invocation_id, "author": event.author, "timestamp": event.timestamp}


def _event(body: dict[str, Any]) -> Event:
    """The ADK event an ``appendEvent`` body describes; 400 if it describes none."""
    author = string(body.get("author"), "author", required=True)
    invocation_id = string(body.get("invocation_id"), "invocationId")
    moment = timestamp(body["timestamp"], "timestamp").timestamp() if body.get("timestamp") else time.time()
    raw = body.get("raw_event")
    if raw is not None:
        data = copy.deepcopy(mapping(raw, "rawEvent"))
        for key in ("invocationId", "invocation_id", "author"):
            data.pop(key, None)
        # The resource's fields win, as in ADK's reader; rawEvent keeps the exact float
        # when it is the same time, which the RFC 3339 field rounds to microseconds.
        exact = data.get("timestamp")
        if not isinstance(exact, (int, float)) or abs(exact - moment) >= 1e-6:
            data["timestamp"] = moment
        data.update(invocation_id=invocation_id, author=author)
    else:
        data = _event_from_fields(body, author=author, invocation_id=invocation_id, moment=moment)
    try:
        return Event.model_validate(data)
    except ValidationError as error:
        problems = "; ".join(f"{'.'.join(map(str, e['loc']))}: {e['msg']}" for e in error.errors()[:5])
        raise InvalidArgument(f"The event is not valid: {problems}.") from None


def _event_from_fields(body: dict[str, Any], *, author: str, invocation_id: str, moment: float) -> dict[str, Any]:
    """An ADK event from Vertex's named fields, as ADK's Vertex reader rebuilds one without ``rawEvent``."""
    actions = dict(body.get("actions") or {})
    if "transfer_agent" in actions:
        actions["transfer_to_agent"] = actions.pop("transfer_agent")
    metadata = dict(body.get("event_metadata") or {})
    custom = dict(mapping(metadata.pop("custom_metadata", None), "eventMetadata.customMetadata"))
    if _COMPACTION_KEY in custom:
        actions["compaction"] = custom.pop(_COMPACTION_KEY)
    data: dict[str, Any] = {
        "author": author,
        "invocation_id": invocation_id,
        "timestamp": moment,
        "actions": {key: value for key, value in actions.items() if value is not None},
        **{key: value for key, value in metadata.items() if value is not None},
    }
    if _USAGE_KEY in custom:
        data["usage_metadata"] = custom.pop(_USAGE_KEY)
    if custom:
        data["custom_metadata"] = custom
    for key in ("content", "error_code", "error_message"):
        if body.get(key) is not None:
            data[key] = body[key]
    return data


def _replace_state(keys: dict[str, str], state: dict[str, Any]) -> None:
    """Replace the session's own state (a PATCH of ``sessionState``); shared keys are refused, not dropped."""
    delta = split_delta(state)
    if delta.app or delta.user:
        raise InvalidArgument(
            "app: and user: keys are shared by every session of the app or user: "
            "change them with appendEvent's actions.state_delta."
        )
    _at_current_version(
        keys, lambda version: services.do_replace_session_state(**keys, state=delta.session, expected_version=version)
    )


def _at_current_version(keys: dict[str, str], write: Callable[[int], T]) -> T:
    """A compare-and-swap ``write`` at the session's current version, again if another writer got in first.

    Vertex's writes carry no version: each is applied to the session as it is
    now, and none overwrites another's (the SQL merges state deltas).
    """
    for _ in range(WRITE_ATTEMPTS):
        head = services.get_session_head(**keys)
        if head is None:
            raise NotFound(f"Session {keys['session_id']} does not exist.")
        try:
            return write(head.version)
        except services.StaleSession:
            continue
    raise Aborted(f"Session {keys['session_id']} is being written by others; retry.")
