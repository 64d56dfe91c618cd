"""The one module of limits on the work a tenant can ask for: every bound a request or a job keeps is named here.

Everything a tenant sends is hostile (DESIGN.md, "Trust boundaries"), and what it asks of
the server must be bounded before the work starts, not noticed after: a 500 KB filter
parsed, a 1 MB query embedded, a small zip unpacked to gigabytes, a document cut into
millions of chunks. Each limit an operator may move is a setting read here at the moment it
is checked (so one is raised without a code change, and a test overrides it), and a refusal
names the limit and that setting; the few bounds no real request comes near are constants here.

A refusal is ``LimitExceeded``: a ``ValueError`` for the services that raise it, and a
DRF ``APIException`` (400) so that every surface's error handler answers it as it
answers a bad field, in its own shape, with no translation per view. Parsing a document
on a worker keeps to a deadline (``parse_deadline``) checked between pages, blocks and
records, so a hostile file cannot hold a worker past ``COGNIZES_KNOWLEDGE_PARSE_SECONDS``.

The request body's size is enforced by ``cognizes.access.body_limit`` before a body is read, after the key is checked
from the headers; its limits (``COGNIZES_API_MAX_BODY_BYTES``, and the larger ones of artifact and document
uploads) are named per route in ``cognizes/asgi.py``.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar

from django.conf import settings
from rest_framework import exceptions, status


class LimitExceeded(exceptions.APIException, ValueError):
    """Work past one of the limits: the message says which, how far past, and the setting that moves it."""

    status_code = status.HTTP_400_BAD_REQUEST
    default_code = "limit_exceeded"

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.reason = message


def max_query_chars() -> int:
    """The longest search query (knowledge, memory): an embedder reads only its first ~2,000 characters anyway."""
    return settings.COGNIZES_MAX_QUERY_CHARS


def max_filter_chars() -> int:
    """The longest filter expression (AIP-160 ``filter``, RAG ``metadataFilter``): real ones are a few hundred."""
    return settings.COGNIZES_MAX_FILTER_CHARS


def max_expanded_bytes() -> int:
    """The most a document may unpack to (a DOCX's zip entries) or read out as text (a PDF's pages)."""
    return settings.COGNIZES_KNOWLEDGE_MAX_EXPANDED_BYTES


def max_markup_bytes() -> int:
    """The most XML a DOCX may unpack to: parsed into a tree, it takes some 20 times its size in memory (a 180 KB
    upload of 50 MB of paragraphs peaked at 1 GB), where an image's bytes stay bytes."""
    return settings.COGNIZES_KNOWLEDGE_MAX_MARKUP_BYTES


def max_pages() -> int:
    """The most pages a PDF may have: a few KB can declare a million (one page object referenced over and over)."""
    return settings.COGNIZES_KNOWLEDGE_MAX_PAGES


def max_chunks() -> int:
    """The most chunks one document may be cut into (each is embedded: the slow, shared part of indexing)."""
    return settings.COGNIZES_KNOWLEDGE_MAX_CHUNKS


def max_parse_seconds() -> float:
    """How long parsing and chunking one document may take on a worker."""
    return settings.COGNIZES_KNOWLEDGE_PARSE_SECONDS


MAX_FILTER_CONDITIONS = 100
"""The most conditions a structured filter may hold (Memory Bank's ``filterGroups``): each is tested against every
memory in scope, so a megabyte of them multiplied the work by the memories a user has."""

MAX_CHUNK_SIZE = 1_000_000
"""The largest chunk size (tokens) taken: far past any embedder's window, only a bound on what is stored."""


def check_length(text: str | None, *, limit: int, field: str, setting: str) -> None:
    """Refuse ``text`` longer than ``limit`` characters, naming ``field`` (as the caller spelled it) and the setting."""
    if text is not None and len(text) > limit:
        raise LimitExceeded(f"'{field}' is {len(text)} characters long; at most {limit} are taken ({setting}).")


def check_query(text: str | None, *, field: str = "query") -> None:
    """Refuse a search query past ``COGNIZES_MAX_QUERY_CHARS``."""
    check_length(text, limit=max_query_chars(), field=field, setting="COGNIZES_MAX_QUERY_CHARS")


def check_filter(text: str | None, *, field: str = "filter") -> None:
    """Refuse a filter expression past ``COGNIZES_MAX_FILTER_CHARS`` before it is parsed."""
    check_length(text, limit=max_filter_chars(), field=field, setting="COGNIZES_MAX_FILTER_CHARS")


def check_conditions(count: int, *, field: str) -> None:
    """Refuse a structured filter of more than ``MAX_FILTER_CONDITIONS`` conditions."""
    if count > MAX_FILTER_CONDITIONS:
        raise LimitExceeded(f"'{field}' holds {count} conditions; at most {MAX_FILTER_CONDITIONS} are taken.")


def check_chunks(count: int, *, size: int) -> None:
    """Refuse a document that would be cut into more than ``COGNIZES_KNOWLEDGE_MAX_CHUNKS`` chunks of ``size``."""
    limit = max_chunks()
    if count > limit:
        raise LimitExceeded(
            f"cut into chunks of {size} tokens it would make more than {limit} chunks, the most a document may have "
            "(COGNIZES_KNOWLEDGE_MAX_CHUNKS): index it with a larger chunk size, or split it into smaller files"
        )


_deadline: ContextVar[tuple[float, float] | None] = ContextVar("parse_deadline", default=None)


@contextmanager
def parse_deadline(seconds: float | None = None) -> Iterator[None]:
    """Within the block, ``check_deadline`` raises once ``seconds`` (``max_parse_seconds()``) have passed.

    A context variable, not a signal: a worker's threads (and Celery's solo and thread pools) each keep
    their own, and no alarm interrupts a database call half done.
    """
    seconds = max_parse_seconds() if seconds is None else seconds
    token = _deadline.set((time.monotonic() + seconds, seconds))
    try:
        yield
    finally:
        _deadline.reset(token)


def check_deadline() -> None:
    """Raise ``LimitExceeded`` if the current ``parse_deadline`` has passed (nothing outside one)."""
    deadline = _deadline.get()
    if deadline is not None and time.monotonic() > deadline[0]:
        raise LimitExceeded(
            f"reading it took longer than the {deadline[1]:g} seconds a document may take "
            "(COGNIZES_KNOWLEDGE_PARSE_SECONDS): split it into smaller files"
        )
