"""Scratch databases for the benchmarks: each script measures on a database of its own.

The benchmarks run on the same PostgreSQL server as the project (embedded or
``DATABASE_URL``) but never on its database: they create one, point Django at
it, and drop it when they finish.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from contextlib import contextmanager
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

    from cognizes.infra import notified_cache
    from cognizes.infra.db_threads import close_connections

    close_connections()
    notified_cache.close_all()
    connections.close_all()


@contextmanager
def migrated_database(name: str, *, keep: bool = False, reuse: bool = False) -> Iterator[bool]:
    """Django set up on scratch database ``name`` of the project's server, created afresh and migrated;
    dropped on the way out unless ``keep``. With ``reuse`` an existing one is taken as it is (and migrated, and
    kept): the value entered is whether it was reused, so the caller knows whether to load it. Enter it before
    anything imports Django's settings."""
    from cognizes.infra import local

    server_url = local.database_url()
    reused = reuse and database_exists(server_url, name)
    if not reused:
        recreate_databases(server_url, [name])
    os.environ["DATABASE_URL"] = with_database(server_url, name)
    try:
        from django.core.management import call_command
        from django.db import connections

        import cognizes.adk  # noqa: F401  (sets Django up)

        call_command("migrate", verbosity=0)
        connections.close_all()
        yield reused
    finally:
        close_django_connections()
        if keep or reuse:
            print(f"kept database {name}")
        else:
            recreate_databases(server_url, [name], create=False)


def database_exists(server_url: str, name: str) -> bool:
    import psycopg

    with psycopg.connect(with_database(server_url, "postgres"), autocommit=True) as conn:
        return conn.execute("SELECT 1 FROM pg_database WHERE datname = %s", [name]).fetchone() is not None
