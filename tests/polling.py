"""Waiting in tests for what another thread, process or worker does."""

from __future__ import annotations

import asyncio
import inspect
import time
from collections.abc import Awaitable, Callable
from typing import Any


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


def wait_for(check: Callable[[], Any], timeout: float, what: str) -> float:
    """Block until ``check()`` is truthy (failing the test, naming ``what``, after ``timeout``); the seconds it took."""
    start = time.monotonic()
    while not check():
        assert time.monotonic() - start < timeout, f"{what} within {timeout} s"
        time.sleep(0.2)
    return time.monotonic() - start
