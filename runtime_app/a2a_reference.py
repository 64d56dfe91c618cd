"""The A2A surface's OpenAPI reference (``/api/docs/a2a/``): every agent's card and JSON-RPC endpoint.

A2A is served by an ASGI application, not by Django views, so drf-spectacular
cannot see it; this document is read off what serves it instead: the paths,
headers and auth scheme of ``runtime_app.a2a``, the methods a2a-sdk's dispatcher
routes (A2A 1.0's and, with the 0.3 adapter, 0.3's), and A2A 1.0's protobuf
messages for the card, each method's params and its result.
"""

from __future__ import annotations

from functools import cache
from typing import Any, get_args

# First, before the 0.3 adapter, which a2a-sdk imports from it: the adapter imported first is a circle that fails.
from a2a.server.routes.jsonrpc_dispatcher import JsonRpcDispatcher

# isort: split
from a2a.compat.v0_3 import types as v03
from a2a.compat.v0_3.jsonrpc_adapter import JSONRPC03Adapter
from a2a.types import AgentCard, Message, Part, Role
from a2a.utils.constants import PROTOCOL_VERSION_0_3, PROTOCOL_VERSION_1_0, VERSION_HEADER
from google.protobuf.json_format import MessageToDict

from cognizes.infra.proto_schema import REF_PREFIX, ProtoSchemas, Schema
from runtime_app.a2a import CAPABILITIES, CARD_PATH, PREFIX, SCHEME, SECURITY, USER_HEADER, error_body
from runtime_app.agents import registered_apps

V10: dict[str, Any] = JsonRpcDispatcher.METHOD_TO_MODEL  # protobuf message classes
V03: dict[str, Any] = JSONRPC03Adapter.METHOD_TO_MODEL
[_SERVICE] = AgentCard.DESCRIPTOR.file.services_by_name.values()  # A2A 1.0's service: each method's result
_JSON = "application/json"


def _header(name: str) -> str:
    return "-".join(part.capitalize() for part in name.split("-"))  # x-user-id → X-User-Id, as clients write it


DESCRIPTION = f"""Every agent of `COGNIZES_AGENTS` is an [A2A](https://a2a-protocol.org) server: a2a-sdk's JSON-RPC \
2.0, ADK's `A2aAgentExecutor` on the app's Cognizes runner.

A context id is a Cognizes session id: the conversation's events, memory, tool audit and traces are that \
session's, readable through the native API. Tasks are stored in PostgreSQL per app and user, so any web process \
answers `tasks/get` (also after a restart), and one user never sees another's. One turn per context at a time: \
a second gets a JSON-RPC error and nothing is stored.

Calls carry a read-write Cognizes API key of the agent's app, `Authorization: Bearer <key>` \
(`manage.py create_api_key APP`); the user is the key's, or for a key of the whole app the \
`{_header(USER_HEADER)}` header's. The card is public, as A2A discovery is.

A2A 1.0's method names want `{VERSION_HEADER}: {PROTOCOL_VERSION_1_0}`; 0.3's take no header (or \
`{PROTOCOL_VERSION_0_3}`). Streaming methods answer Server-Sent Events and need the ASGI server (`make run`)."""


@cache
def document() -> dict[str, Any]:
    """The OpenAPI 3.0 document of the A2A endpoints."""
    schemas = ProtoSchemas()
    card = schemas.ref(AgentCard.DESCRIPTOR)
    apps = registered_apps()
    app = {
        "name": "app_name",
        "in": "path",
        "required": True,
        "description": "A registered agent's app.",
        "schema": {"type": "string", **({"enum": apps} if apps else {})},
    }
    scheme = SECURITY[SCHEME].http_auth_security_scheme
    paths = {
        f"{PREFIX}{{app_name}}/{CARD_PATH}": {
            "get": {
                "operationId": "getAgentCard",
                "summary": "Read the agent's card: its name, skills, URL and key.",
                "tags": ["Discovery"],
                "parameters": [app],
                "security": [],
                "responses": {
                    "200": {
                        "description": (
                            "A2A 1.0's card, with A2A 0.3's fields beside it (such as `url` and `protocolVersion`) "
                            "for 0.3 clients."
                        ),
                        "content": {_JSON: {"schema": card}},
                    }
                },
            }
        },
        f"{PREFIX}{{app_name}}/": {"post": _call(app)},
    }
    envelopes = _envelopes(schemas)  # before the components are listed: the envelopes use messages too
    return {
        "openapi": "3.0.3",
        "info": {"title": "Cognizes: A2A agents", "version": PROTOCOL_VERSION_1_0, "description": DESCRIPTION},
        "paths": paths,
        "components": {
            "schemas": {**dict(sorted(schemas.components.items())), **envelopes},
            "securitySchemes": {
                SCHEME: {"type": "http", "scheme": scheme.scheme.lower(), "description": scheme.description}
            },
        },
    }


