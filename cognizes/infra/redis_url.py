"""A Redis URL as redis-py reads it, and the same server and database as Celery (kombu) reads them.

The two disagree on Unix sockets: redis-py takes ``unix:///path?db=N``, kombu ``redis+socket:///path?virtual_host=N``
and silently uses database 0 when given ``db=N``; so a socket URL naming a database would put the cache in one
database and Celery's queues in another.
"""

from __future__ import annotations

from urllib.parse import parse_qsl, urlencode, urlsplit, urlunsplit


def with_database(url: str, number: int) -> str:
    """``url`` naming database ``number`` (in the path for TCP, ``?db=`` for a Unix socket)."""
    if url.startswith("unix://"):
        location, query = _split_query(url)
        return _join_query(location, [*(item for item in query if item[0] != "db"), ("db", str(number))])
    return urlunsplit(urlsplit(url)._replace(path=f"/{number}"))


def for_celery(url: str) -> str:
    """The broker URL of redis-py's ``url``: the same server and database."""
    if not url.startswith("unix://"):
        return url
    location, query = _split_query(url)
    renamed = [("virtual_host" if key == "db" else key, value) for key, value in query]
    return _join_query("redis+socket://" + location.removeprefix("unix://"), renamed)


def _split_query(url: str) -> tuple[str, list[tuple[str, str]]]:
    location, _, query = url.partition("?")
    return location, parse_qsl(query)


def _join_query(location: str, query: list[tuple[str, str]]) -> str:
    return f"{location}?{urlencode(query)}" if query else location
