"""The schemas of structured profiles: what an app may configure, and whether a value fits its field.

A profile schema is a Gemini ``Schema`` (an OpenAPI subset), as Vertex AI Memory Bank takes it in
``structuredMemoryConfigs``: types upper- or lower-case (``OBJECT``, ``string``), multi-word keywords
snake_case or camelCase (``max_length`` / ``maxLength``, ``property_ordering``). It is kept normalised
(types upper-case, keywords snake_case) so every reader sees one spelling, and refused with a message
naming the offending path otherwise: an unknown keyword or type is a typo the caller should hear about,
not a field that silently never fills.

Values are checked with ``jsonschema`` (already installed, and what tools_app checks tool arguments
with) against the schema translated to JSON Schema; a value that does not fit is never stored.
"""

from __future__ import annotations

import json
import re
from typing import Any

from cognizes.infra.casing import camel, snake

SCHEMA_ID = re.compile(r"^[a-z][a-z0-9-]{0,62}$")
TYPES = ("STRING", "NUMBER", "INTEGER", "BOOLEAN", "ARRAY", "OBJECT", "NULL")
MAX_CONFIGS = 10
MAX_SCHEMAS = 10
"""Schemas per config (and profiles a scope can have): each is extracted for every generation."""
MAX_SCOPE_KEYS = 5
MAX_SCHEMA_BYTES = 16_384
MAX_DEPTH = 6
MAX_FIELDS = 50
"""Top-level properties of a schema: one memory row each per scope."""
MAX_NAME_LENGTH = 64
PROFILE = "STRUCTURED_PROFILE"

_NESTED = {"properties", "items", "any_of", "defs"}
_KEYWORDS = {
    "type",
    "description",
    "title",
    "format",
    "nullable",
    "enum",
    "properties",
    "required",
    "items",
    "min_items",
    "max_items",
    "min_length",
    "max_length",
    "minimum",
    "maximum",
    "min_properties",
    "max_properties",
    "pattern",
    "property_ordering",
    "any_of",
    "default",
    "example",
}
_COUNTS = {"min_items", "max_items", "min_length", "max_length", "min_properties", "max_properties"}
_JSON_NAMES = {
    "min_items": "minItems",
    "max_items": "maxItems",
    "min_length": "minLength",
    "max_length": "maxLength",
    "min_properties": "minProperties",
    "max_properties": "maxProperties",
    "any_of": "anyOf",
}


class SchemaError(ValueError):
    """A profile config or schema that cannot be used; the message names where."""


def check_configs(configs: Any) -> list[dict[str, Any]]:
    """Structured memory configs, checked and normalised: ``[{"scope_keys", "schema_configs": [{"id", "schema",
    "memory_type"}]}]``.

    One default config (no scope keys) at most, no two configs with the same set of keys, schema ids
    unique within a config.
    """
    if not isinstance(configs, list) or len(configs) > MAX_CONFIGS:
        raise SchemaError(f"structuredMemoryConfigs is a list of at most {MAX_CONFIGS} configs.")
    out, seen = [], set()
    for i, config in enumerate(configs):
        where = f"structuredMemoryConfigs[{i}]"
        config = _snake_keys(config, where, {"scope_keys", "schema_configs"})
        keys = config.get("scope_keys") or []
        if (
            not isinstance(keys, list)
            or len(keys) > MAX_SCOPE_KEYS
            or not all(isinstance(k, str) and 0 < len(k) <= MAX_NAME_LENGTH for k in keys)
        ):
            raise SchemaError(
                f"{where}.scopeKeys: at most {MAX_SCOPE_KEYS} names of 1 to {MAX_NAME_LENGTH} characters."
            )
        key_set = frozenset(keys)
        if key_set in seen:
            raise SchemaError(
                "Only one default config (no scopeKeys) is allowed"
                if not key_set
                else f"{where}.scopeKeys {sorted(key_set)} repeat another config's."
            )
        seen.add(key_set)
        schemas = config.get("schema_configs") or []
        if not isinstance(schemas, list) or not 1 <= len(schemas) <= MAX_SCHEMAS:
            raise SchemaError(f"{where}.schemaConfigs: 1 to {MAX_SCHEMAS} schema configs.")
        checked, ids = [], set()
        for j, schema_config in enumerate(schemas):
            inner = f"{where}.schemaConfigs[{j}]"
            schema_config = _snake_keys(schema_config, inner, {"id", "schema", "memory_type", "memory_schema"})
            schema_id = schema_config.get("id")
            if not isinstance(schema_id, str) or not SCHEMA_ID.match(schema_id):
                raise SchemaError(
                    f"{inner}.id {schema_id!r}: 1 to 63 characters, a lowercase letter first, then lowercase letters,"
                    " digits and hyphens."
                )
            if schema_id in ids:
                raise SchemaError(f"{inner}.id {schema_id!r} is given twice.")
            ids.add(schema_id)
            memory_type = schema_config.get("memory_type") or PROFILE
            if memory_type not in (PROFILE, "MEMORY_TYPE_UNSPECIFIED"):
                raise SchemaError(f"{inner}.memoryType: only {PROFILE} is supported for structured memories.")
            raw = schema_config.get("schema", schema_config.get("memory_schema"))
            checked.append({"id": schema_id, "schema": check_schema(raw, f"{inner}.schema"), "memory_type": PROFILE})
        out.append({"scope_keys": sorted(key_set), "schema_configs": checked})
    return out


