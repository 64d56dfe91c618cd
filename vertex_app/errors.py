"""Errors in Google's shape: ``{"error": {"code", "message", "status"}}``.

Google's clients read ``code`` and ``status`` (ADK turns a 404 on get into None),
so every failure of the Vertex surface, DRF's own included, is reshaped here.
"""

from __future__ import annotations

from typing import Any

from django.http import Http404, JsonResponse
from django.views.decorators.csrf import csrf_exempt
from rest_framework import exceptions
from rest_framework.response import Response
from rest_framework.views import exception_handler

from cognizes.access.outages import as_unavailable

STATUS = {
    400: "INVALID_ARGUMENT",
    401: "UNAUTHENTICATED",
    403: "PERMISSION_DENIED",
    404: "NOT_FOUND",
    405: "METHOD_NOT_ALLOWED",
    408: "DEADLINE_EXCEEDED",
    409: "ALREADY_EXISTS",
    412: "FAILED_PRECONDITION",
    413: "INVALID_ARGUMENT",
    415: "INVALID_ARGUMENT",
    429: "RESOURCE_EXHAUSTED",
    500: "INTERNAL",
    503: "UNAVAILABLE",
}


class GoogleError(exceptions.APIException):
    """A failure with Google's status name (``status_code`` is the HTTP code)."""

    status_code = 400

    def __init__(self, message: str) -> None:
        super().__init__(message)


class InvalidArgument(GoogleError):
    status_code = 400


class UnsupportedMediaType(GoogleError):
    """415: a file of a type not taken (RAG Engine's uploads); Google's status for it is INVALID_ARGUMENT."""

    status_code = 415


class NotFound(GoogleError):
    status_code = 404


class AlreadyExists(GoogleError):
    status_code = 409


class Aborted(GoogleError):
    """409 ABORTED: a concurrent change won; the caller may retry."""

    status_code = 409


class FailedPrecondition(GoogleError):
    status_code = 400


def body(code: int, message: str, status: str | None = None) -> dict[str, Any]:
    return {"error": {"code": code, "message": message, "status": status or STATUS.get(code, "UNKNOWN")}}


def error_handler(exc: Exception, context: dict[str, Any]) -> Response | None:
    """DRF's exception handler, answering in Google's shape; an outage as 503 UNAVAILABLE."""
    exc = as_unavailable(exc)
    response = exception_handler(exc, context)
    if response is None:
        return None
    status = None
    if isinstance(exc, Aborted):
        status = "ABORTED"
    elif isinstance(exc, FailedPrecondition):
        status = "FAILED_PRECONDITION"
    if isinstance(exc, Http404):
        message = "Not found."
    elif isinstance(exc, exceptions.ValidationError):
        message = _flatten(exc.detail)
    elif isinstance(exc, exceptions.APIException):
        detail = exc.detail
        message = str(detail.get("detail", detail)) if isinstance(detail, dict) else str(detail)
    else:
        message = str(exc)
    response.data = body(response.status_code, message, status)
    return response


@csrf_exempt  # API clients send no CSRF token: any method gets the JSON 404, not Django's CSRF page
def not_found(request: Any, *args: Any, **kwargs: Any) -> JsonResponse:
    """What the Vertex surface answers for a path it does not serve."""
    return JsonResponse(body(404, f"The path {request.path} is not served here."), status=404)


def _flatten(detail: Any, path: str = "") -> str:
    if isinstance(detail, dict):
        return "; ".join(_flatten(value, f"{path}.{key}" if path else str(key)) for key, value in detail.items())
    if isinstance(detail, list):
        return "; ".join(_flatten(item, path) for item in detail)
    return f"{path}: {detail}" if path else str(detail)
