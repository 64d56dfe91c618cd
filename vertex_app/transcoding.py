"""Vertex AI's gRPC methods as the REST calls they stand for, so both wires share one surface.

Google defines each RPC of its APIs by an HTTP rule (``google.api.http``: a verb,
a path over a field of the request, the field sent as the body; AIP-127), and
its servers answer REST by transcoding it to the RPC. Cognizes goes the other
way: a gRPC call becomes the REST request its rule names, served by the very
views REST clients reach, so keys, scopes, validation and Google's errors are the
surface's and nothing here owns a rule. The rules below are the v1beta1 protos'
own (the REST transport of ``google-cloud-aiplatform`` lists the same paths).

Requests and responses are proto3 JSON on the REST side (``json_format``; the
surface takes snake_case names as any proto3 JSON parser does): a field left at
its default is not sent, as a REST client would not send it.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlencode

from django.urls import Resolver404, resolve
from google.cloud.aiplatform_v1beta1.types import memory_bank, memory_bank_service, session, session_service
from google.longrunning import operations_pb2
from google.protobuf import json_format
from google.protobuf.message import Message
from rest_framework.renderers import JSONRenderer

from cognizes.infra.proto_json import merge_fast, parse_dict
from vertex_app import errors
from vertex_app.wire import camel

SESSIONS = "google.cloud.aiplatform.v1beta1.SessionService"
MEMORIES = "google.cloud.aiplatform.v1beta1.MemoryBankService"
OPERATIONS = "google.longrunning.Operations"
VERSION = "v1beta1"


@dataclass(frozen=True)
class Rule:
    """How one RPC is written as a REST call."""

    verb: str
    path: str
    """The path after the version: one ``{field}`` (dotted for a nested one) and what follows it."""
    request: type[Message]
    response: type[Message]
    body: str | None = None
    """The request field sent as the JSON body, ``*`` for every field not in the path; the rest go in the query."""

    @property
    def path_field(self) -> str:
        return self.path[1 : self.path.index("}")]


@dataclass(frozen=True)
class HttpCall:
    verb: str
    path: str
    query: str
    body: bytes


class BadRequest(ValueError):
    """The request cannot be written as its REST call (INVALID_ARGUMENT)."""


def _pb(message: Any) -> type[Message]:
    return message.pb()  # proto-plus's wrapper class → the protobuf class it wraps


_S, _M, _OP = session_service, memory_bank_service, operations_pb2.Operation
RULES: dict[str, dict[str, Rule]] = {
    SESSIONS: {
        "CreateSession": Rule("POST", "{parent}/sessions", _pb(_S.CreateSessionRequest), _OP, body="session"),
        "GetSession": Rule("GET", "{name}", _pb(_S.GetSessionRequest), _pb(session.Session)),
        "ListSessions": Rule("GET", "{parent}/sessions", _pb(_S.ListSessionsRequest), _pb(_S.ListSessionsResponse)),
        "UpdateSession": Rule(
            "PATCH", "{session.name}", _pb(_S.UpdateSessionRequest), _pb(session.Session), body="session"
        ),
        "DeleteSession": Rule("DELETE", "{name}", _pb(_S.DeleteSessionRequest), _OP),
        "ListEvents": Rule("GET", "{parent}/events", _pb(_S.ListEventsRequest), _pb(_S.ListEventsResponse)),
        "AppendEvent": Rule(
            "POST", "{name}:appendEvent", _pb(_S.AppendEventRequest), _pb(_S.AppendEventResponse), body="event"
        ),
    },
    MEMORIES: {
        "CreateMemory": Rule("POST", "{parent}/memories", _pb(_M.CreateMemoryRequest), _OP, body="memory"),
        "GetMemory": Rule("GET", "{name}", _pb(_M.GetMemoryRequest), _pb(memory_bank.Memory)),
        "UpdateMemory": Rule("PATCH", "{memory.name}", _pb(_M.UpdateMemoryRequest), _OP, body="memory"),
        "ListMemories": Rule("GET", "{parent}/memories", _pb(_M.ListMemoriesRequest), _pb(_M.ListMemoriesResponse)),
        "DeleteMemory": Rule("DELETE", "{name}", _pb(_M.DeleteMemoryRequest), _OP),
        "GenerateMemories": Rule("POST", "{parent}/memories:generate", _pb(_M.GenerateMemoriesRequest), _OP, body="*"),
        "RetrieveMemories": Rule(
            "POST",
            "{parent}/memories:retrieve",
            _pb(_M.RetrieveMemoriesRequest),
            _pb(_M.RetrieveMemoriesResponse),
            body="*",
        ),
    },
    OPERATIONS: {
        "GetOperation": Rule("GET", "{name}", operations_pb2.GetOperationRequest, _OP),
    },
}
WAIT_OPERATION = Rule("GET", "{name}", operations_pb2.WaitOperationRequest, _OP)
"""``WaitOperation``: its operation's GET, asked again until it is done (the server's loop, not a REST call)."""


def rule_for(method: str) -> Rule | None:
    """The rule of ``/package.Service/Method``, or None for a method not served."""
    service, _, name = method.lstrip("/").rpartition("/")
    if (service, name) == (OPERATIONS, "WaitOperation"):
        return WAIT_OPERATION
    return RULES.get(service, {}).get(name)


_NOT_IN_A_NAME = re.compile(r"[\x00-\x1f?#]")
"""What a resource name may not hold: control characters, and what would end the path (``?``, ``#``)."""


def http_call(rule: Rule, request: Message) -> HttpCall:
    """The REST request ``rule`` writes ``request`` as."""
    head, _, nested = rule.path_field.partition(".")
    resource = getattr(getattr(request, head), nested) if nested else getattr(request, head)
    if not resource:
        raise BadRequest(f"'{rule.path_field}' is required.")
    if _NOT_IN_A_NAME.search(resource) or resource.startswith("/"):
        raise BadRequest(f"'{rule.path_field}' is not a resource name: {resource!r}.")
    try:
        fields = json_format.MessageToDict(request, preserving_proto_field_name=True)
    except (ValueError, json_format.Error) as error:  # a Struct holding NaN or Infinity, which JSON cannot write
        raise BadRequest(f"The request cannot be read: {error}.") from None
    body: dict[str, Any] | None = None
    if rule.body == "*":
        body = {key: value for key, value in fields.items() if key != head}
    elif rule.body is not None:
        body = fields.get(rule.body, {})
    query = {
        camel(key): value
        for key, value in fields.items()
        if key != head and rule.body != "*" and key != rule.body and not isinstance(value, (dict, list))
    }
    path = f"/{VERSION}/{resource}{rule.path[rule.path.index('}') + 1 :]}"
    if not _served(path):
        raise BadRequest(f"'{rule.path_field}' {resource!r} is not a resource name this method takes.")
    return HttpCall(rule.verb, path, urlencode(query), json.dumps(body).encode() if body is not None else b"")


def _served(path: str) -> bool:
    """Whether the surface has a view for ``path`` (else the name is not one of the method's resources)."""
    try:
        return resolve(path).func is not errors.not_found
    except Resolver404:
        return False


def response_message(rule: Rule, body: bytes, data: Any = None) -> Message:
    """The RPC's response from the REST call's JSON ``body`` (fields the proto lacks, such as ADK's extras,
    dropped), read as ``json_format`` reads it (by ``cognizes.infra.proto_json``'s shortcut).

    ``data``, when given, is what the view answered as ``body``: read directly if it holds only JSON's own
    types (the renderer would have written the same values), which saves decoding the text; else the body is
    read — written here if the view left it unwritten (``cognizes.access.renderers.DATA_ONLY``).
    """
    message = rule.response()
    if data is not None:
        if merge_fast(data, message):
            return message
        if not body:
            body = JSONRenderer().render(data)
    return parse_dict(json.loads(body) if body else {}, message)
