"""An app's agent as Agent Engine deploys one: ADK's class methods (``AdkApp``'s), on the app's Runner.

Google's SDK builds one method per entry of a deployed engine's
``spec.classMethods`` and sends its keyword arguments as ``input``. The list is
ADK's own (``google.adk.cli.cli_deploy._AGENT_ENGINE_CLASS_METHODS``, what
``adk deploy agent_engine`` advertises); each method does what ``AdkApp``'s of
that name does, on the Runner's services (Cognizes' PostgreSQL ones), and
answers in ``AdkApp``'s shapes: ``model_dump(mode="json")`` (snake_case), events
as ``event_json``. Where Cognizes differs from ``AdkApp``, it refuses rather
than guesses:

* a turn on a ``session_id`` the user has no session with is a ``NoSuchSession``
  (``AdkApp``'s runner fails on it too), so a caller cannot start a session
  under an id another user holds;
* ``create_session``'s ``ttl`` / ``expire_time`` are refused (Cognizes' runner
  gives its sessions COGNIZES_SESSION_TTL_SECONDS; Vertex's Sessions API sets one);
* ``async_add_session_to_memory`` takes the session as stored, by its ids: the
  events a caller sends along are not what the user said;
* ``streaming_agent_run_with_events``' ``artifacts`` are refused.

The surface translates the wire and checks the key (``Call.user_id``,
``Call.writes``); everything else is here.
"""

from __future__ import annotations

import copy
import json
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass
from typing import Any

from google.adk.agents.run_config import RunConfig
from google.adk.cli.cli_deploy import _AGENT_ENGINE_CLASS_METHODS
from google.adk.errors.already_exists_error import AlreadyExistsError
from google.adk.events.event import Event
from google.adk.runners import Runner
from google.adk.sessions.session import Session
from google.genai import types
from pydantic import BaseModel, ValidationError

from cognizes.infra.db_threads import run_in_db_thread
from runtime_app import turns
from sessions_app import services
from sessions_app.adk import event_json

FRAMEWORK = "google-adk"
CLASS_METHODS: list[dict[str, Any]] = copy.deepcopy(_AGENT_ENGINE_CLASS_METHODS)
_BY_NAME = {method["name"]: method for method in CLASS_METHODS}
STREAMING = ("stream", "async_stream")
_READS = {
    "get_session",
    "list_sessions",
    "search_memory",
    "load_artifact",
    "list_artifact_keys",
    "list_versions",
    "list_artifact_versions",
    "get_artifact_version",
}
UPSTREAM_SESSION_KEY = "agent_engine:upstream_session_id"
"""Where ``streaming_agent_run_with_events`` keeps the id a caller named when it makes a new session (as AdkApp)."""


class CallError(Exception):
    """A call that cannot be made; ``status`` is its HTTP status (400 unless said)."""

    status = 400

    def __init__(self, message: str, *, status: int | None = None) -> None:
        super().__init__(message)
        if status is not None:
            self.status = status


class NoSuchSession(CallError):
    status = 404


@dataclass(frozen=True)
class Call:
    """A class method and its checked input."""

    method: str
    api_mode: str
    user_id: str
    writes: bool
    input: dict[str, Any]

    @property
    def streams(self) -> bool:
        return self.api_mode in STREAMING


