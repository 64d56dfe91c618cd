"""``rawEvent`` from a stored event, without rebuilding it as an ADK ``Event``.

A stored event is ADK's ``Event.model_dump(mode="json", exclude_none=True)``:
snake_case field names. ADK's Vertex client sends (and reads back) the same dump
``by_alias=True``: the same values under camelCase names — but only the names of
model fields change, never the keys of free-form maps (a ``state_delta``, a tool
call's ``args``). Validating each event as an ADK ``Event`` and dumping it again
cost more than the rest of a ``ListEvents`` together (docs/measured.md).

So the names are renamed by the model's own schema: for each model, each field's
serialisation alias and the model (if any) its value holds, read once from the
Pydantic field annotations of ``Event`` and everything it nests. Values are kept as
stored (bytes stay the base64 text they were stored as). A key that is no field of
this ADK's ``Event`` (stored by a newer ADK) is kept as it is, not dropped.
"""

from __future__ import annotations

import functools
import types
import typing
from collections import abc
from typing import Any, Union

from google.adk.events.event import Event
from pydantic import BaseModel

Node = tuple[str, Any] | None
"""How a value is renamed: ("model", cls), ("list", node), ("dict", node), or None (kept as it is)."""


def raw_event(data: dict[str, Any]) -> dict[str, Any]:
    """The stored event ``data`` as ADK's Vertex client sends it as ``rawEvent`` (a new dict; ``data`` unchanged)."""
    return _model(data, Event)


def _model(data: dict[str, Any], model: type[BaseModel]) -> dict[str, Any]:
    fields = _fields(model)
    out: dict[str, Any] = {}
    for key, value in data.items():
        spec = fields.get(key)
        if spec is None:
            out[key] = value
        else:
            alias, node = spec
            out[alias] = value if node is None or value is None else _convert(value, node)
    return out


def _convert(value: Any, node: tuple[str, Any]) -> Any:
    kind, inner = node
    if kind == "model":
        return _model(value, inner) if isinstance(value, dict) else value
    if kind == "list":
        return (
            [_convert(item, inner) if item is not None else None for item in value]
            if isinstance(value, list)
            else value
        )
    if isinstance(value, dict):  # "dict": a map of models
        return {key: _convert(item, inner) if item is not None else None for key, item in value.items()}
    return value


@functools.cache
def _fields(model: type[BaseModel]) -> dict[str, tuple[str, Node]]:
    """Each field of ``model``: the name ``model_dump(by_alias=True)`` gives it, and how its value is renamed."""
    return {
        name: (field.serialization_alias or field.alias or name, _node(field.annotation))
        for name, field in model.model_fields.items()
    }


def _node(annotation: Any) -> Node:
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return ("model", annotation)
    origin, args = typing.get_origin(annotation), typing.get_args(annotation)
    if origin is typing.Annotated:
        return _node(args[0])
    if origin in (Union, types.UnionType):
        nodes = [node for node in map(_node, args) if node is not None]
        if len(nodes) > 1:
            raise TypeError(f"{annotation} may hold several models: rawEvent cannot be renamed by its schema")
        return nodes[0] if nodes else None
    if origin in (list, set, frozenset, tuple, abc.Sequence, abc.MutableSequence, abc.Set, abc.MutableSet):
        inner = _node(args[0]) if args else None
        return ("list", inner) if inner is not None else None
    if origin in (dict, abc.Mapping, abc.MutableMapping):
        inner = _node(args[1]) if len(args) == 2 else None
        return ("dict", inner) if inner is not None else None
    return None
