"""The Vertex surface's OpenAPI reference (``/api/docs/vertex/``), read off the code that serves it.

Paths are ``vertex_app.urls``' patterns written out, operations the HTTP methods
each view implements, summaries the first line of each method's docstring. A
method that is one of Google's RPCs (the view's ``rpcs``) is named for it and
typed by its rule and protobuf messages (``transcoding.RULES``, the very rules
the gRPC server transcodes by), so a route, a field or an RPC added to the code
is in the reference without anyone writing it there.
"""

from __future__ import annotations

import inspect
import re
import sys
from functools import cache
from typing import Any

from django.core.exceptions import ImproperlyConfigured

from cognizes.infra.proto_schema import REF_PREFIX, WELL_KNOWN, ProtoSchemas, Schema
from vertex_app import errors, urls
from vertex_app.auth import GoogleApiKeyAuthentication
from vertex_app.base import VertexSurface
from vertex_app.transcoding import RULES, VERSION, Rule

METHODS = ("get", "put", "post", "patch", "delete")
_NAMED = re.compile(r"\(\?P<(\w+)>([^()]*)\)")
_OPTIONAL = re.compile(r"\(\?:([^()]*)\)\?")
_PLAIN = re.compile(r"[\w/{}:.-]+")
_RPCS: dict[str, tuple[str, Rule]] = {
    name: (service, rule) for service, rules in RULES.items() for name, rule in rules.items()
}
_ERROR = "GoogleError"
_JSON = "application/json"

DESCRIPTION = f"""Google's Vertex AI Agent Engine REST API ({VERSION}: Sessions, Memory Bank, deployed agents' \
`:query` and `:streamQuery`, operations) as Cognizes \
serves it, on the same sessions and memories as the native API. An engine is an app: \
`cognizes vertex_engine APP` prints its id; an engine a client creates (`POST reasoningEngines`) is a new app, \
owned by the app of the key that created it.

Paths are shown in project form. The express form, `/{VERSION}/reasoningEngines/{{engine_id}}/…` (no project or \
location), and the GA version, `/v1/` instead of `/{VERSION}/`, reach the same calls; the project and location are \
not checked.

Authenticate with a Cognizes API key: `{GoogleApiKeyAuthentication.header}: <key>` (express mode, also \
`?{GoogleApiKeyAuthentication.query}=<key>`) or `Authorization: Bearer <key>` (project mode). A key sees only its \
app's engine and those its app created (and its user); anything else is 404. Errors are Google's: \
`{{"error": {{"code", "message", "status"}}}}`.

The Agent Registry (`agentregistry.googleapis.com`, what ADK's `AgentRegistry` reads) is served at \
`/v1/projects/{{project}}/locations/{{location}}/agents`, `…/mcpServers`, `…/bindings`: the key's app's agent, with \
the A2A card it serves, and its MCP servers.

Operations named for an RPC take and return that RPC's protobuf messages as proto3 JSON, and are served over gRPC \
too (`cognizes serve_grpc`)."""


def path_of(regex: str) -> tuple[str, dict[str, str]]:
    """A route's path in project form (``(?P<id>…)`` as ``{id}``, the optional project part present, a custom
    method's optional ``/`` left out: ``{name}:execute``, as the proto spells it), and each parameter's pattern."""
    parameters = dict(_NAMED.findall(regex))
    path = regex.removeprefix("^").removesuffix("$").replace("v1(?:beta1)?", VERSION).replace("/?:", ":")
    path = "/" + _OPTIONAL.sub(r"\1", _NAMED.sub(r"{\1}", path))
    if not _PLAIN.fullmatch(path):
        raise ImproperlyConfigured(f"The Vertex route {regex!r} is not a path the reference can write out.")
    return path, parameters


@cache
def document() -> dict[str, Any]:
    """The OpenAPI 3.0 document of every Vertex route (not the catch-all 404, which has no view class)."""
    schemas = ProtoSchemas()
    paths: dict[str, dict[str, Any]] = {}
    tags: dict[str, str] = {}
    taken: set[str] = set()
    for route in urls.urlpatterns:
        view = getattr(route.callback, "view_class", None)
        if view is None:
            continue
        path, patterns = path_of(route.pattern.regex.pattern)
        parameters = [
            {"name": name, "in": "path", "required": True, "schema": {"type": "string", "pattern": f"^{p}$"}}
            for name, p in patterns.items()
        ]
        tag = _tag(view, tags)
        paths[path] = {
            method: _operation(view, method, parameters, tag, schemas, taken)
            for method in METHODS
            if hasattr(view, method)
        }
    schemas.components[_ERROR] = _error_schema()
    header, query = GoogleApiKeyAuthentication.header, GoogleApiKeyAuthentication.query
    security_schemes = {
        "googleApiKey": {"type": "apiKey", "in": "header", "name": header, "description": "A Cognizes API key."},
        "googleApiKeyQuery": {"type": "apiKey", "in": "query", "name": query, "description": "A Cognizes API key."},
        "bearerKey": {"type": "http", "scheme": "bearer", "description": "A Cognizes API key, as a bearer token."},
    }
    return {
        "openapi": "3.0.3",
        "info": {"title": "Cognizes: Vertex AI Agent Engine API", "version": VERSION, "description": DESCRIPTION},
        "tags": [{"name": name, "description": description} for name, description in tags.items()],
        "security": [{name: []} for name in security_schemes],
        "paths": paths,
        "components": {"schemas": dict(sorted(schemas.components.items())), "securitySchemes": security_schemes},
    }