def check_call(method: Any, arguments: Any) -> Call:
    """The call ``method`` with ``arguments`` names, its input checked against the method's schema."""
    if not isinstance(method, str) or not method:
        raise CallError(f"classMethod is required: one of {', '.join(_BY_NAME)}.")
    spec = _BY_NAME.get(method)
    if spec is None:
        raise CallError(f"Unknown class method {method!r}: this engine's are {', '.join(_BY_NAME)}.")
    arguments = {} if arguments is None else arguments
    if not isinstance(arguments, dict):
        raise CallError(f"{method}: input must be a JSON object of its parameters.")
    if _has_nul(arguments):
        raise CallError(f"{method}: input may not contain NUL characters (PostgreSQL cannot store them).")
    _check(method, spec["parameters"], arguments)
    if method == "streaming_agent_run_with_events":
        arguments = _run_request(arguments["request_json"])
        if _has_nul(arguments):
            raise CallError(f"{method}: request_json may not contain NUL characters.")
        user_id = arguments["user_id"]
    elif method == "async_add_session_to_memory":
        session = arguments["session"]
        user_id = session.get("user_id", session.get("userId"))
        if not isinstance(session.get("id"), str) or not isinstance(user_id, str):
            raise CallError(f"{method}: session needs its 'id' and 'user_id' (a session as get_session returns it).")
    else:
        user_id = arguments["user_id"]
    _key("user_id", user_id, method)
    if arguments.get("session_id"):
        _key("session_id", arguments["session_id"], method)
    bare = method.removeprefix("async_")
    return Call(method=method, api_mode=spec["api_mode"], user_id=user_id, writes=bare not in _READS, input=arguments)


def written_state(call: Call) -> list[Any]:
    """The state ``call`` would store as given: create_session's ``state``, the state deltas of the events a turn
    seeds its session with; the surface checks them against the caller's key
    (``cognizes.access.api.check_state_write``)."""
    if call.method.removeprefix("async_") == "create_session":
        return [call.input.get("state")]
    seeded = call.input.get("events" if call.method == "streaming_agent_run_with_events" else "session_events")
    actions = [each.get("actions") for each in seeded if isinstance(each, dict)] if isinstance(seeded, list) else []
    return [
        delta
        for each in actions
        if isinstance(each, dict)
        for delta in (each.get("state_delta"), each.get("stateDelta"))
    ]


async def query(runner: Runner, call: Call) -> Any:
    """The answer of a method that does not stream, as JSON data."""
    name = call.method.removeprefix("async_")
    handler = _QUERIES.get(name)
    if handler is None:  # not reached: check_call knows the methods, the surface sends streams elsewhere
        raise CallError(f"{call.method} streams: call it with :streamQuery.")
    try:
        return _json(await handler(runner, call.user_id, call.input))
    except services.SessionError as error:  # state or ids the session service refuses
        raise CallError(f"{call.method}: {error}") from error


@dataclass
class Turn:
    """A turn that may start: its session claimed, its Runner arguments ready."""

    runner: Runner
    call: Call
    arguments: dict[str, Any]
    release: Callable[[], None]
    run_config: RunConfig | None
    scratch: bool
    """The session exists only for this turn (deleted once it ends)."""


async def start_turn(runner: Runner, call: Call) -> Turn:
    """Check the turn's message and session, make the session if the method makes one, and claim it.

    Refusals (``CallError``, ``turns.SessionBusy``) come before anything is stored.
    """
    sessions, app, user = runner.session_service, runner.app_name, call.user_id
    given = call.input
    envelope = call.method == "streaming_agent_run_with_events"
    message = given["message"]
    try:
        content = turns.user_message(text=message) if isinstance(message, str) else turns.user_message(content=message)
    except turns.InvalidMessage as error:
        raise CallError(f"{call.method}: message: {error}") from error
    run_config = _run_config(call) if not envelope else _labels(given.get("labels"))
    events = [_event(call.method, each) for each in given.get("session_events" if not envelope else "events") or []]
    session_id = given.get("session_id")
    if session_id and given.get("session_events") is not None:
        raise CallError(f"{call.method}: give session_id or session_events, not both.")
    state: dict[str, Any] | None = None
    if session_id:
        found = await sessions.get_session(app_name=app, user_id=user, session_id=session_id)
        if found is None and not envelope:
            raise NoSuchSession(
                f"{call.method}: user {user!r} has no session {session_id!r} "
                "(create_session makes one; without session_id the turn makes one)."
            )
        if found is None:
            session_id, state = None, {UPSTREAM_SESSION_KEY: session_id}
    scratch = not session_id and ((envelope and state is None) or given.get("session_events") is not None)
    if not session_id:
        made = await sessions.create_session(app_name=app, user_id=user, state=state)
        session_id = made.id
        for event in events:
            await sessions.append_event(made, event)
    try:
        release = turns.claim_turn(app, user, session_id)
    except turns.SessionBusy:
        if scratch:
            await sessions.delete_session(app_name=app, user_id=user, session_id=session_id)
        raise
    arguments: dict[str, Any] = {"user_id": user, "session_id": session_id, "new_message": content}
    authorizations = given.get("authorizations") or {} if envelope else {}
    if authorizations:  # ADK trims temp: keys before storage: the tokens are never stored
        arguments["state_delta"] = {f"temp:{key}": value["access_token"] for key, value in authorizations.items()}
    return Turn(runner=runner, call=call, arguments=arguments, release=release, run_config=run_config, scratch=scratch)


