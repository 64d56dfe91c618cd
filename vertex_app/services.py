"""Engines: which app a ``reasoningEngines/{id}`` is; engines created, changed and deleted by their clients.

An engine made by ``cognizes vertex_engine APP`` serves an app an operator made. An engine a client creates
(``POST …/reasoningEngines``, issue 45 item 2) is a new app, named by the engine id in decimal (ADK's Vertex services
already take the engine id as ``app_name``), owned by the app of the key that made it (``cognizes.access.ownership``):
that app's keys reach it, and its client may delete it again, with everything in it.
"""

from __future__ import annotations

import secrets
from collections.abc import Callable
from typing import Any

from django.db import IntegrityError, transaction
from django.utils import timezone

from cognizes.access.ownership import do_disown_app, do_own_app, get_owner, owned_apps
from cognizes.infra.notified_cache import NotifiedCache
from memory_app.models import Memory, Status
from sessions_app.models import Session
from sessions_app.services import do_erase_app
from vertex_app.models import MAX_KEY_LENGTH, Engine, RuntimeRevision

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


def _new_engine_id() -> int:
    low, high = _ENGINE_ID_RANGE
    return low + secrets.randbelow(high - low)


def do_create_engine(*, owner_app: str, fields: dict[str, Any], configure: Callable[[str], None]) -> Engine:
    """A new engine and its app (named by the engine id), owned by ``owner_app``, with the client's ``fields``
    (display name, description, labels, spec); ``configure(app_name)`` then sets up the rest (its memory bank) in the
    same transaction, so a refused configuration leaves no engine behind."""
    with transaction.atomic():
        while True:
            engine_id = _new_engine_id()
            try:
                with transaction.atomic():
                    engine = Engine.objects.create(
                        engine_id=engine_id, app_name=str(engine_id), updated_at=timezone.now(), **fields
                    )
                break
            except IntegrityError:  # once in 10^18, the id was taken
                continue
        do_own_app(app_name=engine.app_name, owner_app=owner_app)
        configure(engine.app_name)
    return engine


def do_update_engine(engine: Engine, *, fields: dict[str, Any]) -> Engine:
    """Set what a client sets on the engine (display name, description, labels, spec)."""
    for name, value in fields.items():
        setattr(engine, name, value)
    engine.updated_at = timezone.now()
    engine.save(update_fields=[*fields, "updated_at"])
    return engine


class EngineInUse(Exception):
    """The engine still holds sessions or memories, and the delete was not forced."""


class EngineNotDeletable(Exception):
    """The engine serves an app an operator made (``cognizes vertex_engine APP``): a client does not delete it."""


def do_delete_engine(engine: Engine, *, force: bool) -> dict[str, int]:
    """Delete an engine a client created, and its app: refused while it holds sessions or memories unless ``force``,
    which erases them (``sessions_app.services.do_erase_app``: every user's share in every app, then what the app
    holds as a whole); the engine, its runtime revisions and its ownership go last. Rows deleted per kind."""
    app_name = engine.app_name
    if get_owner(app_name) is None:
        raise EngineNotDeletable(
            f"reasoningEngines/{engine.engine_id} serves the app {app_name!r}, made by its operator "
            f"(`cognizes vertex_engine {app_name}`), not by a client: it is not deleted through Vertex. Erase its "
            "users with DELETE /api/v1/apps/{app}/users/{user}/ or the admin instead."
        )
    with transaction.atomic():
        in_use = (
            Session.objects.filter(app_name=app_name).exists()
            or Memory.objects.filter(app_name=app_name).exclude(status=Status.FORGOTTEN).exists()
        )
        if in_use and not force:
            raise EngineInUse(
                f"reasoningEngines/{engine.engine_id} still has sessions or memories: delete them first, or delete "
                'the engine with {"force": true} to delete them with it.'
            )
        counts = do_erase_app(app_name=app_name)
        counts.update(runtime_revisions=RuntimeRevision.objects.filter(engine=engine).delete()[0])
        Engine.objects.filter(pk=engine.pk).delete()
        counts.update(engines=1, owned_apps=do_disown_app(app_name=app_name))
    return counts


def get_reachable_engines(app_name: str) -> list[Engine]:
    """The engines a key of ``app_name`` reaches: its app's own, if it has one, then those of the apps it made."""
    apps = [app_name, *owned_apps(app_name)]
    found = {engine.app_name: engine for engine in Engine.objects.filter(app_name__in=apps)}
    return [found[app] for app in apps if app in found]


def do_record_revision(engine: Engine, *, display_name: str, spec: Any, context_spec: dict[str, Any]) -> bool:
    """A runtime revision of the engine's deployed configuration, unless the newest already is this one; whether one
    was made."""
    latest = RuntimeRevision.objects.filter(engine=engine).order_by("-id").first()
    if latest and (latest.display_name, latest.spec, latest.context_spec) == (display_name, spec, context_spec):
        return False
    RuntimeRevision.objects.create(engine=engine, display_name=display_name, spec=spec, context_spec=context_spec)
    return True


class CurrentRevision(Exception):
    """The revision is the engine's current one."""


def do_delete_revision(revision: RuntimeRevision) -> None:
    """Delete an archived runtime revision; the engine's current (newest) one stays."""
    with transaction.atomic():
        latest = RuntimeRevision.objects.select_for_update().filter(engine_id=revision.engine_id).order_by("-id")
        if latest.values_list("id", flat=True).first() == revision.pk:
            raise CurrentRevision(
                f"runtimeRevisions/{revision.pk} is the engine's current revision: only an archived one is deleted."
            )
        revision.delete()


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
