"""Which memories a Memory Bank request names: AIP-160 filters, ``orderBy`` and metadata ``filterGroups``."""

from __future__ import annotations

from collections.abc import Iterable
from datetime import datetime
from typing import Any

from django.db.models import QuerySet
from google.cloud.aiplatform_v1beta1.types.memory_bank import MemoryFilter

from cognizes.access import limits
from memory_app.models import Memory, MemoryType
from vertex_app import filters
from vertex_app.errors import InvalidArgument
from vertex_app.memory_fields import metadata_plain
from vertex_app.wire import enum, string, timestamp

LIST_FILTER_FIELDS = {"scope.*", "fact", "create_time", "update_time", "memory_type"}
MEMORY_TYPES = {
    "NATURAL_LANGUAGE_COLLECTION": MemoryType.NATURAL_LANGUAGE,
    "STRUCTURED_PROFILE": MemoryType.STRUCTURED_PROFILE,
}

_TIME_FIELDS = {"create_time": "created_at", "update_time": "updated_at"}
_LOOKUPS = {"=": "", ">": "__gt", ">=": "__gte", "<": "__lt", "<=": "__lte"}


def filtered(
    queryset: QuerySet[Memory], text: str | None = None, *, conditions: Iterable[filters.Condition] = ()
) -> QuerySet[Memory]:
    """Memories matching an AIP-160 filter over scope keys, the fact and the times."""
    for condition in [*filters.parse(text, fields=LIST_FILTER_FIELDS), *conditions]:
        if condition.op == "!=" or (condition.op != "=" and condition.field not in _TIME_FIELDS):
            raise InvalidArgument(f"Filter {condition.field} with '=' (times also with <, <=, >, >=).")
        value = str(condition.value)
        if condition.field in _TIME_FIELDS:
            lookup = _TIME_FIELDS[condition.field] + _LOOKUPS[condition.op]
            queryset = queryset.filter(**{lookup: timestamp(value, condition.field)})
        elif condition.field == "memory_type":
            if value not in MEMORY_TYPES:
                raise InvalidArgument(f"memory_type is one of {', '.join(sorted(MEMORY_TYPES))}.")
            queryset = queryset.filter(memory_type=MEMORY_TYPES[value])
        elif condition.field == "fact":
            queryset = queryset.filter(text=value)
        elif condition.field == "scope.user_id":
            queryset = queryset.filter(user_id=value)
        elif condition.field == "scope.app_name":
            queryset = queryset.filter(app_name=value)
        else:
            queryset = queryset.filter(**{f"extra_scope__{condition.field.removeprefix('scope.')}": value})
    return queryset


def valid_time(conditions: Iterable[filters.Condition]) -> datetime | None:
    """The moment a retrieve's ``valid_time="…"`` asks for (point-in-time search); None without one."""
    moments = [c for c in conditions if c.field == "valid_time"]
    if not moments:
        return None
    if len(moments) > 1 or moments[0].op != "=":
        raise InvalidArgument('Filter valid_time once, with "=": the moment whose memories to retrieve.')
    return timestamp(str(moments[0].value), "valid_time")


def order(text: str | None) -> list[str]:
    """``orderBy``: create_time (default, newest first) or update_time, ascending unless ``desc``."""
    if not text:
        return ["-created_at", "id"]
    order = []
    for part in text.split(","):
        words = part.split()
        column = _TIME_FIELDS.get(words[0].strip() if words else "") if words else None
        if column is None or len(words) > 2 or (len(words) == 2 and words[1].lower() not in ("asc", "desc")):
            raise InvalidArgument("orderBy is create_time or update_time, optionally followed by desc.")
        order.append(("-" if len(words) == 2 and words[1].lower() == "desc" else "") + column)
    return [*order, "id"]


def metadata_groups(groups: Any) -> list[list[dict[str, Any]]]:
    """``filterGroups`` (OR of ANDs over metadata) checked and made plain."""
    parsed: list[list[dict[str, Any]]] = []
    for i, group in enumerate(groups or []):
        conjunction: list[dict[str, Any]] = []
        items = group.get("filters") or []
        limits.check_conditions(sum(map(len, parsed)) + len(items), field="filterGroups")  # before reading them
        for j, item in enumerate(items):
            where = f"filterGroups[{i}].filters[{j}]"
            op = enum(item.get("op"), MemoryFilter.Operator, f"{where}.op") or "EQUAL"
            if op not in ("EQUAL", "OPERATOR_UNSPECIFIED", "GREATER_THAN", "LESS_THAN"):
                raise InvalidArgument(f"'{where}.op' is EQUAL, GREATER_THAN or LESS_THAN.")
            conjunction.append(
                {
                    "key": string(item.get("key"), f"{where}.key", required=True),
                    "value": metadata_plain(item.get("value"), f"{where}.value"),
                    "op": "EQUAL" if op == "OPERATOR_UNSPECIFIED" else op,
                    "negate": bool(item.get("negate")),
                }
            )
        parsed.append(conjunction)
    return parsed


def matching(queryset: QuerySet[Memory], groups: list[list[dict[str, Any]]]) -> list[Memory]:
    return [memory for memory in queryset.order_by("-created_at", "id") if matches_groups(memory, groups)]


def matches_groups(memory: Memory, groups: list[list[dict[str, Any]]]) -> bool:
    if not groups:
        return True
    return any(all(matches(memory.metadata, condition) for condition in group) for group in groups)


def matches(metadata: dict[str, Any], condition: dict[str, Any]) -> bool:
    present = metadata.get(condition["key"])
    values = present if isinstance(present, list) else [present]  # a merged key keeps every value it was given
    wanted = condition["value"]
    if condition["op"] == "EQUAL":
        result = wanted in values
    else:
        comparable = [v for v in values if isinstance(v, type(wanted)) and not isinstance(v, bool)]
        result = any(v > wanted if condition["op"] == "GREATER_THAN" else v < wanted for v in comparable)
    return result != condition["negate"]
