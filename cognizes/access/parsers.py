"""Request parsing with a size limit: an oversized body is a 413, not a memory spike."""

from __future__ import annotations

import io
import math
from collections.abc import Mapping
from typing import Any

from django.conf import settings
from rest_framework import exceptions, status
from rest_framework.parsers import JSONParser


class PayloadTooLarge(exceptions.APIException):
    status_code = status.HTTP_413_REQUEST_ENTITY_TOO_LARGE
    default_detail = "The request body is too large."
    default_code = "payload_too_large"


class LimitedJSONParser(JSONParser):
    """JSON bodies up to ``COGNIZES_API_MAX_BODY_BYTES``: a larger body is refused before it is parsed, and one
    nested deeper than ``MAX_JSON_DEPTH``, holding NUL or a number past a double's range after it (NaN and
    Infinity, which JSON has not, are refused by DRF's strict parsing)."""

    limit_setting = "COGNIZES_API_MAX_BODY_BYTES"
    """The setting of the largest body taken (a view allowed larger bodies names its own, as body_limit does)."""

    def parse(self, stream: Any, media_type: str | None = None, parser_context: Mapping[str, Any] | None = None) -> Any:
        limit = getattr(settings, self.limit_setting)
        request = (parser_context or {}).get("request")
        declared = int(request.META.get("CONTENT_LENGTH") or 0) if request is not None else 0
        if declared > limit:
            raise PayloadTooLarge(f"The request body is larger than {limit} bytes.")
        body = stream.read(limit + 1) if stream is not None else b""
        if len(body) > limit:
            raise PayloadTooLarge(f"The request body is larger than {limit} bytes.")
        try:
            data = super().parse(io.BytesIO(body), media_type, parser_context)
        except RecursionError:
            raise exceptions.ParseError("The JSON is nested too deeply.") from None
        refuse_unstorable(data)
        return data


MAX_JSON_DEPTH = 100
"""Deeper JSON is refused: what reads it later (ADK's models, the Vertex translation) recurses per level."""


def refuse_unstorable(data: Any) -> None:
    """Refuse JSON nested deeper than ``MAX_JSON_DEPTH``, or holding NUL or an infinite number (PostgreSQL's jsonb
    stores neither; the number also overflowed ``int()`` in the views); no recursion."""
    stack = [(data, 1)]
    while stack:
        value, depth = stack.pop()
        if depth > MAX_JSON_DEPTH:
            raise exceptions.ParseError(f"The JSON is nested more than {MAX_JSON_DEPTH} levels deep.")
        if isinstance(value, dict):
            stack.extend((item, depth) for item in value)  # keys: checked as text, at the object's depth
            stack.extend((item, depth + 1) for item in value.values())
        elif isinstance(value, list):
            stack.extend((item, depth + 1) for item in value)
        elif isinstance(value, str) and "\x00" in value:
            raise exceptions.ParseError("Text may not contain NUL (\\u0000) characters; PostgreSQL cannot store them.")
        elif isinstance(value, float) and not math.isfinite(value):  # 1e400: Python reads it as inf
            raise exceptions.ParseError(
                "Numbers must be finite: a number beyond ±1.8e308 (such as 1e400) cannot be stored or compared."
            )