async def stream(turn: Turn) -> AsyncIterator[dict[str, Any]]:
    """The turn's output, one JSON object per event (``streaming_agent_run_with_events``: with its artifacts).

    Errors raised by the agent are raised here, after the events before them.
    """
    runner, arguments = turn.runner, turn.arguments

    async def after() -> None:
        if turn.scratch:
            await runner.session_service.delete_session(
                app_name=runner.app_name, user_id=arguments["user_id"], session_id=arguments["session_id"]
            )

    envelope = turn.call.method == "streaming_agent_run_with_events"
    async for event in turns.stream_turn(runner, arguments, turn.release, run_config=turn.run_config, after=after):
        if envelope:
            yield {
                "events": [event_json(event)],
                "artifacts": await _artifacts(runner, arguments, event),
                "session_id": arguments["session_id"],
            }
        else:
            yield event_json(event)


async def _get_session(runner: Runner, user: str, given: dict[str, Any]) -> Session:
    session = await runner.session_service.get_session(
        app_name=runner.app_name, user_id=user, session_id=given["session_id"]
    )
    if session is None:
        raise NoSuchSession(f"Session {given['session_id']!r} of user {user!r} does not exist.")
    return session


async def _list_sessions(runner: Runner, user: str, given: dict[str, Any]) -> Any:
    return await runner.session_service.list_sessions(app_name=runner.app_name, user_id=user)


async def _create_session(runner: Runner, user: str, given: dict[str, Any]) -> Session:
    if given.get("ttl") or given.get("expire_time"):
        raise CallError(
            "create_session: ttl and expire_time are not taken here; sessions live for "
            "COGNIZES_SESSION_TTL_SECONDS (or set expireTime through Vertex's Sessions API)."
        )
    session_id = given.get("session_id")
    if session_id:
        try:
            services.check_session_id(session_id)
        except services.SessionError as error:
            raise CallError(f"create_session: {error}") from error
        # Vertex names a session by its id alone: one session per id in the engine, whichever user's.
        if await run_in_db_thread(services.get_session_users, app_name=runner.app_name, session_id=session_id, limit=1):
            raise CallError(f"Session {session_id!r} already exists.", status=409)
    try:
        return await runner.session_service.create_session(
            app_name=runner.app_name, user_id=user, state=given.get("state"), session_id=session_id or None
        )
    except AlreadyExistsError as error:
        raise CallError(str(error), status=409) from error


async def _delete_session(runner: Runner, user: str, given: dict[str, Any]) -> None:
    await _get_session(runner, user, given)
    await runner.session_service.delete_session(app_name=runner.app_name, user_id=user, session_id=given["session_id"])


async def _add_session_to_memory(runner: Runner, user: str, given: dict[str, Any]) -> None:
    session = await _get_session(runner, user, {"session_id": given["session"]["id"]})
    await _memory(runner).add_session_to_memory(session)


