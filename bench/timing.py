"""What every benchmark's clock needs."""

from __future__ import annotations

import gc
from collections.abc import Iterator
from contextlib import contextmanager


@contextmanager
def no_gc() -> Iterator[None]:
    """As ``timeit`` does: collect garbage first, and none while the clock runs."""
    gc.collect()
    gc.disable()
    try:
        yield
    finally:
        gc.enable()
