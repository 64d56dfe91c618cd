"""One turn per session at a time, across processes and across the surfaces that run agents.

The run API and A2A both claim a session before its turn: a second turn of the
same session would interleave its events with the first one's and make the
later writer fail with a stale version halfway. The claim is a key in Redis
(Django's cache), released when the turn ends and expiring after
COGNIZES_RUN_TIMEOUT_SECONDS should a process die mid-turn. What a turn
starts from (the user's message) and how a streamed turn runs are here too, so
every surface that runs agents (the run API, Vertex's ``:streamQuery``) shares them.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import logging
import uuid
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Any

from django.conf import settings
from django.core.cache import cache
from google.adk.agents.run_config import RunConfig
from google.adk.events.event import Event
from google.adk.runners import Runner
from google.genai import types
from pydantic import ValidationError as PydanticValidationError

logger = logging.getLogger(__name__)
BUSY = "Another turn of this session is running; try again when it has finished."


class SessionBusy(Exception):
    """Another turn of the session holds it."""

    def __init__(self) -> None:
        super().__init__(BUSY)


def claim_turn(app_name: str, user_id: str, session_id: str) -> Callable[[], None]:
    """Claim the session for one turn (``SessionBusy`` if taken); returns the release function."""
    key = "cognizes:turn:" + hashlib.sha256(json.dumps([app_name, user_id, session_id]).encode()).hexdigest()
    token = uuid.uuid4().hex
    if not cache.add(key, token, timeout=settings.COGNIZES_RUN_TIMEOUT_SECONDS):
        raise SessionBusy()

    def release() -> None:
        if cache.get(key) == token:
            cache.delete(key)

    return release


class InvalidMessage(ValueError):
    """The user's message is not one a turn can start from; ``field`` says which input it was."""

    def __init__(self, field: str, message: str) -> None:
        super().__init__(message)
        self.field = field


def check_message_text(text: str) -> str:
    """A user's message as text: not blank, at most COGNIZES_RUN_MESSAGE_MAX_CHARS characters."""
    if not text.strip():
        raise InvalidMessage("message", "The message is empty.")
    if len(text) > settings.COGNIZES_RUN_MESSAGE_MAX_CHARS:
        raise InvalidMessage("message", f"At most {settings.COGNIZES_RUN_MESSAGE_MAX_CHARS} characters.")
    return text


def user_message(*, text: str | None = None, content: Any = None) -> types.Content:
    """The turn's new message, from text or from an ADK/Gemini Content as JSON (a user's, with parts)."""
    if text is not None:
        return types.Content(role="user", parts=[types.Part(text=check_message_text(text))])
    try:
        message = types.Content.model_validate(content)
    except PydanticValidationError as error:
        raise InvalidMessage("content", "; ".join(e["msg"] for e in error.errors()[:5])) from None
    if message.role != "user" or not message.parts:
        raise InvalidMessage("content", "A user message: role 'user' and at least one part.")
    texts = "".join(part.text or "" for part in message.parts)
    if len(texts) > settings.COGNIZES_RUN_MESSAGE_MAX_CHARS:
        raise InvalidMessage("content", f"At most {settings.COGNIZES_RUN_MESSAGE_MAX_CHARS} characters of text.")
    return message


_turns_in_flight: set[asyncio.Task[None]] = set()
"""Streamed turns still running (a strong reference: the loop keeps only weak ones)."""
_END = object()


class _Failed:
    def __init__(self, error: BaseException) -> None:
        self.error = error


async def stream_turn(
    runner: Runner,
    arguments: dict[str, Any],
    release: Callable[[], None],
    *,
    run_config: RunConfig | None = None,
    after: Callable[[], Awaitable[None]] | None = None,
) -> AsyncIterator[Event]:
    """The turn's events as the agent makes them; the turn runs as a task of its own and finishes even if the
    reader leaves. What the turn raised is raised here after its last event.

    Cut off midway, a turn could leave a tool call without its response in the
    session, which the model would then be shown on every later turn. ``release``
    (the session's claim) and ``after`` run when the turn ends, read or not.
    """
    queue: asyncio.Queue[Any] = asyncio.Queue()

    async def turn() -> None:
        try:
            async for event in runner.run_async(**arguments, run_config=run_config or RunConfig()):
                queue.put_nowait(event)
        except Exception as error:
            queue.put_nowait(_Failed(error))
        finally:
            release()
            try:
                if after is not None:
                    await after()
            except Exception:
                logger.exception("clean-up after the turn of session %s failed", arguments.get("session_id"))
            finally:
                queue.put_nowait(_END)

    task = asyncio.get_running_loop().create_task(turn())
    _turns_in_flight.add(task)
    task.add_done_callback(_turns_in_flight.discard)
    while (item := await queue.get()) is not _END:
        if isinstance(item, _Failed):
            raise item.error
        yield item
