"""The one import surface for agent code.

    from cognizes.adk import PostgresMemoryService, PostgresSessionService

Importing this module sets Django up (with ``cognizes.settings`` unless
``DJANGO_SETTINGS_MODULE`` says otherwise), so a plain agent script needs nothing
but ``DATABASE_URL`` (or nothing at all, for the embedded PostgreSQL).
"""

import os

import django
from django.apps import apps

if not apps.ready:
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "cognizes.settings")
    django.setup()

from memory_app.adk import PostgresMemoryService  # noqa: E402
from sessions_app.adk import PostgresSessionService  # noqa: E402

__all__ = ["PostgresMemoryService", "PostgresSessionService"]
