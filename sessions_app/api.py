"""HTTP API for sessions, events and state: what ``PostgresSessionService`` does, over HTTP.

Every view is a ``ScopedView`` (cognizes/access/api.py): the caller's key is checked
against the URL's app and user before anything else. Writes call the same
services as the ADK service, so state deltas, ``temp:`` trimming and the
stale-writer check (409) apply here too.
"""

from __future__ import annotations

import json
import time
import uuid
from collections.abc import AsyncIterator, Callable
from datetime import timedelta
from typing import Any, NoReturn

from django.http import Http404, StreamingHttpResponse
from django.utils import timezone
from django_filters import rest_framework as filters
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiExample, extend_schema
from google.adk.events.event import Event as AdkEvent
from pydantic import ValidationError as PydanticValidationError
from rest_framework import serializers, status
from rest_framework.exceptions import NotFound, ValidationError
from rest_framework.renderers import JSONRenderer
from rest_framework.request import Request
from rest_framework.response import Response

from cognizes.access import sse
from cognizes.access.api import (
    BIGINT,
    Conflict,
    Pagination,
    ScopedView,
    SinceFilter,
    check_state_write,
    filter_values,
    paginated,
    valid,
)
from cognizes.access.key_kinds import check_whole_app
from cognizes.access.schema import filter_parameters
from sessions_app import live, services
from sessions_app.adk import split_delta, to_new_event, trim_temp_state
from sessions_app.models import MAX_KEY_LENGTH, Event, Session

# ---- serializers -------------------------------------------------------------------------------


class SessionOutSerializer(serializers.Serializer):
    id = serializers.CharField(help_text="The session id.")
    app_name = serializers.CharField()
    user_id = serializers.CharField()
    state = serializers.DictField(help_text="Merged state: session keys, app: and user: keys.")
    version = serializers.IntegerField(help_text="Pass it back as expected_version when writing.")
    last_update_time = serializers.FloatField(help_text="Epoch seconds of the last event.")
    expire_time = serializers.DateTimeField(allow_null=True, help_text="When it expires; null: never.")
    events = serializers.ListField(child=serializers.DictField(), required=False, help_text="ADK events, in order.")


MAX_TTL_SECONDS = 100 * 365 * 86400
"""A century: a longer TTL is a mistake (and past year 9999, not a date)."""


class SessionExpirySerializer(serializers.Serializer):
    """When a session expires: ``ttl_seconds`` from now, or at ``expire_time`` (null: never); not both."""

    ttl_seconds = serializers.FloatField(
        required=False, min_value=1, max_value=MAX_TTL_SECONDS, help_text="Expire this many seconds from now."
    )
    expire_time = serializers.DateTimeField(
        required=False, allow_null=True, help_text="Expire at this time (ISO 8601); null: never expire."
    )

    def validate(self, data: dict[str, Any]) -> dict[str, Any]:
        if "ttl_seconds" in data and "expire_time" in data:
            raise serializers.ValidationError("Give either `ttl_seconds` or `expire_time`, not both.")
        return data


def _expire_time(data: dict[str, Any]) -> dict[str, Any]:
    """The ``expire_time`` change the validated ``SessionExpirySerializer`` data asks for (empty: none)."""
    if "ttl_seconds" in data:
        return {"expire_time": timezone.now() + timedelta(seconds=data["ttl_seconds"])}
    return {"expire_time": data["expire_time"]} if "expire_time" in data else {}


class SessionCreateSerializer(SessionExpirySerializer):
    id = serializers.CharField(required=False, max_length=MAX_KEY_LENGTH, help_text="Optional; generated if absent.")
    state = serializers.DictField(required=False, default=dict, help_text="Initial state; app:/user: keys allowed.")


class EventOutSerializer(serializers.Serializer):
    version = serializers.IntegerField(help_text="The session's version once this event was stored.")
    event = serializers.DictField(help_text="The ADK event as stored.")


