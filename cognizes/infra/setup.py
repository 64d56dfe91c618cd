"""Django set up on demand, for code that runs outside ``cognizes`` (agent scripts, ADK's CLI).

Such code finds its database as every Cognizes process does (``cognizes.infra.local``): ``DATABASE_URL``, else the
embedded PostgreSQL under ``COGNIZES_VAR_DIR``, joined if ``cognizes run`` started it, started otherwise. An
embedded database that was never migrated (no ``cognizes run`` yet in that folder) would only fail at the first
query, with a "relation does not exist" deep in a traceback: this says what to do instead, and stops.
"""

from __future__ import annotations

import importlib
import os
import pkgutil

import django
from django.apps import apps


def ensure_django() -> None:
    """Set Django up once, with ``cognizes.settings`` unless ``DJANGO_SETTINGS_MODULE`` says otherwise.

    Exits with a message (``SystemExit``, no traceback) when the embedded database is missing migrations.
    """
    if not apps.ready:
        os.environ.setdefault("DJANGO_SETTINGS_MODULE", "cognizes.settings")
        django.setup()
        if not os.environ.get("DATABASE_URL"):
            require_migrated()


def require_migrated() -> None:
    """Exit with what to run when the database lacks a migration the installed apps have.

    The migrations on disk are listed, not loaded (Django's loader imports every one of them: 0.6 s on each start).
    """
    from django.db import connection
    from django.db.migrations.recorder import MigrationRecorder

    from cognizes.infra import local

    applied = set(MigrationRecorder(connection).applied_migrations())
    connection.close()  # the agent's own threads open theirs: this one would idle for the process's lifetime
    missing = [
        (config.label, name)
        for config in apps.get_app_configs()
        for name in _migration_names(config.name)
        if (config.label, name) not in applied
    ]
    if not missing:
        return
    label, name = missing[0]
    to_apply = f"({len(missing)} migrations to apply, such as {label}.{name})"
    if os.environ.get("DATABASE_URL"):
        raise SystemExit(f"The database DATABASE_URL names is not set up {to_apply}: run `cognizes migrate`.")
    raise SystemExit(
        f"Cognizes' database under {local.VAR_DIR} is not set up {to_apply}: start `cognizes run` there once (it "
        f"migrates, and leaves the servers running for agents), or run `cognizes migrate`; or set DATABASE_URL to a "
        f"migrated database. (COGNIZES_VAR_DIR chooses the folder.)"
    )


def _migration_names(app_module: str) -> list[str]:
    """The names of the app's migrations, from its ``migrations`` package (none if it has no such package)."""
    try:
        package = importlib.import_module(f"{app_module}.migrations")
    except ModuleNotFoundError as error:
        if error.name != f"{app_module}.migrations":
            raise
        return []
    return [name for _, name, is_package in pkgutil.iter_modules(package.__path__) if not is_package]
