"""``memoryBankConfig.structuredMemoryConfigs`` on the wire: read from an engine's PATCH (or create), written on GET.

Clients send the configs camelCase (``scopeKeys``, ``schemaConfigs[].memoryType``) and the schema
inside as the caller wrote it (snake_case keywords, types in any case); property names are the caller's
field names and are never re-cased. memory_app.profile_schema checks and normalises them; a config it
refuses is a 400 naming the offending path.
"""

from __future__ import annotations

from typing import Any

from memory_app.models import MemoryBankConfig
from memory_app.profile_schema import SchemaError, camel_schema, check_configs
from vertex_app.errors import InvalidArgument


def config_changes(bank: dict[str, Any]) -> dict[str, Any]:
    """The ``structured_memory_configs`` change a memoryBankConfig carries ({} when it names none)."""
    configs = bank.get("structured_memory_configs")
    if configs is None:
        return {}
    try:
        return {"structured_memory_configs": check_configs(configs)}
    except SchemaError as error:
        raise InvalidArgument(str(error)) from error


def config_resource(config: MemoryBankConfig) -> dict[str, Any]:
    """``{"structuredMemoryConfigs": [...]}`` camelCase, or {} for an app without profiles."""
    configs = config.structured_memory_configs or []
    if not configs:
        return {}
    return {
        "structuredMemoryConfigs": [
            {
                **({"scopeKeys": list(item["scope_keys"])} if item["scope_keys"] else {}),
                "schemaConfigs": [
                    {"id": schema["id"], "schema": camel_schema(schema["schema"]), "memoryType": schema["memory_type"]}
                    for schema in item["schema_configs"]
                ],
            }
            for item in configs
        ]
    }