def check_schema(schema: Any, where: str = "schema") -> dict[str, Any]:
    """A profile schema, normalised: an OBJECT with 1 to ``MAX_FIELDS`` properties, every node in the Gemini subset."""
    try:
        size = len(json.dumps(schema, ensure_ascii=False).encode())
    except (TypeError, ValueError, RecursionError):
        raise SchemaError(f"{where} is not JSON (or nested past reading).") from None
    if size > MAX_SCHEMA_BYTES:
        raise SchemaError(f"{where} is {size} bytes; at most {MAX_SCHEMA_BYTES}.")
    normal = _node(schema, where, 0)
    if normal.get("type") != "OBJECT" or not normal.get("properties"):
        raise SchemaError(f"{where}: a profile schema is an OBJECT with properties (one profile field each).")
    if len(normal["properties"]) > MAX_FIELDS:
        raise SchemaError(f"{where}: at most {MAX_FIELDS} properties.")
    return normal


def _node(schema: Any, where: str, depth: int) -> dict[str, Any]:
    if depth > MAX_DEPTH:
        raise SchemaError(f"{where}: nested deeper than {MAX_DEPTH} levels.")
    if not isinstance(schema, dict):
        raise SchemaError(f"{where} is a schema object.")
    out: dict[str, Any] = {}
    for key, value in schema.items():
        name = _snake(key)
        if name not in _KEYWORDS:
            raise SchemaError(f"{where}: unknown schema keyword {key!r}; one of {', '.join(sorted(_KEYWORDS))}.")
        if name in out:
            raise SchemaError(f"{where}: {key!r} is given twice.")
        out[name] = _keyword(name, value, f"{where}.{key}", depth)
    if "type" not in out and "any_of" not in out:
        raise SchemaError(f"{where}: a schema names its type.")
    for name in out.get("required", []):
        if name not in out.get("properties", {}):
            raise SchemaError(f"{where}.required names {name!r}, which is not a property.")
    return out


def _keyword(name: str, value: Any, where: str, depth: int) -> Any:
    if name == "type":
        if not isinstance(value, str) or value.upper() not in TYPES:
            raise SchemaError(f"{where}: {value!r} is not a type; one of {', '.join(TYPES)} (any case).")
        return value.upper()
    if name == "properties":
        if not isinstance(value, dict) or not all(isinstance(k, str) and 0 < len(k) <= MAX_NAME_LENGTH for k in value):
            raise SchemaError(f"{where}: an object of property names (1 to {MAX_NAME_LENGTH} characters) to schemas.")
        return {key: _node(inner, f"{where}.{key}", depth + 1) for key, inner in value.items()}
    if name == "items":
        return _node(value, where, depth + 1)
    if name == "any_of":
        if not isinstance(value, list) or not value:
            raise SchemaError(f"{where}: a list of schemas.")
        return [_node(inner, f"{where}[{i}]", depth + 1) for i, inner in enumerate(value)]
    if name in ("required", "property_ordering", "enum"):
        if not isinstance(value, list) or not all(isinstance(item, str) for item in value):
            raise SchemaError(f"{where}: a list of strings.")
        return list(value)
    if name in _COUNTS:
        if isinstance(value, str) and value.isdigit():  # int64 in proto JSON is a string
            value = int(value)
        if not isinstance(value, int) or isinstance(value, bool) or value < 0:
            raise SchemaError(f"{where}: a whole number ≥ 0.")
        return value
    if name in ("minimum", "maximum"):
        if not isinstance(value, int | float) or isinstance(value, bool):
            raise SchemaError(f"{where}: a number.")
        return value
    if name == "nullable":
        if not isinstance(value, bool):
            raise SchemaError(f"{where}: true or false.")
        return value
    if name == "pattern":
        try:
            re.compile(value)
        except (re.error, TypeError):
            raise SchemaError(f"{where}: not a regular expression.") from None
        return value
    if name in ("description", "title", "format") and not isinstance(value, str):
        raise SchemaError(f"{where}: text.")
    return value


def _snake(key: Any) -> str:
    return snake(key) if isinstance(key, str) else ""


def _snake_keys(value: Any, where: str, allowed: set[str]) -> dict[str, Any]:
    if not isinstance(value, dict):
        raise SchemaError(f"{where} is an object.")
    out = {}
    for key, inner in value.items():
        name = _snake(key)
        if name not in allowed:
            raise SchemaError(f"{where}: unknown field {key!r}.")
        out[name] = inner
    return out


def camel_schema(schema: dict[str, Any]) -> dict[str, Any]:
    """A normalised schema with camelCase keywords (property names as they are): how the REST API writes one."""
    out: dict[str, Any] = {}
    for name, value in schema.items():
        key = camel(name)
        if name == "properties":
            value = {field: camel_schema(inner) for field, inner in value.items()}
        elif name == "items":
            value = camel_schema(value)
        elif name == "any_of":
            value = [camel_schema(inner) for inner in value]
        out[key] = value
    return out


def json_schema(schema: dict[str, Any]) -> dict[str, Any]:
    """The JSON Schema (2020-12) a normalised Gemini schema stands for: what ``jsonschema`` checks values with."""
    out: dict[str, Any] = {}
    for name, value in schema.items():
        if name in ("property_ordering", "example", "title", "format", "nullable", "default"):
            continue
        if name == "type":
            value = [value.lower(), "null"] if schema.get("nullable") else value.lower()
        elif name == "properties":
            value = {field: json_schema(inner) for field, inner in value.items()}
        elif name == "items":
            value = json_schema(value)
        elif name == "any_of":
            value = [json_schema(inner) for inner in value]
        out[_JSON_NAMES.get(name, name)] = value
    return out


def value_error(field_schema: dict[str, Any], value: Any) -> str | None:
    """Why ``value`` does not fit a field's (normalised) schema, or None when it does."""
    import jsonschema  # here: reading configs (the admin, engine PATCH) need not load it

    validator = jsonschema.Draft202012Validator(json_schema(field_schema))
    error = jsonschema.exceptions.best_match(validator.iter_errors(value))
    return None if error is None else error.message[:300]
