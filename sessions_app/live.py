"""Live events: follow a session and get every event as it is stored, by any process.

A trigger on ``events`` (migration 0002) sends ``NOTIFY cognizes_events,
'<session pk>:<version>'`` when an insert commits. Each event loop of a process
keeps one listening connection (``EventHub``), opened while someone follows a
session, and wakes that session's followers. A woken follower reads the events
after the last version it sent from the table, so notifications are only a
doorbell: none can be missed between the first read and LISTEN (LISTEN comes
first), coalesced or lost on a reconnect (every follower re-reads then), and
events always come out in version order.
"""

from __future__ import annotations

import asyncio
import logging
import weakref
from collections import defaultdict
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

from cognizes.infra import direct_db
from cognizes.infra.db_threads import run_in_db_thread
from sessions_app import services

logger = logging.getLogger(__name__)
CHANNEL = "cognizes_events"
RECONNECT_DELAY_SECONDS = 1.0


class EventHub:
    """One LISTEN connection for all followers on an event loop, open while there are any."""

    def __init__(self) -> None:
        self._followers: dict[int, set[asyncio.Event]] = defaultdict(set)
        self._task: asyncio.Task[None] | None = None
        self._listening: asyncio.Future[None] | None = None

    @asynccontextmanager
    async def watch(self, session_pk: int) -> AsyncIterator[asyncio.Event]:
        """An ``asyncio.Event`` set whenever the session may have new events; LISTEN is on when entered."""
        wake = asyncio.Event()
        self._followers[session_pk].add(wake)
        try:
            if self._task is None or self._task.done():
                self._listening = asyncio.get_running_loop().create_future()
                self._task = asyncio.create_task(self._listen(self._listening), name="cognizes-event-hub")
            assert self._listening is not None  # set with the task
            await asyncio.shield(self._listening)
            yield wake
        finally:
            followers = self._followers.get(session_pk, set())
            followers.discard(wake)
            if not followers:
                self._followers.pop(session_pk, None)
            if not self._followers and self._task is not None:
                self._task.cancel()
                self._task = None

    async def _listen(self, listening: asyncio.Future[None]) -> None:
        while True:
            try:
                async with await direct_db.connect_async("cognizes live events") as conn:
                    await conn.execute(f"LISTEN {CHANNEL}")
                    if not listening.done():
                        listening.set_result(None)
                    self._wake_all()  # whatever was stored while we were reconnecting
                    async for notify in conn.notifies():
                        session_pk = int(notify.payload.partition(":")[0])
                        for wake in self._followers.get(session_pk, ()):
                            wake.set()
            except asyncio.CancelledError:
                raise
            except Exception as error:
                if not listening.done():
                    listening.set_exception(error)
                    return
                logger.warning("live events: listening connection lost (%s); reconnecting", error)
                await asyncio.sleep(RECONNECT_DELAY_SECONDS)

    def _wake_all(self) -> None:
        for followers in self._followers.values():
            for wake in followers:
                wake.set()


_hubs: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, EventHub] = weakref.WeakKeyDictionary()


def event_hub() -> EventHub:
    """The hub of the running event loop."""
    loop = asyncio.get_running_loop()
    hub = _hubs.get(loop)
    if hub is None:
        hub = _hubs[loop] = EventHub()
    return hub


async def follow(
    session_pk: int, *, after_version: int = 0, heartbeat_seconds: float = 15.0
) -> AsyncIterator[tuple[int, dict[str, Any]] | None]:
    """(version, event) for each event after ``after_version``: those stored already, then new ones.

    Yields None after ``heartbeat_seconds`` without news (so a server can keep
    the connection alive, and notice a client that left). Ends when the session
    is deleted. ``session_pk`` comes from ``services.get_session_pk``, after the
    caller's scope check.
    """
    async with event_hub().watch(session_pk) as wake:
        while True:
            wake.clear()
            events = await run_in_db_thread(services.get_events_after_pk, session_pk, after_version=after_version)
            if events is None:
                return
            for version, event in events:
                yield version, event
                after_version = version
            try:  # cleared before the read, so a commit after it has rung already
                await asyncio.wait_for(wake.wait(), heartbeat_seconds)
            except TimeoutError:
                yield None
