"""OpenAPI 3 documents → one self-contained document per operation, parsed by ADK's own parser.

Each ``Tool`` row stores a document holding exactly one operation (with the
original's components and security), so a tool can be edited, versioned and
switched off alone, and ADK's ``OpenApiSpecParser`` / ``RestApiTool`` turn it
back into a callable tool unchanged.
"""

from __future__ import annotations

import copy
import json
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import yaml

if TYPE_CHECKING:  # ADK is imported where a tool is built: the tools admin loads with Django (issue 43)
    from google.adk.tools.openapi_tool.openapi_spec_parser.rest_api_tool import RestApiTool

HTTP_METHODS = ("get", "post", "put", "delete", "patch", "head", "options", "trace")


class InvalidOpenApi(ValueError):
    """The document is not an OpenAPI 3 document ADK can turn into tools."""


@dataclass(frozen=True)
class ParsedOperation:
    name: str
    description: str
    method: str
    path: str
    document: dict[str, Any]
    parameters_schema: dict[str, Any]


def load_document(source: str | bytes | dict[str, Any]) -> dict[str, Any]:
    """The document as a dict, from JSON or YAML text (or a dict already)."""
    if isinstance(source, dict):
        return source
    if not isinstance(source, (str, bytes)):
        raise InvalidOpenApi("The document must be a JSON/YAML object or its text.")
    try:
        loaded = yaml.safe_load(source)  # JSON is YAML too
    except yaml.YAMLError as e:
        raise InvalidOpenApi(f"Not JSON or YAML: {e}") from e
    if not isinstance(loaded, dict):
        raise InvalidOpenApi("The document must be a JSON/YAML object.")
    return loaded


def _check_shape(document: dict[str, Any]) -> None:
    version = document.get("openapi")
    if not isinstance(version, str) or not version.startswith("3."):
        raise InvalidOpenApi("Only OpenAPI 3 documents are supported: 'openapi' must be '3.x'.")
    if not isinstance(document.get("info"), dict):
        raise InvalidOpenApi("'info' is missing.")
    paths = document.get("paths")
    if not isinstance(paths, dict) or not paths:
        raise InvalidOpenApi("'paths' is missing or empty.")
    for path, item in paths.items():
        if not isinstance(item, dict):
            raise InvalidOpenApi(f"Path {path!r} is not an object.")


def _single_operation_document(document: dict[str, Any], path: str, method: str) -> dict[str, Any]:
    item = document["paths"][path]
    single_item = {method: copy.deepcopy(item[method])}
    if "parameters" in item:
        single_item["parameters"] = copy.deepcopy(item["parameters"])
    single = {key: copy.deepcopy(value) for key, value in document.items() if key != "paths"}
    single["paths"] = {path: single_item}
    return single


def build_rest_api_tool(
    document: dict[str, Any], *, tool_class: type[RestApiTool] | None = None, **options: Any
) -> RestApiTool:
    """The ADK tool of a one-operation document (``options`` go to ``tool_class``, ``RestApiTool`` by default)."""
    from google.adk.tools.openapi_tool.openapi_spec_parser.openapi_spec_parser import OpenApiSpecParser
    from google.adk.tools.openapi_tool.openapi_spec_parser.rest_api_tool import RestApiTool

    # The parser mutates what it is given.
    operations = OpenApiSpecParser().parse(copy.deepcopy(document))
    if len(operations) != 1:
        raise InvalidOpenApi(f"Expected one operation, found {len(operations)}.")
    return (tool_class or RestApiTool).from_parsed_operation(operations[0], **options)


def parse_operations(document: dict[str, Any]) -> list[ParsedOperation]:
    """Every operation of ``document``, each as its own document; raise ``InvalidOpenApi`` if unusable."""
    _check_shape(document)
    parsed = []
    for path, item in document["paths"].items():
        for method in HTTP_METHODS:
            if method not in item:
                continue
            single = _single_operation_document(document, path, method)
            try:
                tool = build_rest_api_tool(single)
                schema = tool._operation_parser.get_json_schema()
                json.dumps(schema)
            except InvalidOpenApi:
                raise
            except Exception as e:  # ADK's parser raises whatever pydantic/KeyError it meets
                raise InvalidOpenApi(f"{method.upper()} {path}: {e}") from e
            parsed.append(
                ParsedOperation(
                    name=tool.name,
                    description=tool.description,
                    method=method,
                    path=path,
                    document=single,
                    parameters_schema=schema,
                )
            )
    if not parsed:
        raise InvalidOpenApi("The document has no operations.")
    return parsed