def _call(app: Schema) -> dict[str, Any]:
    """``POST /a2a/{app}/``: one JSON-RPC call, answered as JSON or, for a streaming method, as Server-Sent Events."""
    refused = {
        "401": "No key, or not a valid one.",
        "404": "No such agent, or a key of another app.",
        "503": "PostgreSQL or Redis is unavailable; try again after Retry-After seconds.",
    }
    answer = {"$ref": REF_PREFIX + "JsonRpcResponse"}
    return {
        "operationId": "callAgent",
        "summary": "Call the agent over JSON-RPC: send a message, read, list or cancel tasks.",
        "description": _methods_table(),
        "tags": ["JSON-RPC"],
        "security": [{SCHEME: []}],
        "parameters": [
            app,
            {
                "name": _header(USER_HEADER),
                "in": "header",
                "schema": {"type": "string"},
                "description": "The user the call acts for, with a key of the whole app (a key of one user acts for "
                "its own).",
            },
            {
                "name": VERSION_HEADER,
                "in": "header",
                "schema": {"type": "string", "enum": [PROTOCOL_VERSION_0_3, PROTOCOL_VERSION_1_0]},
                "description": f"{PROTOCOL_VERSION_1_0} for A2A 1.0's method names; absent or {PROTOCOL_VERSION_0_3} "
                "for 0.3's.",
            },
        ],
        "requestBody": {
            "required": True,
            "content": {_JSON: {"schema": {"$ref": REF_PREFIX + "JsonRpcRequest"}, "examples": _examples()}},
        },
        "responses": {
            "200": {
                "description": "The method's result, or a JSON-RPC error (an unknown task, a busy context…). A key "
                f"of the wrong kind is one too, saying which key the call needs: -31403 for a read-only key, -32600 "
                f"for a key of the whole app without {_header(USER_HEADER)}.",
                "content": {
                    _JSON: {"schema": answer},
                    "text/event-stream": {
                        "schema": {
                            "type": "string",
                            "description": "For a streaming method: events whose data is each a JsonRpcResponse.",
                        }
                    },
                },
            },
            **{
                status: {
                    "description": f"{text} A JSON-RPC error with id null and code "
                    f"{error_body(int(status), text)['error']['code']}.",
                    "content": {_JSON: {"schema": answer}},
                }
                for status, text in refused.items()
            },
        },
    }


def _methods_table() -> str:
    """Each method with its params and result: A2A 1.0's from its messages, 0.3's by its params' name."""
    rows = ["| A2A 1.0 method | params | result |", "|---|---|---|"]
    for name, model in V10.items():
        result = _SERVICE.methods_by_name.get(name)
        streamed = " (stream)" if result is not None and result.server_streaming else ""
        rows.append(f"| `{name}`{streamed} | {model.DESCRIPTOR.name} | {result.output_type.name if result else ''} |")
    old = ", ".join(f"`{name}` ({_params_03(model)})" for name, model in V03.items())
    offers = {
        "No push notifications": CAPABILITIES.push_notifications,
        "No extended card": CAPABILITIES.extended_agent_card,
    }
    notes = [
        f"{what} (the card's capabilities say so): those methods answer a JSON-RPC error."
        for what, offered in offers.items()
        if not offered
    ]
    return "\n".join([*rows, "", f"A2A 0.3's methods take 0.3's params: {old}.", "", "\n\n".join(notes)])


def _params_03(model: type[Any]) -> str:
    """The name of a 0.3 call's params model ("A or B" for a union)."""
    field = model.model_fields.get("params")
    if field is None:
        return "no params"
    return " or ".join(kind.__name__ for kind in get_args(field.annotation) or [field.annotation])


def _envelopes(schemas: ProtoSchemas) -> dict[str, Schema]:
    """JSON-RPC 2.0's request and response around A2A's messages."""
    params = sorted({model.DESCRIPTOR.full_name: model for model in V10.values()}.items())
    results = sorted({m.output_type.full_name: m.output_type for m in _SERVICE.methods if m.name in V10}.items())
    rpc_id = {
        "description": "A string or an integer, echoed in the answer.",
        "oneOf": [{"type": "string"}, {"type": "integer"}],
    }
    return {
        "JsonRpcRequest": {
            "type": "object",
            "required": ["jsonrpc", "method"],
            "properties": {
                "jsonrpc": {"type": "string", "enum": ["2.0"]},
                "id": rpc_id,
                "method": {"type": "string", "enum": [*V03, *V10]},
                "params": {
                    "description": "The method's params (see the method table).",
                    "anyOf": [
                        *(schemas.ref(model.DESCRIPTOR) for _, model in params),
                        {"type": "object", "title": "A2A 0.3's params"},
                    ],
                },
            },
        },
        "JsonRpcResponse": {
            "type": "object",
            "required": ["jsonrpc"],
            "properties": {
                "jsonrpc": {"type": "string", "enum": ["2.0"]},
                "id": {**rpc_id, "nullable": True},
                "result": {
                    "description": "The method's result (see the method table).",
                    "anyOf": [
                        *(schemas.ref(descriptor) for _, descriptor in results),
                        {"type": "object", "title": "A2A 0.3's result"},
                    ],
                },
                "error": {
                    "type": "object",
                    "required": ["code", "message"],
                    "properties": {"code": {"type": "integer"}, "message": {"type": "string"}, "data": {}},
                },
            },
        },
    }


def _examples() -> dict[str, Any]:
    """A message sent and a task read, in each version's names, built with a2a-sdk's own types."""
    text = "I prefer Fahrenheit."
    old_message = v03.Message(role=v03.Role.user, message_id="m1", parts=[v03.Part(root=v03.TextPart(text=text))])
    old = {
        "message/send": V03["message/send"](id=1, params=v03.MessageSendParams(message=old_message)),
        "tasks/get": V03["tasks/get"](id=2, params=v03.TaskQueryParams(id="TASK_ID")),
    }
    new = {
        "SendMessage": V10["SendMessage"](
            message=Message(role=Role.ROLE_USER, message_id="m2", context_id="SESSION_ID", parts=[Part(text=text)])
        ),
        "GetTask": V10["GetTask"](id="TASK_ID"),
    }
    examples = {
        name: {"summary": f"A2A 0.3: {name}", "value": call.model_dump(by_alias=True, exclude_none=True, mode="json")}
        for name, call in old.items()
    }
    examples.update(
        {
            name: {
                "summary": f"A2A 1.0: {name}",
                "value": {"jsonrpc": "2.0", "id": n, "method": name, "params": MessageToDict(params)},
            }
            for n, (name, params) in enumerate(new.items(), start=3)
        }
    )
    return examples
