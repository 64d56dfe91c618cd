"""Proto3 JSON (decoded, as dicts) into protobuf messages, without ``json_format``'s cost.

``json_format.ParseDict`` walks every value through generic Python code: for a
``ListEvents`` page of 50 events (each with its ``rawEvent`` as a ``Struct``) it
took more than half of the gRPC call, more than the view that produced the page, and
each timestamp went through ``strptime``. ``parse_dict`` does the same for what
Cognizes' responses hold — scalars, enums by name, nested and repeated messages,
maps with string keys, ``Struct`` / ``Value`` / ``ListValue`` and RFC 3339
``Timestamp`` — with per-message field tables read once from the descriptors.

Anything else (``Any``, ``Duration``, wrappers, bytes, 64-bit integers that are not
plain, non-string map keys, values of an unexpected Python type, a oneof set twice)
makes it start over with ``json_format.ParseDict`` itself, so the result and the
errors are ``json_format``'s in every case it does not handle: it is a shortcut,
never a second reading of proto3 JSON.

Even so, building a message from Python values costs the same per ``rawEvent``
``Struct`` whichever way it is done (these readers, ``Struct.update``, or wire bytes
written in Python): 50 events were half of a gRPC ``ListEvents``. A value that is
served again and again unchanged (a stored event, remembered by
``vertex_app.event_cache``) is a ``FrozenJson`` (``cognizes.infra.frozen_json``): the message
it is read into the first time is kept as its wire bytes, and later reads parse those
(in C).
"""

from __future__ import annotations

import datetime
import re
from typing import Any

from google.protobuf import json_format
from google.protobuf.descriptor import Descriptor, FieldDescriptor
from google.protobuf.message import Message

from cognizes.infra.frozen_json import FrozenJson

_T = FieldDescriptor
_INTEGERS = {_T.CPPTYPE_INT32, _T.CPPTYPE_INT64, _T.CPPTYPE_UINT32, _T.CPPTYPE_UINT64}
_FLOATS = {_T.CPPTYPE_FLOAT, _T.CPPTYPE_DOUBLE}
_STRUCT, _VALUE, _LIST, _TIMESTAMP = (
    "google.protobuf.Struct",
    "google.protobuf.Value",
    "google.protobuf.ListValue",
    "google.protobuf.Timestamp",
)
_RFC3339 = re.compile(r"(\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d)(?:\.(\d{1,9}))?(Z|[+-]\d\d:\d\d)")
_EPOCH = datetime.datetime(1970, 1, 1, tzinfo=datetime.UTC)


class _Unusual(Exception):
    """Something ``parse_dict`` leaves to ``json_format``."""


def parse_dict(data: Any, message: Message) -> Message:
    """``json_format.ParseDict(data, message, ignore_unknown_fields=True)``, faster for the common shapes."""
    if not merge_fast(data, message):  # json_format decides (and words the error)
        json_format.ParseDict(data, message, ignore_unknown_fields=True)
    return message


def merge_fast(data: Any, message: Message) -> bool:
    """Read ``data`` into the empty ``message`` if it holds only what the shortcut reads; else False, the
    message left empty. Values must be of JSON's own Python types (``str``, ``int``, ``float``, ``bool``,
    ``None``, ``dict`` with ``str`` keys, ``list``): anything else is refused, never converted."""
    try:
        _merge(data, message)
    except Exception:  # _Unusual, or a value the message refused
        message.Clear()
        return False
    return True


_SCALAR, _MESSAGE, _REPEATED_MESSAGE, _REPEATED_SCALAR, _MAP, _VALUE_FIELD = range(6)


def _merge(data: Any, message: Message) -> None:
    if type(data) is FrozenJson:
        wire = data.wire(message.DESCRIPTOR)
        if wire is not None:
            message.MergeFromString(wire)  # the message is empty: the same as reading the values again
            return
        _merge_values(data, message)
        data.keep_wire(message.DESCRIPTOR, message.SerializeToString())
        return
    _merge_values(data, message)


def _merge_values(data: Any, message: Message) -> None:
    descriptor = message.DESCRIPTOR
    reader = _READERS.get(descriptor)
    if reader is None:
        reader = _READERS[descriptor] = _reader(descriptor)
    if not isinstance(reader, dict):
        reader(data, message)
        return
    if not isinstance(data, dict):
        raise _Unusual
    seen: set[str] = set()
    for key, value in data.items():
        step = reader.get(key)
        if step is None:
            if key.startswith("["):  # an extension
                raise _Unusual
            continue  # unknown fields are ignored, as the transcoder asks of json_format
        name, kind, field, read = step
        if name in seen or (
            field.containing_oneof is not None and message.WhichOneof(field.containing_oneof.name) is not None
        ):
            raise _Unusual  # the same field twice (both spellings, or two of a oneof): json_format's error
        seen.add(name)
        if value is None:
            if kind == _VALUE_FIELD:
                getattr(message, name).null_value = 0
            continue  # null is the field left unset
        if kind == _SCALAR:
            setattr(message, name, _scalar(field, value))
        elif kind in (_MESSAGE, _VALUE_FIELD):
            target = getattr(message, name)
            target.SetInParent()
            (read or _merge)(value, target)
        elif kind == _REPEATED_MESSAGE:
            if not isinstance(value, list):
                raise _Unusual
            container = getattr(message, name)
            for item in value:
                _merge(item, container.add())
        elif kind == _REPEATED_SCALAR:
            if not isinstance(value, list):
                raise _Unusual
            getattr(message, name).extend([_scalar(field, item) for item in value])
        else:
            _merge_map(value, getattr(message, name), field.message_type)