async def _search_memory(runner: Runner, user: str, given: dict[str, Any]) -> Any:
    return await _memory(runner).search_memory(app_name=runner.app_name, user_id=user, query=given["query"])


def _artifact_call(name: str, *parameters: str) -> Callable[..., Any]:
    """A method of the Runner's artifact service, with the app and user and the method's own parameters."""

    async def call(runner: Runner, user: str, given: dict[str, Any]) -> Any:
        service = runner.artifact_service
        if service is None:
            raise CallError(f"async_{name}: this agent's Runner has no artifact service.")
        arguments = {key: given[key] for key in parameters if given.get(key) is not None}
        if "artifact" in arguments:
            arguments["artifact"] = _part(arguments["artifact"])
        try:
            return await getattr(service, name)(app_name=runner.app_name, user_id=user, **arguments)
        except ValueError as error:  # ADK's InputValidationError: a filename or id it cannot store
            raise CallError(f"async_{name}: {error}") from error

    return call


_QUERIES: dict[str, Callable[[Runner, str, dict[str, Any]], Any]] = {
    "get_session": _get_session,
    "list_sessions": _list_sessions,
    "create_session": _create_session,
    "delete_session": _delete_session,
    "add_session_to_memory": _add_session_to_memory,
    "search_memory": _search_memory,
    "save_artifact": _artifact_call("save_artifact", "filename", "artifact", "session_id", "custom_metadata"),
    "load_artifact": _artifact_call("load_artifact", "filename", "session_id", "version"),
    "list_artifact_keys": _artifact_call("list_artifact_keys", "session_id"),
    "delete_artifact": _artifact_call("delete_artifact", "filename", "session_id"),
    "list_versions": _artifact_call("list_versions", "filename", "session_id"),
    "list_artifact_versions": _artifact_call("list_artifact_versions", "filename", "session_id"),
    "get_artifact_version": _artifact_call("get_artifact_version", "filename", "session_id", "version"),
}


def _memory(runner: Runner) -> Any:
    if runner.memory_service is None:
        raise CallError("This agent's Runner has no memory service.")
    return runner.memory_service


def _json(value: Any) -> Any:
    """JSON data as AdkApp serialises its answers (``model_dump(mode="json")``)."""
    if isinstance(value, BaseModel):
        return value.model_dump(mode="json")
    if isinstance(value, list):
        return [_json(item) for item in value]
    return value


def _part(value: Any) -> types.Part:
    if isinstance(value, str):
        return types.Part(text=value)
    try:
        return types.Part.model_validate(value)
    except ValidationError as error:
        raise CallError(f"async_save_artifact: artifact is not a Part: {error.errors()[0]['msg']}") from None


def _event(method: str, value: Any) -> Event:
    try:
        return Event.model_validate(value)
    except ValidationError as error:
        raise CallError(f"{method}: an event is not an ADK event: {error.errors()[0]['msg']}") from None


def _run_config(call: Call) -> RunConfig | None:
    given = call.input.get("run_config")
    if not given:
        return None
    try:
        return RunConfig.model_validate(given)
    except ValidationError as error:
        raise CallError(f"{call.method}: run_config: {error.errors()[0]['msg']}") from None


def _labels(labels: Any) -> RunConfig | None:
    if not labels or "labels" not in RunConfig.model_fields:
        return None
    if not isinstance(labels, dict) or not all(isinstance(v, str) for v in labels.values()):
        raise CallError("streaming_agent_run_with_events: labels map names to strings.")
    return RunConfig(labels=labels)


async def _artifacts(runner: Runner, arguments: dict[str, Any], event: Event) -> list[dict[str, Any]]:
    """The artifacts the event saved, each version's Part, as AdkApp's ``_StreamingRunResponse`` carries them."""
    delta = event.actions.artifact_delta if event.actions else None
    if not delta or runner.artifact_service is None:
        return []
    out = []
    for filename, version in delta.items():
        part = await runner.artifact_service.load_artifact(
            app_name=runner.app_name,
            user_id=arguments["user_id"],
            session_id=arguments["session_id"],
            filename=filename,
            version=version,
        )
        out.append({"file_name": filename, "versions": [{"version": version, "data": _json(part)}]})
    return out