class EventAppendSerializer(serializers.Serializer):
    event = serializers.DictField(help_text="An ADK Event as JSON (author, content, actions, ...).")
    expected_version = serializers.IntegerField(
        min_value=0,
        max_value=BIGINT,
        help_text="The session version you last saw; 409 Conflict if the session moved on.",
    )


class StateOutSerializer(serializers.Serializer):
    state = serializers.DictField()
    version = serializers.IntegerField()


class StatePatchSerializer(serializers.Serializer):
    state = serializers.DictField(help_text="Keys to set; a null value removes the key (JSON merge patch).")
    expected_version = serializers.IntegerField(min_value=0, max_value=BIGINT, help_text="The version you last read.")


class SessionQuerySerializer(serializers.Serializer):
    num_recent_events = serializers.IntegerField(required=False, min_value=0, max_value=BIGINT)
    after_timestamp = serializers.FloatField(required=False)


class AfterVersionSerializer(serializers.Serializer):
    after_version = serializers.IntegerField(required=False, min_value=0, max_value=BIGINT)


# ---- helpers -----------------------------------------------------------------------------------


def _session_out(stored: services.StoredSession, *, events: list[dict] | None = None) -> dict[str, Any]:
    out = {
        "id": stored.session_id,
        "app_name": stored.app_name,
        "user_id": stored.user_id,
        "state": stored.merged_state(),
        "version": stored.version,
        "last_update_time": stored.last_update_time,
        "expire_time": stored.attributes.expire_time if stored.attributes else None,
    }
    if events is not None:
        out["events"] = events
    return out


def _raise_for(
    error: services.SessionError, *, current_version: Callable[[], int | None] | None = None, stale: str | None = None
) -> NoReturn:
    """The HTTP error of a service error; a stale write's 409 names the version the caller should read.

    ``stale``: the message of a stale write (else the service's, which is ADK's for an append), with
    ``{current}`` filled in.
    """
    if isinstance(error, services.SessionNotFound):
        raise NotFound(str(error)) from error
    if isinstance(error, (services.StaleSession, services.StaleState)) and current_version is not None:
        current = current_version()
        details = {"current_version": current}
        raise Conflict(stale.format(current=current) if stale else str(error), details=details) from error
    if isinstance(error, (services.StaleSession, services.StaleState, services.SessionExists)):
        raise Conflict(str(error)) from error
    raise ValidationError(str(error)) from error


_STALE_STATE = (
    "The state changed since the version given; it is at version {current}: read it again and re-apply the change."
)


class SessionFilter(filters.FilterSet):
    updated_since = SinceFilter("update_time")
    user_id = filters.CharFilter(field_name="user_id")

    class Meta:
        model = Session
        fields = ["updated_since", "user_id"]


def _list_sessions(request: Request, app_name: str, *users: str | None) -> Response:
    """A page of the app's sessions (of the user in ``users`` or ``?user_id=``, if one is named) with the total
    count, in one prepared statement (``services.list_session_page``).

    Four queries once (the count, the rows, the app state, each user's state), then one the ORM built and
    compiled per request, which cost more CPU than ADK's api_server spends on a whole list.
    """
    values = filter_values(SessionFilter, request.query_params)
    named = {user for user in (*users, values.get("user_id")) if user}
    paginator = Pagination()
    paginator.request, paginator.limit, paginator.offset = (
        request,
        paginator.get_limit(request),
        paginator.get_offset(request),
    )
    if len(named) > 1:
        stored: list[Any] = []  # two users named: no session is both's
        paginator.count = 0
    else:
        stored, paginator.count = services.list_session_page(
            app_name=app_name,
            user_id=next(iter(named), None),
            updated_since=values.get("updated_since"),
            limit=paginator.limit or Pagination.default_limit,  # get_limit's None is only for no default
            offset=paginator.offset,
        )
    return paginator.get_paginated_response([_session_out(session) for session in stored])


# ---- views -------------------------------------------------------------------------------------


