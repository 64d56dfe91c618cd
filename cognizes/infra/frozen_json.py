"""JSON values served again and again unchanged, with their encodings kept.

A stored event is rendered as the same Vertex ``SessionEvent`` at every turn of an
agent (``vertex_app.event_cache`` keeps them). Writing it was still the work of
every response: its JSON text (``cognizes.access.renderers``), and over gRPC, costlier
still, its protobuf message (``cognizes.infra.proto_json``; docs/measured.md). A ``FrozenJson`` keeps both the
first time they are made, and the writers reuse them.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pydantic_core
from google.protobuf.descriptor import Descriptor


class FrozenJson(dict):
    """A dict its maker never changes once it is written: its JSON text, and its wire bytes as each message
    type it is read into, are made once and reused (the same text, the same message)."""

    __slots__ = ("_json", "_wire")

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._json: bytes | None = None
        self._wire: dict[Descriptor, bytes] = {}

    def json(self, fallback: Callable[[Any], Any] | None = None) -> bytes:
        """``pydantic_core.to_json(self, fallback=fallback)``, written the first time only."""
        if self._json is None:
            self._json = pydantic_core.to_json(self, fallback=fallback)
        return self._json

    def wire(self, descriptor: Descriptor) -> bytes | None:
        """The message of type ``descriptor`` it was read into, serialized; None until it has been."""
        return self._wire.get(descriptor)

    def keep_wire(self, descriptor: Descriptor, wire: bytes) -> None:
        self._wire[descriptor] = wire
