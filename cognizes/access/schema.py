"""The OpenAPI schema: operations described by their own views, and the errors every operation can answer with."""

from __future__ import annotations

import inspect
from typing import Any

from django_filters import filters
from django_filters.filterset import FilterSet
from drf_spectacular.openapi import AutoSchema as SpectacularAutoSchema
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiParameter

_TAG_BY_PATH = [  # each operation's section (SPECTACULAR_SETTINGS' TAGS): the first whose fragment its path holds
    ("tool", "Tools"),
    ("secrets/", "Tools"),
    ("corpora", "Knowledge"),
    ("/traces/", "Traces"),
    ("memory-config/", "Memory bank"),
    ("memory-jobs/", "Memory bank"),
    ("memories", "Memories"),
    ("/artifacts/", "Artifacts"),
    ("/run/", "Agent runs"),
    ("/events/", "Events"),
    ("state/", "State"),
    ("sessions/", "Sessions"),
    ("users/", "Users"),
]


class AutoSchema(SpectacularAutoSchema):
    """drf-spectacular's, with each operation in its resource family, summed up by its docstring's first line.

    An operation is described by its method's or its own view's docstring only:
    Python hands a class without a docstring its base's, so every view was
    described as "Base of every tenant view…" (ScopedView's) in Swagger UI.
    """

    def _docstring(self) -> str:
        method = getattr(self.view, getattr(self.view, "action", None) or self.method.lower(), None)
        own = (method.__doc__ if method is not None else None) or self.view.__class__.__dict__.get("__doc__")
        return inspect.cleandoc(own) if own else ""

    def get_summary(self) -> str | None:  # plain text in Swagger UI
        return self._docstring().partition("\n\n")[0].replace("\n", " ").replace("``", "") or None

    # drf-spectacular's AutoSchema asks with no arguments; DRF's stubs give its base class's (path, method).
    def get_description(self) -> str:  # type: ignore[override]  # Markdown: reST's ``code`` is `code` there
        return self._docstring().partition("\n\n")[2].replace("``", "`")

    def get_tags(self) -> list[str]:
        within_app = self.path.partition("/apps/{app_name}/")[2]
        return [next((tag for fragment, tag in _TAG_BY_PATH if fragment in within_app), "Sessions")]


def filter_parameters(filterset: type[FilterSet]) -> list[OpenApiParameter]:
    """A filter set's query parameters, for ``extend_schema(parameters=…)``.

    drf-spectacular reads filters only off generic list views; ours are plain
    views that apply the filter set themselves (and it warned about each).
    """
    parameters = []
    for name, field in filterset.base_filters.items():
        choices = field.extra.get("choices")
        if isinstance(field, filters.BooleanFilter):
            kind, description = OpenApiTypes.BOOL, f"Only those whose {name} is true or false."
        elif isinstance(field, filters.IsoDateTimeFilter):
            kind, description = OpenApiTypes.DATETIME, f"Only those with {field.field_name} at or after this time."
        else:
            kind, description = OpenApiTypes.STR, f"Only those with this {name}."
        parameters.append(
            OpenApiParameter(
                name, kind, enum=[value for value, _ in choices] if choices else None, description=description
            )
        )
    return parameters


ERROR_SCHEMA = {
    "type": "object",
    "required": ["error"],
    "properties": {
        "error": {
            "type": "object",
            "required": ["code", "message", "details"],
            "properties": {
                "code": {"type": "string", "example": "not_found"},
                "message": {"type": "string"},
                "details": {"nullable": True, "description": "Field errors, by field name, for 400."},
            },
        }
    },
}

ERRORS = {
    "400": "Invalid request: malformed JSON, unknown fields, wrong types.",
    "401": "Missing, unknown or revoked API key.",
    "403": "The key is of the wrong kind (read-only, or of one user where the app's key is needed: the message says "
    "which kind and how to make one), or the caller is not staff.",
    "404": "Not found — also for anything of another app or user.",
    "408": "The request body did not arrive in time.",
    "409": "Conflict: a stale version, or an id that already exists.",
    "413": "The request body is too large.",
    "429": "Too many requests for this key.",
    "503": "PostgreSQL or Redis is unavailable; retry after the Retry-After seconds.",
}
BODY_ERRORS = {"415": "The request body's Content-Type is not one this operation reads (its request body lists them)."}
"""Answers only an operation that reads a request body can give."""


def add_error_responses(result: dict[str, Any], generator: Any, request: Any, public: bool) -> dict[str, Any]:
    """Add the ``Error`` component and the error answers to every operation of the schema.

    Request bodies are also marked ``additionalProperties: false``: the API
    refuses unknown fields (a typo must not be silently ignored).
    """
    components = result.setdefault("components", {}).setdefault("schemas", {})
    components["Error"] = ERROR_SCHEMA
    reference = {"application/json": {"schema": {"$ref": "#/components/schemas/Error"}}}
    for path in result.get("paths", {}).values():
        for operation in path.values():
            errors = {**ERRORS, **BODY_ERRORS} if "requestBody" in operation else ERRORS
            for code, description in errors.items():
                operation["responses"].setdefault(code, {"description": description, "content": reference})
            for body in operation.get("requestBody", {}).get("content", {}).values():
                name = body.get("schema", {}).get("$ref", "").rpartition("/")[2]
                if name in components:
                    components[name]["additionalProperties"] = False
    return result
