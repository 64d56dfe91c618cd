"""Engines: which app a ``reasoningEngines/{id}`` is."""

from __future__ import annotations

import secrets

from django.db import IntegrityError, transaction

from cognizes.infra.notified_cache import NotifiedCache
from vertex_app.models import MAX_KEY_LENGTH, Engine

# Vertex's engine ids are 18–19 digit numbers; ours look the same and fit a signed bigint.
_ENGINE_ID_RANGE = (10**17, 2**63 - 1)


def do_get_or_create_engine(*, app_name: str) -> Engine:
    """The app's engine, created with a new random id the first time."""
    if not app_name.strip() or len(app_name) > MAX_KEY_LENGTH:
        raise ValueError(f"An app name is 1 to {MAX_KEY_LENGTH} characters.")
    engine = Engine.objects.filter(app_name=app_name).first()
    while engine is None:
        low, high = _ENGINE_ID_RANGE
        try:
            with transaction.atomic():
                engine = Engine.objects.create(app_name=app_name, engine_id=low + secrets.randbelow(high - low))
        except IntegrityError:  # another process created it (or, once in 10^18, the id was taken)
            engine = Engine.objects.filter(app_name=app_name).first()
    return engine


engines: NotifiedCache[int, str] = NotifiedCache("cognizes_vertex_engines", "cognizes engine cache")
"""Engine id -> app, remembered: every Vertex request names its engine (a round trip each before); the
``vertex_engines_notify`` trigger (migration 0002) makes every process forget them when one changes."""


def get_engine_app(engine_id: int) -> str | None:
    """The app served as ``reasoningEngines/{engine_id}``, or None."""
    return engines.lookup(engine_id, _engine_app)


def _engine_app(engine_id: int) -> str | None:
    return Engine.objects.filter(engine_id=engine_id).values_list("app_name", flat=True).first()


def find_engine(app_name: str) -> Engine | None:
    """The app's engine, if it has one (``get_engine`` for one that must exist)."""
    return Engine.objects.filter(app_name=app_name).first()


def get_engine(app_name: str) -> Engine:
    return Engine.objects.get(app_name=app_name)
