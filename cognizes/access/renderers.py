"""JSON responses written by pydantic-core's serializer, for views whose data is JSON's own types.

DRF's ``JSONRenderer`` writes through the ``json`` module with a Python-level
``default`` hook: a page of 50 Vertex events (each with its ``rawEvent``) took as
long to write as to read from PostgreSQL. pydantic-core (already installed:
pydantic's own core, which ADK depends on) writes the same JSON in a fraction of
that (docs/measured.md). Its bytes are DRF's for strings, numbers, booleans, null, lists and
string-keyed dicts (compact, UTF-8, U+2028/U+2029 escaped as DRF escapes them);
numbers may be spelled differently (``1e-7`` for ``1e-07``), the same values.

It is not a drop-in for every view: pydantic-core writes datetimes, Decimals and
UUIDs its own way, not DRF's, so only views that build their data from JSON they
read or wrote (``rfc3339`` strings for times) use it. Anything it does not know
goes through DRF's encoder; NaN and infinities, which pydantic-core would write as
bare constants, go to DRF's renderer, which refuses them as before.

A caller in the same process that reads the view's data rather than its bytes (the
gRPC transcoder, which builds protobuf messages from it) marks its request with
``DATA_ONLY``: a successful answer is then not written at all (a share of a 50-event
``ListEvents`` worth saving); errors are written as ever. A page of ``FrozenJson`` values (stored
events, ``vertex_app.event_cache``) is written with each one's kept text.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

import pydantic_core
from rest_framework.renderers import JSONRenderer

from cognizes.infra.frozen_json import FrozenJson

_LINE_SEPARATOR, _PARAGRAPH_SEPARATOR = "\u2028".encode(), "\u2029".encode()
DATA_ONLY = "cognizes.data_only"
"""A WSGI environ key (no HTTP header can set one: those are ``HTTP_*``) saying the caller reads the response's
``data``, so a successful one is left unwritten."""


class FastJSONRenderer(JSONRenderer):
    """``JSONRenderer``'s output for data of JSON's own types, written by pydantic-core."""

    def render(
        self, data: Any, accepted_media_type: str | None = None, renderer_context: Mapping[str, Any] | None = None
    ) -> bytes:
        if data is None or _data_only(renderer_context):
            return b""
        if (
            self.get_indent(accepted_media_type or "", renderer_context or {}) is not None
            or not self.compact
            or self.ensure_ascii
        ):
            return super().render(data, accepted_media_type, renderer_context)
        out = _write(data, self.encoder_class().default)
        if b"NaN" in out or b"Infinity" in out:  # perhaps a bare constant (or only text): DRF's renderer decides
            return super().render(data, accepted_media_type, renderer_context)
        if _LINE_SEPARATOR in out or _PARAGRAPH_SEPARATOR in out:
            out = out.replace(_LINE_SEPARATOR, b"\\u2028").replace(_PARAGRAPH_SEPARATOR, b"\\u2029")
        return out


def _write(data: Any, fallback: Callable[[Any], Any]) -> bytes:
    """``pydantic_core.to_json(data)``, with the kept text of each ``FrozenJson`` in a list of the top-level
    dict (a page of stored events) spliced in: compact JSON of a dict is its keys' and values' JSON joined."""
    if (
        not isinstance(data, dict)
        or not any(_frozen(value) for value in data.values())
        or not all(isinstance(key, str) for key in data)
    ):
        return pydantic_core.to_json(data, fallback=fallback)
    return (
        b"{"
        + b",".join(
            pydantic_core.to_json(key)
            + b":"
            + (
                b"[" + b",".join(item.json(fallback) for item in value) + b"]"
                if _frozen(value)
                else pydantic_core.to_json(value, fallback=fallback)
            )
            for key, value in data.items()
        )
        + b"}"
    )


def _frozen(value: Any) -> bool:
    return type(value) is list and bool(value) and all(type(item) is FrozenJson for item in value)


def _data_only(context: Mapping[str, Any] | None) -> bool:
    if not context:
        return False
    request, response = context.get("request"), context.get("response")
    return (
        request is not None
        and response is not None
        and response.status_code < 300
        and bool(request.META.get(DATA_ONLY))
    )
