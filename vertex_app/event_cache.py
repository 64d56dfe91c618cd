"""Vertex ``SessionEvent`` resources of stored events, kept per process and checked against the row each time.

An agent reads its whole session at every turn (ADK's Vertex client lists every
event), so a ``ListEvents`` mostly renders events it rendered before: each one
renamed to ``rawEvent`` and shaped as a ``SessionEvent`` (~6.5 µs, a third of a
50-event ``ListEvents``), and over gRPC read into a protobuf message (~15 µs more,
half of the call). Stored events never change (a session's rows are only ever
deleted with it), so a resource made once can be served again.

Nothing is trusted to stay true, though: an entry is found by the session's row
id, the name the caller spelled it by and the event's version, and used only if
the event as read from the database now (``data`` and any verbatim ``rawEvent``)
equals the one it was made from — a C-level comparison of the decoded JSON, much
cheaper than rebuilding. A row rewritten in place, a database recreated with the
same ids, or another tenant's session of the same id can therefore never be
answered from another event's entry. The database is still read (and the caller's
scope checked) on every request; only the rendering is saved.

Entries are ``FrozenJson`` (``infra.frozen_json``): their JSON text and the protobuf
encoding the gRPC transcoder reads them as are written once, then reused. They are shared between
requests and must not be changed by whoever receives them. At most
``COGNIZES_VERTEX_EVENT_CACHE`` events (default 4096) are kept, the least recently
served going first; 0 turns the cache off.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from typing import Any, Callable

from django.conf import settings

from infra.frozen_json import FrozenJson
from sessions_app.services import StoredEvent

Build = Callable[[str, StoredEvent], dict[str, Any]]


class EventResources:
    """A bounded, least-recently-used map of (session row id, session name, version) to the resource served."""

    def __init__(self, size: int) -> None:
        self.size = size
        self._entries: OrderedDict[tuple[int, str, int], tuple[dict[str, Any], Any, FrozenJson]] = OrderedDict()
        self._lock = threading.Lock()

    def resource(self, session_pk: int, session_name: str, stored: StoredEvent, build: Build) -> dict[str, Any]:
        """``build(session_name, stored)``, or the resource it gave for this very event before."""
        if self.size <= 0:
            return build(session_name, stored)
        key = (session_pk, session_name, stored.version)
        entry = self._entries.get(key)
        if entry is not None and entry[0] == stored.data and entry[1] == stored.raw_event:
            with self._lock:
                if key in self._entries:
                    self._entries.move_to_end(key)
            return entry[2]
        made = FrozenJson(build(session_name, stored))
        with self._lock:
            self._entries[key] = (stored.data, stored.raw_event, made)
            self._entries.move_to_end(key)
            while len(self._entries) > self.size:
                self._entries.popitem(last=False)
        return made

    def __len__(self) -> int:
        return len(self._entries)

    def clear(self) -> None:
        with self._lock:
            self._entries.clear()


events = EventResources(settings.COGNIZES_VERTEX_EVENT_CACHE)
