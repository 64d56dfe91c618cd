"""Google's JSON as Vertex AI clients write it: field names, timestamps, durations.

Google's clients mix spellings in one body: top-level fields in lowerCamelCase,
dicts the caller handed over in snake_case (``actions.state_delta``,
``directMemoriesSource.direct_memories``). A proto3 JSON parser accepts both,
so ``message`` does too, and refuses names it does not know, as Vertex does.
Maps (state, scope, labels, metadata) are data: their keys are left alone.

Timestamps and durations come in both forms Google's servers take: the canonical
strings (``"2026-11-30T16:42:45Z"``, ``"3.5s"``) and the messages' own fields
(``{"seconds": …, "nanos": …}``), which ADK for Java sends (Jackson serialises
``com.google.protobuf.Timestamp`` field by field).
"""

from __future__ import annotations

import enum as enums
import re
from collections.abc import Mapping
from datetime import UTC, datetime, timedelta
from decimal import ROUND_HALF_EVEN, Decimal
from typing import Any, Union

from cognizes.infra.casing import camel as camel  # the surface's modules spell them wire.camel, wire.snake
from cognizes.infra.casing import snake as snake
from vertex_app.errors import InvalidArgument

# A message spec: field name (snake_case) → None (a value or map, kept as given),
# another spec (a nested message), or a one-item list holding a spec (a repeated message).
Spec = Mapping[str, Union["Spec", list, None]]

_DURATION = re.compile(r"^(-?\d+(?:\.\d{1,9})?)s$")
_FRACTION = re.compile(r"\.(\d{7,})")
_MICROSECOND = Decimal("0.000001")
_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)
_MIN_TIMESTAMP, _MAX_TIMESTAMP = -62135596800, 253402300799  # proto's Timestamp range: years 1 to 9999


def message(data: Any, spec: Spec, *, where: str = "") -> dict[str, Any]:
    """``data`` with every field name in snake_case; 400 for a non-object or an unknown or repeated name."""
    if not isinstance(data, dict):
        raise InvalidArgument(f"{where or 'The request body'} must be a JSON object.")
    out: dict[str, Any] = {}
    for key, value in data.items():
        name = snake(key)
        if name not in spec:
            raise InvalidArgument(f"Unknown name \"{key}\" at '{where or 'body'}'.")
        if name in out:
            raise InvalidArgument(f"Field \"{name}\" is given twice at '{where or 'body'}'.")
        inner = spec[name]
        path = f"{where}.{name}" if where else name
        if isinstance(inner, list) and value is not None:
            if not isinstance(value, list):
                raise InvalidArgument(f"'{path}' must be a list.")
            value = [message(item, inner[0], where=f"{path}[{i}]") for i, item in enumerate(value)]
        elif isinstance(inner, Mapping) and value is not None:
            value = message(value, inner, where=path)
        out[name] = value
    return out


def string(value: Any, name: str, *, required: bool = False) -> str:
    """A string field; 400 if it is another type (or missing/empty when required)."""
    if value is None or value == "":
        if required:
            raise InvalidArgument(f"'{name}' is required.")
        return ""
    if not isinstance(value, str):
        raise InvalidArgument(f"'{name}' must be a string.")
    return value


def enum(value: Any, values: type[enums.IntEnum], name: str) -> str:
    """An enum field as its value's name ('' when absent): proto3 JSON writes enums by name or by number.

    Google's GAPIC REST clients send numbers (``$alt=json;enum-encoding=int``);
    ``values`` is the proto's enum as Google publishes it, so the numbers are its own.
    """
    if value is None or value == "":
        return ""
    if isinstance(value, bool) or not isinstance(value, (int, str)):
        raise InvalidArgument(f"'{name}' must be an enum value's name or number.")
    if isinstance(value, int) or value.isdigit():
        try:
            return values(int(value)).name
        except ValueError:
            raise InvalidArgument(f"'{name}' has no value {value}.") from None
    return value.upper()


def mapping(value: Any, name: str) -> dict[str, Any]:
    """A map field (JSON object); absent or null is empty."""
    if value is None:
        return {}
    if not isinstance(value, dict):
        raise InvalidArgument(f"'{name}' must be a JSON object.")
    return value


def integer(value: Any, name: str, *, default: int, low: int, high: int) -> int:
    """An integer field or query parameter (proto3 JSON may quote it) within [low, high]."""
    if value is None or value == "":
        return default
    try:
        number = int(value)
    except (TypeError, ValueError, OverflowError):  # OverflowError: an infinite float (1e400 over gRPC's JSON)
        raise InvalidArgument(f"'{name}' must be an integer.") from None
    if isinstance(value, float) or not low <= number <= high:
        raise InvalidArgument(f"'{name}' must be an integer from {low} to {high}.")
    return number