def _tag(view: type[VertexSurface], tags: dict[str, str]) -> str:
    """The section of the view's module (``vertex_app.sessions`` → Sessions, ``agent_registry`` → Agent registry),
    described by its docstring's head."""
    module = sys.modules[view.__module__]
    name = module.__name__.rpartition(".")[2].replace("_", " ").capitalize()
    tags.setdefault(name, (inspect.getdoc(module) or name).split("\n\n")[0].replace("\n", " "))
    return name


def _operation(
    view: type[VertexSurface], method: str, parameters: list[Schema], tag: str, schemas: ProtoSchemas, taken: set[str]
) -> dict[str, Any]:
    """One HTTP method of a view: an RPC's, typed by its messages, or an object in, an object out."""
    doc = inspect.getdoc(getattr(view, method))
    if not doc:
        raise ImproperlyConfigured(f"{view.__name__}.{method} has no docstring (its first line is the summary).")
    summary, _, more = doc.partition("\n")
    operation: dict[str, Any] = {"tags": [tag], "summary": summary, "parameters": list(parameters)}
    description = [inspect.getdoc(view) or "", more.strip()]
    request: Schema | None = {"type": "object"} if method in ("post", "put", "patch") else None
    response: Schema = {"type": "object"}
    rpc = view.rpcs.get(method)
    base = view.__name__.removesuffix("View")
    if rpc is None:
        operation["operationId"] = f"{method}{base}"
    else:
        if rpc not in _RPCS:
            raise ImproperlyConfigured(f"{view.__name__}.rpcs names {rpc!r}, which is not in transcoding.RULES.")
        service, rule = _RPCS[rpc]
        operation["operationId"] = rpc if rpc not in taken else f"{rpc}_{base}"  # one RPC, several bindings
        description.append(f"gRPC: `{service}/{rpc}`.")
        operation["parameters"] += _query(rule, schemas)
        request, response = _body(rule, schemas), schemas.ref(rule.response.DESCRIPTOR)
    taken.add(operation["operationId"])
    operation["description"] = "\n\n".join(part for part in description if part)
    if request is not None:
        operation["requestBody"] = {"required": True, "content": {_JSON: {"schema": request}}}
    operation["responses"] = {
        "200": {"description": "Done.", "content": {_JSON: {"schema": response}}},
        "default": {"description": "Google's error.", "content": {_JSON: {"schema": {"$ref": REF_PREFIX + _ERROR}}}},
    }
    return operation


def _query(rule: Rule, schemas: ProtoSchemas) -> list[Schema]:
    """The request's fields a REST call sends in the query: neither the path's nor the body's, and plain values."""
    head = rule.path_field.partition(".")[0]
    if rule.body == "*":
        return []
    fields = [
        f
        for f in rule.request.DESCRIPTOR.fields
        if f.name not in (head, rule.body)
        and not f.is_repeated
        and (f.message_type is None or WELL_KNOWN.get(f.message_type.full_name, {}).get("type") == "string")
    ]
    return [{"name": f.json_name, "in": "query", "schema": schemas.field(f)} for f in fields]


def _body(rule: Rule, schemas: ProtoSchemas) -> Schema | None:
    """The request body's schema: one field of the request, or every field not in the path (``*``)."""
    descriptor = rule.request.DESCRIPTOR
    if rule.body is None:
        return None
    if rule.body == "*":
        return schemas.message(descriptor, without=(rule.path_field.partition(".")[0],))
    return schemas.field(descriptor.fields_by_name[rule.body])


def _error_schema() -> Schema:
    status: Schema = {"type": "string", "description": "Google's status name (gRPC's code)."}
    return {
        "type": "object",
        "properties": {
            "error": {
                "type": "object",
                "properties": {
                    "code": {"type": "integer", "description": "The HTTP status."},
                    "message": {"type": "string"},
                    "status": status,
                },
            }
        },
        "example": errors.body(404, "Session 123 does not exist."),
    }
