"""The OpenAPI schema: operations described by their own views, and the errors every operation can answer with."""

from __future__ import annotations

import inspect
from typing import Any

from drf_spectacular.openapi import AutoSchema as SpectacularAutoSchema


class AutoSchema(SpectacularAutoSchema):
    """drf-spectacular's, describing an operation by its method's or its own view's docstring only.

    Python hands a class without a docstring its base's, so every view was
    described as "Base of every tenant view…" (ScopedView's) in Swagger UI.
    """

    def get_description(self) -> str:
        method = getattr(self.view, getattr(self.view, "action", None) or self.method.lower(), None)
        own = (method.__doc__ if method is not None else None) or self.view.__class__.__dict__.get("__doc__")
        return inspect.cleandoc(own) if own else ""

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
    "403": "The key is read-only, or the caller is not staff.",
    "404": "Not found — also for anything of another app or user.",
    "408": "The request body did not arrive in time.",
    "409": "Conflict: a stale version, or an id that already exists.",
    "413": "The request body is too large.",
    "429": "Too many requests for this key.",
    "503": "PostgreSQL or Redis is unavailable; retry after the Retry-After seconds.",
}


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
            for code, description in ERRORS.items():
                operation["responses"].setdefault(code, {"description": description, "content": reference})
            for body in operation.get("requestBody", {}).get("content", {}).values():
                name = body.get("schema", {}).get("$ref", "").rpartition("/")[2]
                if name in components:
                    components[name]["additionalProperties"] = False
    return result
