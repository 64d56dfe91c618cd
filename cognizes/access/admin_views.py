"""The admin's own views check the model permission of what they show, not only staff status (issue 41 D).

Django checks permissions in the views it ships (lists, forms, history, autocomplete);
a view an admin adds with ``get_urls`` gets only ``admin_site.admin_view``, which
asks whether the user is *staff*. A staff user with no permission at all could
then read an artifact's content or search any corpus. Each added view is
wrapped here instead, once, with the permission of the model it shows.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any, Literal

from django.contrib import admin
from django.contrib.auth import get_permission_codename
from django.core.exceptions import PermissionDenied
from django.db.models import Model
from django.http import HttpRequest, HttpResponse

Need = Literal["view", "change", "add", "delete"]


def permitted_view(
    model_admin: admin.ModelAdmin, view: Callable[..., HttpResponse], *, need: Need = "view"
) -> Callable[..., HttpResponse]:
    """``view`` as an admin page of ``model_admin``'s model: staff, logged in, and holding its ``need`` permission
    (403 otherwise), asked through the ModelAdmin's own ``has_*_permission`` so an admin that narrows them is
    obeyed."""

    @functools.wraps(view)
    def checked(request: HttpRequest, *args: Any, **kwargs: Any) -> HttpResponse:
        if not may(model_admin, request, need):
            raise PermissionDenied(f"You may not {need} {model_admin.model._meta.verbose_name_plural}.")
        return view(request, *args, **kwargs)

    return model_admin.admin_site.admin_view(checked)


def may(model_admin: admin.ModelAdmin, request: HttpRequest, need: Need = "view") -> bool:
    """Whether the request's user holds ``need`` on ``model_admin``'s model (``view`` includes ``change``)."""
    check: Callable[[HttpRequest], bool] = getattr(model_admin, f"has_{need}_permission")
    return bool(check(request))


def may_view(site: admin.AdminSite, request: HttpRequest, *models: type[Model]) -> bool:
    """Whether the user may view every one of ``models`` in ``site`` (an unregistered model: no one may)."""
    return all(site.is_registered(model) and may(site.get_model_admin(model), request, "view") for model in models)


class ChangedByActions:
    """A ModelAdmin mixin for rows that change only through actions (its form is read-only, so
    ``has_change_permission`` is False): ``@admin.action(permissions=["act"])`` asks the model's own change
    permission instead, so a user who may only view the rows cannot forget, re-index or approve them."""

    opts: Any

    def has_act_permission(self, request: HttpRequest) -> bool:
        return request.user.has_perm(f"{self.opts.app_label}.{get_permission_codename('change', self.opts)}")