def _run_request(text: str) -> dict[str, Any]:
    """``streaming_agent_run_with_events``' ``request_json``: AdkApp's ``_StreamRunRequest``, in either spelling."""
    method = "streaming_agent_run_with_events"
    try:
        request = json.loads(text)
    except ValueError:
        raise CallError(f"{method}: request_json is not JSON.") from None
    if not isinstance(request, dict):
        raise CallError(f"{method}: request_json must be a JSON object.")
    known = {
        "message",
        "events",
        "artifacts",
        "authorizations",
        "user_id",
        "userId",
        "session_id",
        "sessionId",
        "labels",
    }
    unknown = sorted(set(request) - known)
    if unknown:
        raise CallError(f"{method}: request_json has unknown fields {', '.join(unknown)}.")
    if request.get("artifacts"):
        raise CallError(f"{method}: artifacts are not taken with the request; save them with async_save_artifact.")
    out: dict[str, Any] = {
        "user_id": request.get("user_id") or request.get("userId"),
        "session_id": request.get("session_id") or request.get("sessionId"),
        "message": request.get("message"),
        "events": request.get("events"),
        "authorizations": request.get("authorizations") or {},
        "labels": request.get("labels"),
    }
    _check(
        method,
        {
            "type": "object",
            "required": ["user_id", "message"],
            "properties": {
                "user_id": {"type": "string"},
                "session_id": {"type": "string", "nullable": True},
                "message": {"type": "object"},
                "events": {"type": "array", "nullable": True},
                "authorizations": {"type": "object"},
                "labels": {"type": "object", "nullable": True},
            },
        },
        out,
    )
    for key, value in out["authorizations"].items():
        if not isinstance(value, dict) or not isinstance(value.get("access_token"), str):
            raise CallError(f"{method}: authorizations[{key!r}] needs an access_token string.")
    return out


_TYPES: dict[str, Callable[[Any], bool]] = {
    "string": lambda v: isinstance(v, str),
    "object": lambda v: isinstance(v, dict),
    "array": lambda v: isinstance(v, list),
    "integer": lambda v: isinstance(v, int) and not isinstance(v, bool),
}


def _check(method: str, schema: dict[str, Any], arguments: dict[str, Any]) -> None:
    """``arguments`` against the method's parameter schema (ADK's: types, ``nullable``, ``anyOf``, ``required``)."""
    properties = schema.get("properties", {})
    unknown = sorted(set(arguments) - set(properties))
    if unknown:
        raise CallError(
            f"{method} takes no parameter {', '.join(map(repr, unknown))}; its parameters are {', '.join(properties)}."
        )
    for name in schema.get("required", []):
        if arguments.get(name) is None:
            raise CallError(f"{method}: {name} is required.")
    for name, value in arguments.items():
        rule = properties[name]
        if value is None and (rule.get("nullable") or name not in schema.get("required", [])):
            continue
        options = rule.get("anyOf", [rule])
        if not any(_TYPES.get(option.get("type"), lambda v: True)(value) for option in options):
            wanted = " or ".join(str(option.get("type")) for option in options)
            raise CallError(f"{method}: {name} must be {'an' if wanted[0] in 'aeiou' else 'a'} {wanted}.")


def _has_nul(value: Any) -> bool:
    if isinstance(value, str):
        return "\x00" in value
    if isinstance(value, dict):
        return any(_has_nul(key) or _has_nul(item) for key, item in value.items())
    if isinstance(value, list):
        return any(_has_nul(item) for item in value)
    return False


def _key(name: str, value: str, method: str) -> None:
    try:
        services.check_key(name, value)
    except services.SessionError as error:
        raise CallError(f"{method}: {error}") from error