class AppSessionsView(ScopedView):
    """Sessions of every user of an app (a user-restricted key sees only its user's)."""

    @extend_schema(
        operation_id="list_app_sessions",
        parameters=filter_parameters(SessionFilter),
        responses=paginated(SessionOutSerializer),
    )
    def get(self, request: Request, app_name: str) -> Response:
        return _list_sessions(request, app_name, self.scope.only_user)


class SessionsView(ScopedView):
    @extend_schema(
        operation_id="list_sessions",
        parameters=[p for p in filter_parameters(SessionFilter) if p.name == "updated_since"],
        responses=paginated(SessionOutSerializer),
    )
    def get(self, request: Request, app_name: str, user_id: str) -> Response:
        """The user's live sessions, oldest update first (``?updated_since=``), without their events."""
        return _list_sessions(request, app_name, user_id)

    @extend_schema(
        operation_id="create_session",
        request=SessionCreateSerializer,
        responses={201: SessionOutSerializer},
        examples=[
            OpenApiExample(
                "A session that expires in a day",
                request_only=True,
                value={"id": "trip-planning", "state": {"user:home_city": "Lyon", "draft": True}, "ttl_seconds": 86400},
            )
        ],
    )
    def post(self, request: Request, app_name: str, user_id: str) -> Response:
        """Create a session (id generated if absent) with its initial state and optional expiry."""
        data = valid(SessionCreateSerializer, request.data)
        check_state_write(self.scope, data["state"])
        session_id = (data.get("id") or "").strip() or str(uuid.uuid4())
        try:
            stored = services.do_create_session(
                app_name=app_name,
                user_id=user_id,
                session_id=session_id,
                delta=split_delta(data["state"]),
                now=time.time(),
                attributes=services.SessionAttributes(**_expire_time(data)),
            )
        except services.SessionError as error:
            _raise_for(error)
        return Response(_session_out(stored, events=[]), status=status.HTTP_201_CREATED)


class UserView(ScopedView):
    @extend_schema(operation_id="erase_user", responses={200: OpenApiTypes.OBJECT})
    def delete(self, request: Request, app_name: str, user_id: str) -> Response:
        """Erase everything stored of the user in this app — sessions, events, user state, memories, artifacts,
        tool calls, traces — in one transaction; answers the rows deleted per table."""
        try:
            return Response({"erased": services.do_erase_user(app_name=app_name, user_id=user_id)})
        except services.SessionError as error:
            _raise_for(error)


class SessionView(ScopedView):
    @extend_schema(
        operation_id="get_session",
        parameters=[SessionQuerySerializer],
        responses=SessionOutSerializer,
    )
    def get(self, request: Request, app_name: str, user_id: str, session_id: str) -> Response:
        """The session with its events (``?num_recent_events=``, ``?after_timestamp=``); 404 if expired."""
        params = valid(SessionQuerySerializer, request.query_params, strict=False)
        stored = services.get_session(app_name=app_name, user_id=user_id, session_id=session_id, **params)
        if stored is None:
            raise Http404
        return Response(_session_out(stored, events=[_json(e) for e in stored.events_json]))

    @extend_schema(operation_id="update_session", request=SessionExpirySerializer, responses=SessionOutSerializer)
    def patch(self, request: Request, app_name: str, user_id: str, session_id: str) -> Response:
        """Change when the session expires (its state changes through ``state/`` and events)."""
        changes = _expire_time(valid(SessionExpirySerializer, request.data))
        if not changes:
            raise ValidationError("Give `ttl_seconds` or `expire_time`.")
        try:
            services.do_update_session_attributes(
                app_name=app_name, user_id=user_id, session_id=session_id, changes=changes
            )
        except services.SessionError as error:
            _raise_for(error)
        stored = services.get_session(app_name=app_name, user_id=user_id, session_id=session_id, num_recent_events=0)
        if stored is None:  # expired by the change itself
            raise Http404
        return Response(_session_out(stored))

    @extend_schema(operation_id="delete_session", responses={204: None})
    def delete(self, request: Request, app_name: str, user_id: str, session_id: str) -> Response:
        """Delete the session and its events (its memories stay unless configured otherwise)."""
        if not services.do_delete_session(app_name=app_name, user_id=user_id, session_id=session_id):
            raise Http404
        return Response(status=status.HTTP_204_NO_CONTENT)


