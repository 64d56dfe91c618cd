"""Resource names of the Vertex surface, built and read in this one place.

Google's clients use the names the server returns verbatim as their next path,
so every name keeps the spelling of the engine the caller used: express
``reasoningEngines/{id}`` or project ``projects/{p}/locations/{l}/reasoningEngines/{id}``.
Cognizes' operations finish when they are returned, except generation, whose
operation is its consolidation job (``…/operations/generate-{job}``). Clients
also ask for an operation by its id alone, at the location
(``projects/{p}/locations/{l}/operations/{id}``, ADK for Java) or in express mode
(``operations/{id}``): the id says what it is, so no table of operations is kept.

An engine's app may be named, wherever Vertex takes an app name (a memory
scope's ``app_name``), by the app's name, the engine id, or the engine's
resource name in either spelling: Google's docs give ADK the engine id or its
resource name as ``app_name``.
"""

from __future__ import annotations

import re
import time

from cognizes.access.api import parse_id

_GENERATE = re.compile(r"^generate-([0-9]{1,18})$")
_ENGINE_OPERATION = re.compile(r"^engine-([0-9]{1,19})$")
_SESSION = re.compile(r"reasoningEngines/([0-9]+)/sessions/([^/:]+)$")
_ENGINE = re.compile(r"^(?:projects/[^/]+/locations/[^/]+/)?reasoningEngines/([0-9]{1,19})$")
TYPE_PREFIX = "type.googleapis.com/"
EXPRESS_PROJECT = "express"
EXPRESS_LOCATION = "us-central1"
"""The project and location of a name that must be a full one in express mode too: agentplatform reads the engine id
of a create's operation with ``^projects/[^/]+/locations/[^/]+/reasoningEngines/([^/]+)/operations/[^/]+$`` (and
``runtimes.update`` the engine's name likewise), so an express ``reasoningEngines/{id}`` fails it. Cognizes serves
every path under any project and location, so the name also works as the next path."""


def location_prefix(project: str | None, location: str | None) -> str:
    """What a name starts with: ``projects/{p}/locations/{l}/`` in project mode, nothing in express mode."""
    return f"projects/{project}/locations/{location}/" if project else ""


def engine(engine_id: int, *, project: str | None = None, location: str | None = None) -> str:
    return f"{location_prefix(project, location)}reasoningEngines/{engine_id}"


def session(engine_name: str, session_id: str) -> str:
    return f"{engine_name}/sessions/{session_id}"


def event(session_name: str, event_id: str) -> str:
    return f"{session_name}/events/{event_id}"


def memory(engine_name: str, memory_id: object) -> str:
    return f"{engine_name}/memories/{memory_id}"


def revision(memory_name: str, revision_id: int) -> str:
    return f"{memory_name}/revisions/{revision_id}"


def rag_corpus(prefix: str, corpus_id: object) -> str:
    """A RAG Engine corpus under ``location_prefix``'s prefix."""
    return f"{prefix}ragCorpora/{corpus_id}"


def rag_file(corpus_name: str, file_id: object) -> str:
    return f"{corpus_name}/ragFiles/{file_id}"


def operation(parent: str, operation_id: str | None = None) -> str:
    """An operation of ``parent``; a new id unless one is given."""
    return f"{parent}/operations/{operation_id or time.time_ns()}"


def full_engine(engine_id: int, *, project: str | None = None, location: str | None = None) -> str:
    """The engine's name with a project and location: the caller's, or ``EXPRESS_PROJECT``'s in express mode."""
    if not project:
        project, location = EXPRESS_PROJECT, EXPRESS_LOCATION
    return engine(engine_id, project=project, location=location)


def engine_operation(engine_name: str) -> str:
    """A new operation of a change to the engine itself (create, update): ``engine-{ns}``, which says that reading it
    answers the engine resource (the SDK builds its ``Runtime`` from the operation's ``response``)."""
    return operation(engine_name, f"engine-{time.time_ns()}")


def is_engine_operation(operation_id: str) -> bool:
    """Whether the id is one ``engine_operation`` handed out."""
    match = _ENGINE_OPERATION.match(operation_id)
    return match is not None and issued_operation(match.group(1))


def location_operation(operation_id: str, *, project: str | None = None, location: str | None = None) -> str:
    """An operation named by its id alone: ``projects/{p}/locations/{l}/operations/{id}``, or ``operations/{id}``."""
    return f"{location_prefix(project, location)}operations/{operation_id}"


def issued_operation(operation_id: str) -> bool:
    """Whether Cognizes could have handed out this id for an operation done when returned (a past nanosecond)."""
    issued = parse_id(operation_id)
    return issued is not None and issued <= time.time_ns()


def names_engine(value: str, *, engine_id: int, app_name: str) -> bool:
    """Whether ``value`` names this engine's app: the app's name, the engine id or the engine's resource name."""
    if value in (app_name, str(engine_id)):
        return True
    match = _ENGINE.match(value)
    return match is not None and match.group(1) == str(engine_id)


def type_url(message: str) -> str:
    """The ``@type`` of an ``Any`` holding ``message`` (``Session``, or a full name such as
    ``google.protobuf.Empty``)."""
    return TYPE_PREFIX + (message if "." in message else f"google.cloud.aiplatform.v1beta1.{message}")


def generate_operation(engine_name: str, job_id: int) -> str:
    return operation(engine_name, f"generate-{job_id}")


def generate_job(operation_id: str) -> int | None:
    """The consolidation job a generation operation id stands for, or None."""
    match = _GENERATE.match(operation_id)
    return int(match.group(1)) if match else None


def session_of(name: str, engine_id: int) -> str | None:
    """The session id in a session's resource name, if it is a session of this engine."""
    match = _SESSION.search(name)
    return match.group(2) if match and match.group(1) == str(engine_id) else None
