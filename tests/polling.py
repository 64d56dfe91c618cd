"""Waiting in async tests for what another thread, process or worker does."""

from __future__ import annotations

import asyncio
import inspect
import time
from typing import Any, Awaitable, Callable


async def eventually(check: Callable[[], Any | Awaitable[Any]], *, timeout: float = 60.0, interval: float = 0.1) -> Any:
    """Call ``check`` (sync or async) until it returns something truthy; returns its last result."""
    deadline = time.monotonic() + timeout
    while True:
        result = check()
        if inspect.isawaitable(result):
            result = await result
        if result or time.monotonic() > deadline:
            return result
        await asyncio.sleep(interval)
