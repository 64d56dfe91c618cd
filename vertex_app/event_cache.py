"""Vertex ``SessionEvent`` resources of stored events, kept per process and checked against the row each time.

An agent reads its whole session at every turn (ADK's Vertex client lists every
event), so a ``ListEvents`` mostly renders events it rendered before: each one
renamed to ``rawEvent`` and shaped as a ``SessionEvent`` (a third of a 50-event
``ListEvents``), and over gRPC read into a protobuf message (half of the call;
docs/measured.md). Stored events never change (a session's rows are only ever
deleted with it), so a resource made once can be served again.

Nothing is trusted to stay true, though: an entry is found by the session's row
id, the name the caller spelled it by and the event's version, and used only if
the event's JSON text as read from the database now (``data`` and any verbatim
``rawEvent``) is the text it was made from — a string comparison, so a kept event
is neither decoded nor rebuilt. A row rewritten in place, a database recreated with the
same ids, or another tenant's session of the same id can therefore never be
answered from another event's entry. The database is still read (and the caller's
scope checked) on every request; only the rendering is saved.

Entries are ``FrozenJson`` (``cognizes.infra.frozen_json``): their JSON text and the protobuf
encoding the gRPC transcoder reads them as are written once, then reused. They are shared between
requests and must not be changed by whoever receives them. Events whose JSON text
comes to at most ``COGNIZES_VERTEX_EVENT_CACHE_BYTES`` together (default 16 MiB; the
Python objects behind it take a few times that) are kept, the least recently served
going first, so a few huge events cannot hold a process's memory; 0 turns it off.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Callable
from typing import Any

from django.conf import settings

from cognizes.infra.frozen_json import FrozenJson
from sessions_app.services import StoredEvent, StoredEventText

Build = Callable[[str, StoredEvent], dict[str, Any]]


class EventResources:
    """A least-recently-used map of (session row id, session name, version) to the resource served, bounded by
    the length of the resources' JSON text."""

    def __init__(self, max_bytes: int) -> None:
        self.max_bytes = max_bytes
        self.bytes = 0
        self._entries: OrderedDict[tuple[int, str, int], tuple[Any, Any, FrozenJson, int]] = OrderedDict()
        self._lock = threading.Lock()

    def resource(self, session_pk: int, session_name: str, stored: StoredEventText, build: Build) -> dict[str, Any]:
        """``build(session_name, stored.decoded())``, or the resource it gave for this very text before."""
        if self.max_bytes <= 0:
            return build(session_name, stored.decoded())
        key = (session_pk, session_name, stored.version)
        entry = self._entries.get(key)
        if entry is not None and entry[0] == stored.data and entry[1] == stored.raw_event:
            with self._lock:
                if key in self._entries:
                    self._entries.move_to_end(key)
            return entry[2]
        made = FrozenJson(build(session_name, stored.decoded()))
        try:
            size = len(made.json())  # what a REST answer writes anyway; kept with it
        except Exception:  # not JSON's own types: served as made, not kept (the renderer decides)
            return dict(made)
        if size > self.max_bytes:
            return made
        with self._lock:
            old = self._entries.pop(key, None)
            if old is not None:
                self.bytes -= old[3]
            self._entries[key] = (stored.data, stored.raw_event, made, size)
            self.bytes += size
            while self.bytes > self.max_bytes:
                self.bytes -= self._entries.popitem(last=False)[1][3]
        return made

    def __len__(self) -> int:
        return len(self._entries)

    def clear(self) -> None:
        with self._lock:
            self._entries.clear()
            self.bytes = 0


events = EventResources(settings.COGNIZES_VERTEX_EVENT_CACHE_BYTES)