class EventsView(ScopedView):
    @extend_schema(
        operation_id="list_events", parameters=[AfterVersionSerializer], responses=paginated(EventOutSerializer)
    )
    def get(self, request: Request, app_name: str, user_id: str, session_id: str) -> Response:
        """The session's events after ``?after_version=``, in order, each with the version it made."""
        session = Session.objects.live().filter(app_name=app_name, user_id=user_id, session_id=session_id).first()
        if session is None:
            raise Http404
        after = valid(AfterVersionSerializer, request.query_params, strict=False).get("after_version", 0)
        queryset = Event.objects.filter(session=session, version__gt=after).order_by("version")
        paginator = Pagination()
        page = paginator.paginate_queryset(queryset, request, view=self) or []  # None only without a default limit
        return paginator.get_paginated_response([{"version": e.version, "event": e.data} for e in page])

    @extend_schema(
        operation_id="append_event",
        request=EventAppendSerializer,
        responses={201: EventOutSerializer},
        examples=[
            OpenApiExample(
                "The user's message, at the version last read",
                request_only=True,
                value={
                    "expected_version": 1,
                    "event": {
                        "invocation_id": "inv-1",
                        "author": "user",
                        "content": {"role": "user", "parts": [{"text": "I prefer Celsius."}]},
                        "actions": {"state_delta": {"user:unit": "celsius"}},
                    },
                },
            )
        ],
    )
    def post(self, request: Request, app_name: str, user_id: str, session_id: str) -> Response:
        """Append an ADK event if the session is still at ``expected_version`` (409 if not)."""
        data = valid(EventAppendSerializer, request.data)
        try:
            event = AdkEvent.model_validate(data["event"])
        except PydanticValidationError as error:
            raise ValidationError(
                {"event": [e["msg"] + " at " + ".".join(map(str, e["loc"])) for e in error.errors()]}
            ) from error
        if event.partial:
            raise ValidationError({"event": ["Partial (streaming) events are not stored."]})
        check_state_write(self.scope, event.actions.state_delta)
        new_event = to_new_event(trim_temp_state(event))
        keys = {"app_name": app_name, "user_id": user_id, "session_id": session_id}
        try:
            version = services.do_append_event(**keys, expected_version=data["expected_version"], event=new_event)
        except services.SessionError as error:
            _raise_for(error, current_version=lambda: _session_version(keys))
        return Response({"version": version, "event": _json(new_event.data_json)}, status=status.HTTP_201_CREATED)


class EventStreamView(ScopedView):
    """The session's events as Server-Sent Events, live: each one as any process stores it.

    Starts after the ``Last-Event-ID`` header a reconnecting EventSource sends,
    else after ``after_version`` (by default from the first event), one ``event`` message
    per event with the version as its id, a comment line every 15 s of quiet.
    Ends when the session is deleted.
    """

    renderer_classes = [JSONRenderer, sse.EventStreamRenderer]
    staff_permission = "sessions_app.view_session"  # the session page's live panel follows it

    @extend_schema(
        operation_id="stream_events",
        parameters=[AfterVersionSerializer],
        responses={(200, "text/event-stream"): OpenApiTypes.STR},
    )
    def get(self, request: Request, app_name: str, user_id: str, session_id: str) -> StreamingHttpResponse:
        session_pk = services.get_session_pk(app_name=app_name, user_id=user_id, session_id=session_id)
        if session_pk is None:
            raise Http404
        # A reconnecting EventSource repeats the URL but sends the id it saw last: that wins.
        resume = request.headers.get("Last-Event-ID")
        query = {"after_version": resume} if resume is not None else request.query_params
        after = valid(AfterVersionSerializer, query, strict=False).get("after_version", 0)
        return sse.response(_event_messages(session_pk, after))


