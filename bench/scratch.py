"""Scratch databases for the benchmarks: each script measures on a database of its own.

The benchmarks run on the same PostgreSQL server as the project (embedded or
``DATABASE_URL``) but never on its database: they create one, point Django at
it, and drop it when they finish.
"""

from __future__ import annotations

from urllib.parse import urlsplit, urlunsplit


def with_database(url: str, name: str) -> str:
    """``url`` pointing at database ``name`` (host, port and user unchanged)."""
    return urlunsplit(urlsplit(url)._replace(path=f"/{name}"))


def recreate_databases(server_url: str, names: list[str], *, create: bool = True) -> None:
    """Drop (and unless ``create`` is False, create) scratch databases on the server."""
    import psycopg

    with psycopg.connect(with_database(server_url, "postgres"), autocommit=True) as conn:
        for name in names:
            conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
            if create:
                conn.execute(f'CREATE DATABASE "{name}"')


def close_django_connections() -> None:
    """Close Django's connections, the service threads' included, so the database can be dropped."""
    from django.apps import apps

    if not apps.ready:
        return
    from django.db import connections

    from cognizes.db_threads import close_connections

    close_connections()
    connections.close_all()