def _merge_map(value: Any, container: Any, entry: Descriptor) -> None:
    key_field, value_field = entry.fields_by_name["key"], entry.fields_by_name["value"]
    if not isinstance(value, dict) or key_field.cpp_type != _T.CPPTYPE_STRING:
        raise _Unusual
    for key, item in value.items():
        if item is None:
            raise _Unusual
        if value_field.message_type is not None:
            _merge(item, container[key])
        else:
            container[key] = _scalar(value_field, item)


def _scalar(field: FieldDescriptor, value: Any) -> Any:
    kind = field.cpp_type
    if kind == _T.CPPTYPE_STRING and field.type == _T.TYPE_STRING and isinstance(value, str):
        return value
    if kind == _T.CPPTYPE_BOOL and isinstance(value, bool):
        return value
    if isinstance(value, bool):
        raise _Unusual
    if kind in _INTEGERS and isinstance(value, int):
        return value
    if kind in _FLOATS and isinstance(value, (int, float)):
        return value
    if kind == _T.CPPTYPE_ENUM:
        if isinstance(value, int):
            return value
        known = field.enum_type.values_by_name.get(value) if isinstance(value, str) else None
        if known is not None:
            return known.number
    raise _Unusual


def _struct(data: Any, message: Message) -> None:
    if not isinstance(data, dict):
        raise _Unusual
    fields = message.fields
    for key, value in data.items():
        _value(value, fields[key])


def _list(data: Any, message: Message) -> None:
    if not isinstance(data, list):
        raise _Unusual
    values = message.values
    for item in data:
        _value(item, values.add())


def _value(data: Any, message: Message) -> None:
    if isinstance(data, str):
        message.string_value = data
    elif data is None:
        message.null_value = 0
    elif isinstance(data, bool):
        message.bool_value = data
    elif isinstance(data, (int, float)):
        if (isinstance(data, float) and data != data) or data in (float("inf"), float("-inf")):
            raise _Unusual  # json_format refuses NaN and infinities in a Value
        message.number_value = data
    elif isinstance(data, dict):
        struct = message.struct_value
        struct.SetInParent()
        _struct(data, struct)
    elif isinstance(data, list):
        values = message.list_value
        values.SetInParent()
        _list(data, values)
    else:
        raise _Unusual


def _timestamp(data: Any, message: Message) -> None:
    """RFC 3339 as ``Timestamp.FromJsonString`` reads it (nanoseconds exact), without ``strptime``."""
    match = _RFC3339.fullmatch(data) if isinstance(data, str) else None
    if match is None:
        raise _Unusual
    whole, fraction, offset = match.groups()
    moment = datetime.datetime.fromisoformat(whole + ("+00:00" if offset == "Z" else offset))
    if not 1 <= moment.astimezone(datetime.UTC).year <= 9999:
        raise _Unusual
    delta = moment - _EPOCH
    message.seconds = delta.days * 86400 + delta.seconds
    message.nanos = int(fraction.ljust(9, "0")) if fraction else 0


_SPECIAL = {_STRUCT: _struct, _VALUE: _value, _LIST: _list, _TIMESTAMP: _timestamp}


_READERS: dict[Descriptor, Any] = {}
"""Each message type's reader, made once (``_reader``): a function for the well-known types read by hand, else
its plan."""


def _reader(descriptor: Descriptor) -> Any:
    """How a message is read: a function of ``_SPECIAL``, or a plan of its fields — each key of its JSON (by the
    JSON name and by the proto name, as json_format accepts both; the JSON name wins) to the field's name, what
    it holds, the field, and for a message field of a type ``_SPECIAL`` reads, that reader. A well-known type
    other than those is refused (``json_format`` reads it)."""
    special = _SPECIAL.get(descriptor.full_name)
    if special is not None:
        return special
    if descriptor.full_name.startswith("google.protobuf."):
        raise _Unusual
    plan = {}
    for field in descriptor.fields:
        message = field.message_type
        read = None
        if message is not None and message.GetOptions().map_entry:
            kind = _MAP
        elif field.is_repeated:
            kind = _REPEATED_MESSAGE if message is not None else _REPEATED_SCALAR
        elif message is not None:
            kind = _VALUE_FIELD if message.full_name == _VALUE else _MESSAGE
            read = _SPECIAL.get(message.full_name)
        else:
            kind = _SCALAR
        plan[field.name] = (field.name, kind, field, read)
    for field in descriptor.fields:
        plan[field.json_name] = plan[field.name]
    return plan
