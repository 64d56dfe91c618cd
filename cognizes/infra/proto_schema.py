"""JSON schemas (OpenAPI 3.0's dialect) of protobuf messages, as proto3 JSON writes them.

Vertex AI's REST API and A2A 1.0's JSON-RPC are both proto3 JSON of published
protobuf messages, so their references are generated from the messages'
descriptors instead of being written out by hand: a field the protos gain
appears in the reference by itself. The mapping is proto3 JSON's own
(https://protobuf.dev/programming-guides/json/): ``json_name`` (lowerCamelCase),
64-bit integers as strings, enums by name, bytes as base64, maps as objects, and
the well-known types as the JSON values they are written as.
"""

from __future__ import annotations

import copy
from typing import Any

from google.api import field_behavior_pb2
from google.protobuf.descriptor import Descriptor, FieldDescriptor

Schema = dict[str, Any]
REF_PREFIX = "#/components/schemas/"

_T = FieldDescriptor
_SCALARS: dict[int, Schema] = {
    _T.TYPE_DOUBLE: {"type": "number", "format": "double"},
    _T.TYPE_FLOAT: {"type": "number", "format": "float"},
    _T.TYPE_INT32: {"type": "integer", "format": "int32"},
    _T.TYPE_SINT32: {"type": "integer", "format": "int32"},
    _T.TYPE_SFIXED32: {"type": "integer", "format": "int32"},
    _T.TYPE_UINT32: {"type": "integer", "format": "int64", "minimum": 0},
    _T.TYPE_FIXED32: {"type": "integer", "format": "int64", "minimum": 0},
    # 64-bit integers are strings in proto3 JSON: a JavaScript number cannot hold them.
    _T.TYPE_INT64: {"type": "string", "format": "int64"},
    _T.TYPE_SINT64: {"type": "string", "format": "int64"},
    _T.TYPE_SFIXED64: {"type": "string", "format": "int64"},
    _T.TYPE_UINT64: {"type": "string", "format": "uint64"},
    _T.TYPE_FIXED64: {"type": "string", "format": "uint64"},
    _T.TYPE_BOOL: {"type": "boolean"},
    _T.TYPE_STRING: {"type": "string"},
    _T.TYPE_BYTES: {"type": "string", "format": "byte"},
}
WELL_KNOWN: dict[str, Schema] = {
    "google.protobuf.Timestamp": {"type": "string", "format": "date-time"},
    "google.protobuf.Duration": {"type": "string", "pattern": r"^-?\d+(\.\d{1,9})?s$", "example": "3.5s"},
    "google.protobuf.Struct": {"type": "object", "additionalProperties": True},
    "google.protobuf.Value": {},
    "google.protobuf.ListValue": {"type": "array", "items": {}},
    "google.protobuf.FieldMask": {"type": "string", "description": "Field paths, comma-separated."},
    "google.protobuf.Empty": {"type": "object"},
    "google.protobuf.Any": {
        "type": "object",
        "required": ["@type"],
        "additionalProperties": True,
        "properties": {"@type": {"type": "string"}},
        "description": "A message of the type its `@type` URL names, with that message's fields beside it.",
    },
}
_WRAPPERS = "google/protobuf/wrappers.proto"  # StringValue & co.: the wrapped value itself, or null


def component_name(descriptor: Descriptor) -> str:
    """The message's name in ``components/schemas``: its full name, dots made underscores."""
    return descriptor.full_name.replace(".", "_")


class ProtoSchemas:
    """Schemas of messages and the messages they use, collected once each as an OpenAPI document's components.

    A message is a ``$ref`` to its component, so recursive messages (a Value in a
    Struct, a part in a message) need no unrolling.
    """

    def __init__(self) -> None:
        self.components: dict[str, Schema] = {}

    def ref(self, descriptor: Descriptor) -> Schema:
        """The schema of a message where it is used: a ``$ref`` to its component, or a well-known type's JSON."""
        if descriptor.full_name in WELL_KNOWN:
            return copy.deepcopy(WELL_KNOWN[descriptor.full_name])
        if descriptor.file.name == _WRAPPERS:
            return {**self.field(descriptor.fields_by_name["value"]), "nullable": True}
        name = component_name(descriptor)
        if name not in self.components:
            self.components[name] = {}  # taken before its fields are read, against recursion
            self.components[name] = self.message(descriptor)
        return {"$ref": REF_PREFIX + name}

    def message(self, descriptor: Descriptor, *, without: tuple[str, ...] = ()) -> Schema:
        """An object schema of the message's fields (less those named in ``without``: a request's path fields)."""
        fields = [f for f in descriptor.fields if f.name not in without]
        schema: Schema = {
            "type": "object",
            "title": descriptor.full_name,
            "properties": {f.json_name: self.field(f) for f in fields},
        }
        required = [f.json_name for f in fields if field_behavior_pb2.REQUIRED in _behavior(f)]
        if required:
            schema["required"] = required
        choices = [oneof for oneof in descriptor.oneofs if not oneof.name.startswith("_")]  # "_x": proto3 optional
        if choices:
            schema["description"] = " ".join(
                f"At most one of {', '.join(f'`{f.json_name}`' for f in oneof.fields)} ({oneof.name})."
                for oneof in choices
            )
        return schema

    def field(self, field: FieldDescriptor) -> Schema:
        """A field's schema: a map is an object, a repeated field an array of its values."""
        if field.message_type is not None and field.message_type.GetOptions().map_entry:
            return {"type": "object", "additionalProperties": self.field(field.message_type.fields_by_name["value"])}
        if field.message_type is not None:
            single = self.ref(field.message_type)
        elif field.enum_type is not None:
            single = {"type": "string", "enum": [value.name for value in field.enum_type.values]}
        else:
            single = dict(_SCALARS[field.type])
        if field.is_repeated:
            return {"type": "array", "items": single}
        if field_behavior_pb2.OUTPUT_ONLY in _behavior(field) and "$ref" not in single:
            single["readOnly"] = True  # beside a $ref it would be ignored
        return single


def _behavior(field: FieldDescriptor) -> list[int]:
    """``google.api.field_behavior`` (REQUIRED, OUTPUT_ONLY…), where the descriptor kept its options."""
    return list(field.GetOptions().Extensions[field_behavior_pb2.field_behavior])
