"""HTTP: run a registered agent for one turn of a session, whole or streamed (Server-Sent Events).

    POST /api/v1/apps/{app}/users/{user}/sessions/{id}/run/          -> {"events": [...]}
    POST /api/v1/apps/{app}/users/{user}/sessions/{id}/run/stream/   -> text/event-stream

The app must be in ``COGNIZES_AGENTS`` (runtime_app/agents.py); the caller's API key
must cover the app and user (``ScopedView``) and be read-write. A session that
does not exist yet is created. One turn per session at a time, across processes:
a second one is refused with 409 before anything is stored (a claim in Redis,
released when the turn ends, expiring after COGNIZES_RUN_TIMEOUT_SECONDS should
a process die mid-turn).
"""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator, Callable
from typing import Any

from asgiref.sync import async_to_sync
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiExample, extend_schema
from google.adk.agents.run_config import RunConfig, StreamingMode
from google.adk.errors._stale_session_error import StaleSessionError
from google.adk.events.event import Event
from google.adk.runners import Runner
from rest_framework import exceptions, serializers, status
from rest_framework.renderers import JSONRenderer
from rest_framework.request import Request
from rest_framework.response import Response

from cognizes.access import sse
from cognizes.access.api import Conflict, ScopedView, check_state_write, valid
from runtime_app import turns
from runtime_app.agents import UnknownAgent, get_runner
from sessions_app import services
from sessions_app.adk import event_json

logger = logging.getLogger(__name__)

STALE = "The session changed while this turn ran (another writer); its events so far are stored."


class RunSerializer(serializers.Serializer):
    message = serializers.CharField(
        required=False, trim_whitespace=False, help_text="The user's message as text (or give `content`)."
    )
    content = serializers.DictField(
        required=False, help_text="The user's message as an ADK/Gemini Content: {role: 'user', parts: [...]}."
    )
    state_delta = serializers.DictField(
        required=False, help_text="State to set with the message (session keys, app: and user: keys)."
    )

    def validate_message(self, value: str) -> str:
        try:
            return turns.check_message_text(value)
        except turns.InvalidMessage as error:
            raise serializers.ValidationError(str(error)) from error

    def validate(self, data: dict[str, Any]) -> dict[str, Any]:
        if ("message" in data) == ("content" in data):
            raise serializers.ValidationError("Give either `message` or `content`.")
        return data


class RunOutSerializer(serializers.Serializer):
    session_id = serializers.CharField()
    events = serializers.ListField(child=serializers.DictField(), help_text="The turn's ADK events, in order.")


class AgentFailed(exceptions.APIException):
    status_code = status.HTTP_502_BAD_GATEWAY
    default_detail = "The agent failed."
    default_code = "agent_failed"


def claim_turn(app_name: str, user_id: str, session_id: str) -> Callable[[], None]:
    """Claim the session for one turn, or 409."""
    try:
        return turns.claim_turn(app_name, user_id, session_id)
    except turns.SessionBusy as busy:
        raise Conflict(str(busy)) from busy


class _RunBase(ScopedView):
    def prepare(self, request: Request, app_name: str, user_id: str, session_id: str) -> tuple[Runner, dict[str, Any]]:
        """The app's Runner and ``run_async`` arguments, or a 4xx before anything runs."""
        try:
            runner = get_runner(app_name)
        except UnknownAgent as error:
            raise exceptions.NotFound(str(error)) from error
        for name, value in (("user_id", user_id), ("session_id", session_id)):
            try:
                services.check_key(name, value)
            except services.SessionError as error:
                raise exceptions.ValidationError({name: [str(error)]}) from error
        data = valid(RunSerializer, request.data)
        check_state_write(self.scope, data.get("state_delta"))
        try:
            message = turns.user_message(text=data.get("message"), content=data.get("content"))
        except turns.InvalidMessage as error:
            raise exceptions.ValidationError({error.field: [str(error)]}) from error
        arguments = {
            "user_id": user_id,
            "session_id": session_id,
            "new_message": message,
            "state_delta": data.get("state_delta") or None,
        }
        return runner, arguments


class RunView(_RunBase):
    """Run one turn and answer with all of its events once the agent is done."""

    @extend_schema(
        operation_id="run_agent",
        request=RunSerializer,
        responses={200: RunOutSerializer},
        examples=[OpenApiExample("A message", request_only=True, value={"message": "What's the weather in Paris?"})],
    )
    def post(self, request: Request, app_name: str, user_id: str, session_id: str) -> Response:
        runner, arguments = self.prepare(request, app_name, user_id, session_id)
        release = claim_turn(app_name, user_id, session_id)
        try:
            events = async_to_sync(_collect)(runner, arguments)
        except StaleSessionError as error:
            raise Conflict(STALE) from error
        except Exception as error:
            logger.exception("agent run failed: %s/%s/%s", app_name, user_id, session_id)
            raise AgentFailed(f"The agent failed: {type(error).__name__}: {error}") from error
        finally:
            release()
        return Response({"session_id": session_id, "events": [event_json(e) for e in events]})


class RunStreamView(_RunBase):
    """Run one turn and send its events as Server-Sent Events while the agent works.

    Messages: ``event`` ({"event": ADK event}; ``partial`` ones are streamed
    text, not stored), then ``done`` ({"session_id"}) or ``error``
    ({"error": {"code", "message"}}).
    """

    renderer_classes = [JSONRenderer, sse.EventStreamRenderer]

    @extend_schema(
        operation_id="run_agent_stream", request=RunSerializer, responses={(200, "text/event-stream"): OpenApiTypes.STR}
    )
    def post(self, request: Request, app_name: str, user_id: str, session_id: str):
        runner, arguments = self.prepare(request, app_name, user_id, session_id)
        release = claim_turn(app_name, user_id, session_id)
        return sse.response(_run_messages(runner, arguments, release))


async def _collect(runner: Runner, arguments: dict[str, Any]) -> list[Event]:
    return [event async for event in runner.run_async(**arguments)]


async def _run_messages(runner: Runner, arguments: dict[str, Any], release: Callable[[], None]) -> AsyncIterator[str]:
    """The turn's messages (``turns.stream_turn``: the turn finishes even if the client leaves)."""
    run_config = RunConfig(streaming_mode=StreamingMode.SSE)
    try:
        async for event in turns.stream_turn(runner, arguments, release, run_config=run_config):
            yield sse.message({"event": event_json(event)}, event="event")
        yield sse.message({"session_id": arguments["session_id"]}, event="done")
    except StaleSessionError:
        yield sse.message({"error": {"code": "conflict", "message": STALE}}, event="error")
    except Exception as error:
        logger.exception("agent run failed: %s/%s", runner.app_name, arguments["session_id"])
        failure = {"code": "agent_failed", "message": f"The agent failed: {type(error).__name__}: {error}"}
        yield sse.message({"error": failure}, event="error")
