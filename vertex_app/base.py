"""What every view of the Vertex surface shares: keys, the engine, Google's errors, names.

A URL names ``reasoningEngines/{id}``, optionally under
``projects/{p}/locations/{l}/`` (project mode; the project and location are
not checked, as a self-hosted server has none). The engine is the app; the
caller's key is then checked by access's one scope check, so a key of
another app gets the same 404 as an engine that does not exist.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, ClassVar

from rest_framework.permissions import IsAuthenticated
from rest_framework.request import Request
from rest_framework.views import APIView

from cognizes.access.api import Scope, check_scope, check_url, parse_id
from cognizes.access.authentication import BearerKeyAuthentication
from vertex_app import errors, names, wire
from vertex_app.auth import GoogleApiKeyAuthentication
from vertex_app.services import get_engine_app


class VertexSurface(APIView):
    """Google's keys and errors, for every path of the surface (those without an engine too)."""

    schema = None  # Google's API: not part of Cognizes' own OpenAPI schema (vertex_app.reference documents it)
    rpcs: ClassVar[dict[str, str]] = {}
    """The gRPC method of ``transcoding.RULES`` each handler serves (``{"get": "GetSession"}``): the reference
    names the operation by it and documents it with that method's protobuf messages."""
    authentication_classes = [GoogleApiKeyAuthentication, BearerKeyAuthentication]
    permission_classes = [IsAuthenticated]

    def get_exception_handler(self) -> Any:
        return errors.error_handler


class VertexView(VertexSurface):
    """A path under ``reasoningEngines/{id}``: the engine's app, checked against the caller's key."""

    app_name: str
    engine_id: int
    only_user: str | None
    """For a key of one user: that user (engine-wide reads are narrowed to it)."""
    engine: str
    """The engine's resource name as the caller spelled it: names returned are used verbatim as paths."""

    def initial(self, request: Request, *args: Any, **kwargs: Any) -> None:
        super().initial(request, *args, **kwargs)
        check_url(request, kwargs)
        engine_id = int(kwargs["engine_id"])
        app_name = get_engine_app(engine_id) if engine_id < 2**63 else None
        if app_name is None:
            raise errors.NotFound(f"reasoningEngines/{engine_id} does not exist.")
        self.only_user = check_scope(request, app_name, None, write=False).only_user
        self.app_name = app_name
        self.engine_id = engine_id
        self.engine = names.engine(engine_id, project=kwargs.get("project"), location=kwargs.get("location"))

    def scope(self, user_id: str | None, *, write: bool) -> Scope:
        """The caller's scope for this user of the engine's app (404 for another user's key)."""
        return check_scope(self.request, self.app_name, user_id, write=write)


def operation(
    name: str,
    response: dict[str, Any] | None = None,
    *,
    kind: str | None = None,
    done: bool = True,
    metadata: dict[str, Any] | None = None,
    error: dict[str, Any] | None = None,
) -> dict[str, Any]:
    """A long-running operation as Google returns it; Cognizes' session and memory writes finish at once.

    ``kind`` is the message the response is, written as its ``@type`` as Google's
    servers do: gRPC clients unpack the response by it (a delete's is
    ``google.protobuf.Empty``, which ADK for Go waits for). ``metadata`` carries its
    own ``@type``; ``error`` (a ``google.rpc.Status``) stands instead of a response.
    """
    out: dict[str, Any] = {"name": name, "done": done}
    if metadata is not None:
        out["metadata"] = metadata
    if error is not None:
        return {**out, "error": error}
    if kind is not None:
        out["response"] = {"@type": names.type_url(kind), **(response or {})}
    elif response is not None:
        out["response"] = response
    return out


EMPTY = "google.protobuf.Empty"


def page(
    request: Request, rows: Any, field: str, resource: Callable[[Any], dict[str, Any]], *, query: Any = None
) -> dict[str, Any]:
    """One page of the ordered ``rows`` (a queryset or a list) as Google's lists answer: ``{field: […],
    "nextPageToken"}``, read from ``pageSize`` (1–1000, 100 by default) and ``pageToken`` of the query, or of ``query``
    (a search's body)."""
    query = request.query_params if query is None else query
    size = wire.integer(query.get("pageSize"), "pageSize", default=100, low=1, high=1000)
    offset = page_token(query.get("pageToken"))
    found = list(rows[offset : offset + size + 1])
    out: dict[str, Any] = {field: [resource(row) for row in found[:size]]}
    if len(found) > size:
        out["nextPageToken"] = str(offset + size)
    return out


def page_token(value: Any) -> int:
    """The offset a ``pageToken`` this server handed out stands for."""
    if value in (None, ""):
        return 0
    offset = parse_id(value)
    if offset is None or offset >= 10**12:
        raise errors.InvalidArgument("pageToken is not one this server gave out.")
    return offset