async def _event_messages(session_pk: int, after_version: int) -> AsyncIterator[str]:
    async for item in live.follow(session_pk, after_version=after_version):
        if item is None:
            yield sse.comment()
        else:
            version, event = item
            yield sse.message({"version": version, "event": event}, event="event", id=version)


class SessionStateView(ScopedView):
    @extend_schema(operation_id="get_session_state", responses=StateOutSerializer)
    def get(self, request: Request, app_name: str, user_id: str, session_id: str) -> Response:
        """The session's own state and its version."""
        stored = services.get_session(app_name=app_name, user_id=user_id, session_id=session_id, num_recent_events=0)
        if stored is None:
            raise Http404
        return Response({"state": stored.state, "version": stored.version})

    @extend_schema(operation_id="update_session_state", request=StatePatchSerializer, responses=StateOutSerializer)
    def patch(self, request: Request, app_name: str, user_id: str, session_id: str) -> Response:
        """Merge keys into the session's state (null removes a key) at ``expected_version``."""
        data = valid(StatePatchSerializer, request.data)
        keys = {"app_name": app_name, "user_id": user_id, "session_id": session_id}
        try:
            services.do_patch_session_state(**keys, patch=data["state"], expected_version=data["expected_version"])
        except services.SessionError as error:
            _raise_for(error, current_version=lambda: _session_version(keys), stale=_STALE_STATE)
        return self.get(request, app_name, user_id, session_id)


class UserStateView(ScopedView):
    @extend_schema(operation_id="get_user_state", responses=StateOutSerializer)
    def get(self, request: Request, app_name: str, user_id: str) -> Response:
        """The user's shared state (``user:`` keys, without the prefix) and its version."""
        state, version = services.get_user_state(app_name=app_name, user_id=user_id)
        return Response({"state": state, "version": version})

    @extend_schema(operation_id="update_user_state", request=StatePatchSerializer, responses=StateOutSerializer)
    def patch(self, request: Request, app_name: str, user_id: str) -> Response:
        """Merge keys into the user's shared state at ``expected_version``."""
        data = valid(StatePatchSerializer, request.data)
        try:
            services.do_patch_user_state(
                app_name=app_name, user_id=user_id, patch=data["state"], expected_version=data["expected_version"]
            )
        except services.SessionError as error:
            _raise_for(
                error,
                current_version=lambda: services.get_user_state(app_name=app_name, user_id=user_id)[1],
                stale=_STALE_STATE,
            )
        return self.get(request, app_name, user_id)


class AppStateView(ScopedView):
    @extend_schema(operation_id="get_app_state", responses=StateOutSerializer)
    def get(self, request: Request, app_name: str) -> Response:
        """The app's shared state (``app:`` keys, without the prefix) and its version."""
        state, version = services.get_app_state(app_name=app_name)
        return Response({"state": state, "version": version})

    @extend_schema(operation_id="update_app_state", request=StatePatchSerializer, responses=StateOutSerializer)
    def patch(self, request: Request, app_name: str) -> Response:
        """Merge keys into the app's shared state at ``expected_version``."""
        check_whole_app(self.scope.only_user, app_name, "change the app's state")
        data = valid(StatePatchSerializer, request.data)
        try:
            services.do_patch_app_state(
                app_name=app_name, patch=data["state"], expected_version=data["expected_version"]
            )
        except services.SessionError as error:
            _raise_for(error, current_version=lambda: services.get_app_state(app_name=app_name)[1], stale=_STALE_STATE)
        return self.get(request, app_name)


def _json(text: str) -> dict[str, Any]:
    return json.loads(text)


def _session_version(keys: dict[str, str]) -> int | None:
    head = services.get_session_head(**keys)
    return head.version if head else None
