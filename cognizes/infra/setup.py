"""Django set up on demand, for code that runs outside ``manage.py`` (agent scripts, ADK's CLI)."""

import os

import django
from django.apps import apps


def ensure_django() -> None:
    """Set Django up once, with ``cognizes.settings`` unless ``DJANGO_SETTINGS_MODULE`` says otherwise."""
    if not apps.ready:
        os.environ.setdefault("DJANGO_SETTINGS_MODULE", "cognizes.settings")
        django.setup()