def timestamp(value: Any, name: str) -> datetime:
    """An RFC 3339 timestamp (``Z`` or an offset, 0–9 fraction digits), or ``{seconds, nanos}``, as an aware
    datetime."""
    if isinstance(value, dict):
        seconds = _seconds_and_nanos(value, name)
        if not _MIN_TIMESTAMP <= seconds <= _MAX_TIMESTAMP:
            raise InvalidArgument(f"'{name}' is outside 0001-01-01 to 9999-12-31.")
        # From the integers, not the float (which has no nanoseconds left at today's epoch): the nanoseconds round to
        # the microsecond as a string's fraction does (``_to_microseconds``), ties to even.
        try:
            return _EPOCH + timedelta(
                seconds=int(value.get("seconds", 0)), microseconds=int(value.get("nanos", 0)) / 1000
            )
        except OverflowError:
            raise InvalidArgument(f"'{name}' is outside 0001-01-01 to 9999-12-31.") from None
    if not isinstance(value, str):
        raise InvalidArgument(f'\'{name}\' must be an RFC 3339 timestamp string or {{"seconds", "nanos"}}.')
    text, carry = _to_microseconds(value.strip())
    try:
        parsed = datetime.fromisoformat(text.replace("z", "Z"))
    except ValueError:
        raise InvalidArgument(f"'{name}' is not an RFC 3339 timestamp: {value!r}.") from None
    if parsed.tzinfo is None:
        raise InvalidArgument(f"'{name}' needs a time zone ('Z' or an offset): {value!r}.")
    try:
        return parsed + carry
    except OverflowError:  # 9999-12-31T23:59:59.9999999Z rounds past year 9999
        raise InvalidArgument(f"'{name}' is outside 0001-01-01 to 9999-12-31.") from None


def _to_microseconds(text: str) -> tuple[str, timedelta]:
    """An RFC 3339 time with its fraction rounded to microseconds (Python keeps no more), and the second it carries.

    Rounded, not cut, and ties to even: so a time sent to the nanosecond over gRPC is the microsecond that the same
    time sent as a float (``datetime.fromtimestamp``, ``sessions_app.services.to_microseconds``) is (issue 43 item 11).
    """
    match = _FRACTION.search(text)
    if match is None:
        return text, timedelta()
    rounded = Decimal("0." + match[1]).quantize(_MICROSECOND, rounding=ROUND_HALF_EVEN)
    carry = int(rounded)  # .9999996 → 1.000000
    return text[: match.start()] + f"{rounded - carry:.6f}"[1:] + text[match.end() :], timedelta(seconds=carry)


def duration(value: Any, name: str) -> timedelta:
    """A proto3 JSON duration such as ``"7200s"`` or ``"3.5s"``, or ``{seconds, nanos}``."""
    if isinstance(value, dict):
        seconds = _seconds_and_nanos(value, name)
    else:
        match = _DURATION.match(value) if isinstance(value, str) else None
        if match is None:
            raise InvalidArgument(f"'{name}' must be a duration in seconds such as \"3600s\".")
        seconds = float(match.group(1))
    if not 0 <= seconds <= 100 * 365 * 86400:
        raise InvalidArgument(f"'{name}' must be between 0s and 100 years.")
    return timedelta(seconds=seconds)


def _seconds_and_nanos(value: dict[str, Any], name: str) -> float:
    """Seconds of a Timestamp or Duration written as its fields (proto3 JSON may quote the int64)."""
    unknown = sorted(set(value) - {"seconds", "nanos"})
    if unknown:
        raise InvalidArgument(f"'{name}' has unknown fields {', '.join(unknown)}: give seconds and nanos.")
    try:
        seconds, nanos = int(value.get("seconds", 0)), int(value.get("nanos", 0))
    except (TypeError, ValueError):
        raise InvalidArgument(f"'{name}.seconds' and '.nanos' must be integers.") from None
    if isinstance(value.get("seconds"), float) or isinstance(value.get("nanos"), float) or not 0 <= nanos < 10**9:
        raise InvalidArgument(f"'{name}.seconds' must be an integer and '.nanos' an integer from 0 to 999999999.")
    return seconds + nanos / 1e9


def duration_text(value: timedelta) -> str:
    """A duration as proto3 JSON writes it (whole seconds here): ``"3600s"``."""
    return f"{int(value.total_seconds())}s"


def expiry(body: dict[str, Any]) -> datetime | None:
    """When a resource expires by its ``ttl`` or ``expireTime`` (one of them at most), or None."""
    if body.get("ttl") is not None and body.get("expire_time") is not None:
        raise InvalidArgument("Give ttl or expireTime, not both.")
    if body.get("ttl") is not None:
        return datetime.now(UTC) + duration(body["ttl"], "ttl")
    if body.get("expire_time") is not None:
        return timestamp(body["expire_time"], "expireTime")
    return None


def rfc3339(moment: datetime | float | None) -> str | None:
    """A datetime or epoch seconds as Google writes timestamps (UTC, microseconds, ``Z``)."""
    if moment is None:
        return None
    if not isinstance(moment, datetime):
        moment = datetime.fromtimestamp(moment, tz=UTC)
    return moment.astimezone(UTC).isoformat(timespec="microseconds").replace("+00:00", "Z")


def field_mask(value: Any, allowed: set[str]) -> set[str] | None:
    """The fields an ``updateMask`` names (either spelling), or None when there is none."""
    if value in (None, ""):
        return None
    names = {snake(part.strip()) for part in str(value).split(",") if part.strip()}
    unknown = sorted(names - allowed)
    if unknown:
        raise InvalidArgument(f"updateMask names fields that cannot be updated: {', '.join(unknown)}.")
    return names
