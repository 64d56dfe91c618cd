"""Which app made which (issue 45 item 2): an engine a client creates is a new app its own app owns.

The scope check asks ``get_owner`` whenever a key names an app other than its own, so the answer is remembered
per process (``NotifiedCache``): the ``owned_apps_notify`` trigger (migration 0003) makes every process forget it
the moment an ownership row is deleted, as with API keys. Ownership is one level deep (an owned app owns nothing):
``do_own_app`` refuses otherwise, so a key never reaches further than its app's own creations.
"""

from __future__ import annotations

from django.db import transaction

from cognizes.access.models import MAX_KEY_LENGTH, OwnedApp
from cognizes.infra.notified_cache import NotifiedCache

owners: NotifiedCache[str, str] = NotifiedCache("cognizes_owned_apps", "cognizes ownership cache")


class OwnedAppCannotOwn(Exception):
    """An app made by another app tried to make one: ownership stays one level deep."""


def get_owner(app_name: str) -> str | None:
    """The app that made ``app_name``, or None (an app of its own, made by an operator).

    Asked by the scope check with whatever app name a request carried: a name no app can have (NUL, too long) is
    answered here, before PostgreSQL would refuse the query (a 500 instead of the caller's 404).
    """
    if "\x00" in app_name or len(app_name) > MAX_KEY_LENGTH:
        return None
    return owners.lookup(app_name, _owner)


def _owner(app_name: str) -> str | None:
    return OwnedApp.objects.filter(app_name=app_name).values_list("owner_app", flat=True).first()


def owned_apps(owner_app: str) -> list[str]:
    """The apps ``owner_app`` made, oldest first."""
    return list(
        OwnedApp.objects.filter(owner_app=owner_app).order_by("created_at", "id").values_list("app_name", flat=True)
    )


def do_own_app(*, app_name: str, owner_app: str) -> OwnedApp:
    """Record that ``owner_app`` made ``app_name`` (in the caller's transaction, with what it made)."""
    if _owner(owner_app) is not None:
        raise OwnedAppCannotOwn(
            f"The app {owner_app!r} was itself made by another app's client, and such an app cannot make apps "
            "(ownership is one level deep): create it with a key of the app that made this one."
        )
    with transaction.atomic():
        return OwnedApp.objects.create(app_name=app_name, owner_app=owner_app)


def do_disown_app(*, app_name: str) -> int:
    """Forget who made ``app_name`` (the app is gone); the rows deleted."""
    return OwnedApp.objects.filter(app_name=app_name).delete()[0]
