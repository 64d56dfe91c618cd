"""LoCoMo the way agents feed memory: each LoCoMo session an ADK session, then ``add_session_to_memory``.

``bench/memory_quality.py --via-sessions user|speaker`` ingests through here instead
of ``do_remember``: the turns are appended to ``PostgresSessionService`` sessions
and ``PostgresMemoryService(consolidate_inline=True)`` consolidates each session
on the real path (the configured extractor — offline without a model key — then
embedding, deduplication, superseding). Each event's id is the turn's ``dia_id``,
so a memory's ``source_event_ids`` still name the evidence it holds.

* ``user``: authored ``"user"`` (as ADK's runner writes a person's turns), the
  speaker's name in the text (``"Caroline: …"``);
* ``speaker``: authored by the speaker's name, the text as said — a multi-party
  session. Both with content role ``user``: both speakers are people.
"""

from __future__ import annotations

import asyncio
import time
from collections import Counter
from dataclasses import dataclass, field
from typing import Any


@dataclass
class Ingested:
    """What one conversation's sessions became."""

    sessions: int = 0
    events: int = 0
    seconds: float = 0.0
    dropped: Counter[str] = field(default_factory=Counter)
    """Why events made no memory (``memory_app.extraction.DROP_REASONS``)."""


def remember_via_sessions(conversation: Any, *, app: str, authored: str) -> Ingested:
    """Append the conversation's sessions through ADK's session service and hand each to memory; timed."""
    return asyncio.run(_remember(conversation, app=app, authored=authored))


async def _remember(conversation: Any, *, app: str, authored: str) -> Ingested:
    from google.adk.events.event import Event
    from google.genai import types

    from cognizes.adk import PostgresMemoryService, PostgresSessionService
    from memory_app.extraction import drop_reason
    from sessions_app.adk import event_json

    sessions, memory = PostgresSessionService(), PostgresMemoryService(consolidate_inline=True)
    done = Ingested()
    by_session: dict[int, list[Any]] = {}
    for turn in conversation.turns:
        by_session.setdefault(turn.session, []).append(turn)
    started = time.perf_counter()
    for number, turns in sorted(by_session.items()):
        session = await sessions.create_session(
            app_name=app, user_id=conversation.sample_id, session_id=f"session_{number}"
        )
        base = turns[0].time.timestamp() if turns[0].time else time.time()
        for i, turn in enumerate(turns):
            text = turn.text if authored == "user" else turn.text.removeprefix(f"{turn.speaker}: ")
            event = Event(
                id=turn.dia_id,
                invocation_id=f"session-{number}",
                author="user" if authored == "user" else turn.speaker,
                timestamp=base + i,
                content=types.Content(role="user", parts=[types.Part(text=text)]),
            )
            await sessions.append_event(session, event)
            reason = drop_reason(event_json(event))
            if reason:
                done.dropped[reason] += 1
        await memory.add_session_to_memory(session)
        done.sessions += 1
        done.events += len(turns)
    done.seconds = time.perf_counter() - started
    return done
