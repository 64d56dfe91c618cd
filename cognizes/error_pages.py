"""What Django answers for a request no view handled (bad Host, no route, a crash).

Each surface keeps its own error shape even here: the native API its
``{"error": {"code", "message", "details"}}``, the Vertex surface Google's
``{"error": {"code", "message", "status"}}`` (its clients read ``status``),
the admin and everything else Django's pages. The project picks by path, as
only it knows which surface serves which prefix.
"""

from __future__ import annotations

from django.http import HttpRequest, HttpResponse, JsonResponse
from django.views import defaults

from access.api import error_body
from vertex_app import errors as vertex_errors

API_PREFIX = "/api/"
VERTEX_PREFIXES = ("/v1/", "/v1beta1/")


def _json(request: HttpRequest, status: int, code: str, message: str) -> JsonResponse | None:
    if request.path.startswith(API_PREFIX):
        return JsonResponse(error_body(code, message), status=status)
    if request.path.startswith(VERTEX_PREFIXES):
        return JsonResponse(vertex_errors.body(status, message), status=status)
    return None


def bad_request(request: HttpRequest, exception: Exception | None = None) -> HttpResponse:
    """A request Django refused before any view (a Host outside ALLOWED_HOSTS, a suspicious operation)."""
    return _json(request, 400, "bad_request", "Bad request.") or defaults.bad_request(request, exception)


def not_found(request: HttpRequest, exception: Exception | None = None) -> HttpResponse:
    return _json(request, 404, "not_found", "Not found.") or defaults.page_not_found(request, exception)


def server_error(request: HttpRequest) -> HttpResponse:
    return _json(request, 500, "error", "Server error.") or defaults.server_error(request)
