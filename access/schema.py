"""OpenAPI post-processing: every operation documents the errors it can answer with."""

from __future__ import annotations

from typing import Any

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
    "409": "Conflict: a stale version, or an id that already exists.",
    "413": "The request body is too large.",
    "429": "Too many requests for this key.",
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
