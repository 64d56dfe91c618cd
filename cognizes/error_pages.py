"""Each surface's error shape, by path, for errors no view answers: the body limit's and Django's own.

The native API answers ``{"error": {"code", "message", "details"}}``, the Vertex
surface Google's ``{"error": {"code", "message", "status"}}`` (its clients read
``status``), A2A JSON-RPC's ``{"jsonrpc", "id", "error"}``; the admin and
everything else Django's pages. Only the project knows which surface serves
which prefix, so the table is here, once: ``cognizes.asgi`` gives it to the body
limit, and Django's handlers (a Host outside ALLOWED_HOSTS, no route, a crash)
read it too.
"""

from __future__ import annotations

from django.http import HttpRequest, HttpResponse, JsonResponse
from django.views import defaults

from cognizes.access.api import error_body
from cognizes.access.body_limit import ErrorBody
from runtime_app import a2a, mcp
from vertex_app import errors as vertex_errors

API_CODES = {
    400: "bad_request",
    404: "not_found",
    408: "request_timeout",
    413: "payload_too_large",
    500: "error",
    401: "not_authenticated",
    403: "permission_denied",
    503: "unavailable",
}  # early refusals (body_limit)

SURFACES: dict[str, ErrorBody] = {
    "/api/": lambda status, message: error_body(API_CODES[status], message),
    "/v1": vertex_errors.body,  # /v1/ and /v1beta1/
    "/upload/v1": vertex_errors.body,  # RAG Engine's file uploads
    a2a.PREFIX: a2a.error_body,
    mcp.PREFIX: mcp.error_body,
}
"""Path prefix → (HTTP status, message) → the JSON body that surface answers with."""


def _json(request: HttpRequest, status: int, message: str) -> JsonResponse | None:
    for prefix, body in SURFACES.items():
        if request.path.startswith(prefix):
            return JsonResponse(body(status, message), status=status)
    return None


def bad_request(request: HttpRequest, exception: Exception) -> HttpResponse:
    """A request Django refused before any view (a Host outside ALLOWED_HOSTS, a suspicious operation)."""
    return _json(request, 400, "Bad request.") or defaults.bad_request(request, exception)


def not_found(request: HttpRequest, exception: Exception | None = None) -> HttpResponse:
    return _json(request, 404, "Not found.") or defaults.page_not_found(request, exception)


def server_error(request: HttpRequest) -> HttpResponse:
    return _json(request, 500, "Server error.") or defaults.server_error(request)
