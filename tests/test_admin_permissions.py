"""Every admin view checks the model permission of what it shows, not only staff status (issue 41 D).

A staff user holding no permission used to read any artifact's content, search any
corpus, see every app's counts on the overview and follow any session's live
events through the API. Here every URL of the admin site is enumerated, so a view
added later without a check fails ``test_a_staff_user_without_permissions_is_refused_everywhere``.
"""

from __future__ import annotations

import re

import pytest
from django.contrib import admin
from django.contrib.auth import get_user_model
from django.contrib.auth.models import Permission
from django.test import Client
from django.urls import URLPattern, URLResolver

from artifacts_app.models import Artifact
from knowledge_app.models import Corpus
from sessions_app.models import Session
from tests.api.conftest import client_for

pytestmark = pytest.mark.django_db

EXEMPT = {
    "index": "the overview: shows only permitted sections (tested below)",
    "login": "logging in",
    "logout": "logging out",
    "password_change": "one's own password",
    "password_change_done": "one's own password",
    "jsi18n": "the admin's translations",
    "view_on_site": "a redirect to the object's public URL, which the admin does not serve",
}
STOCK_REDIRECT = re.compile(r"(_history|^None)$")
"""Django's history view and the bare ``<id>/`` redirect answer 302 for an object that does not exist, before
they check a permission (Django's own order); for one that does, they refuse as every other view."""


def _walk(patterns: list, prefix: str = "") -> list[tuple[str, str]]:
    found = []
    for pattern in patterns:
        if isinstance(pattern, URLResolver):
            found += _walk(pattern.url_patterns, prefix + str(pattern.pattern))
        elif isinstance(pattern, URLPattern):
            found.append((prefix + str(pattern.pattern), str(pattern.name)))
    return found


def _url(route: str) -> str | None:
    """A URL of the route with made-up ids; None for the catch-all (every unknown admin URL)."""
    if route.startswith("^(?P<app_label>"):
        return "/admin/sessions_app/"
    if "(?P<url>" in route:
        return None
    return "/admin/" + re.sub(r"<(int|path|str|slug):\w+>", lambda m: "1" if m[1] != "str" else "x", route)


def _cases() -> list:
    cases = []
    for route, name in _walk(admin.site.get_urls()):
        url = _url(route)
        if url is None or name in EXEMPT:
            continue
        cases.append(pytest.param(url, name, id=f"{name}:{route}"))
    return cases


@pytest.fixture
def staff(db) -> Client:
    """A logged-in staff user with no permission at all."""
    client = Client()
    client.force_login(get_user_model().objects.create_user("intern", is_staff=True))
    return client


def _staff_with(*codenames: str) -> Client:
    """A logged-in staff user holding only these permissions."""
    user = get_user_model().objects.create_user("viewer-" + "-".join(codenames), is_staff=True)
    user.user_permissions.add(*Permission.objects.filter(codename__in=codenames))
    client = Client()
    client.force_login(user)
    return client


@pytest.mark.parametrize(("url", "name"), _cases())
def test_a_staff_user_without_permissions_is_refused_everywhere(staff, url, name):
    response = staff.get(url)

    if name == "app_list":
        assert response.status_code == 404  # Django: an app with nothing the user may see does not exist
    elif STOCK_REDIRECT.search(name):
        assert response.status_code in (302, 403), response.status_code
    else:
        assert response.status_code == 403, (url, response.status_code)


def test_the_custom_views_are_the_known_ones():
    """A new custom view is refused above; this list says which ones exist, so its 200 gets a test below too."""
    stock = re.compile(r"_(changelist|add|change|delete|history|password_change)$")
    custom = {
        name
        for _, name in _walk(admin.site.get_urls())
        if name not in EXEMPT and name not in ("None", "app_list", "autocomplete") and not stock.search(name)
    }
    assert custom == {"artifacts_app_artifact_content", "knowledge_app_corpus_search", "tools_app_tool_import"}


def test_the_view_permission_opens_the_artifact_content_and_the_corpus_search():
    client_for("shop", user_id="bob").post(
        "/api/v1/apps/shop/users/bob/sessions/s1/artifacts/a.txt/content/", b"hello", content_type="text/plain"
    )
    artifact, corpus = Artifact.objects.get(), Corpus.objects.create(app_name="shop", display_name="handbook")
    content = f"/admin/artifacts_app/artifact/{artifact.pk}/versions/0/content/"
    search = f"/admin/knowledge_app/corpus/{corpus.pk}/search/"
    viewer = _staff_with("view_artifact", "view_corpus")

    assert (viewer.get(content).status_code, viewer.get(content).content) == (200, b"hello")
    assert viewer.get(search).status_code == 200
    other = _staff_with("view_session")
    assert (other.get(content).status_code, other.get(search).status_code) == (403, 403)


def test_the_overview_shows_only_the_sections_of_models_the_user_may_view(staff):
    client_for("secretapp").post("/api/v1/apps/secretapp/users/ada/sessions/", {"id": "s1"}, format="json")
    sections = ("overview-apps", "overview-traces", "overview-processes", "overview-jobs", "overview-documents")

    bare = staff.get("/admin/").content.decode()
    traces_only = _staff_with("view_trace").get("/admin/").content.decode()

    assert "secretapp" not in bare and not any(f'id="{section}"' in bare for section in sections)
    assert 'id="overview-traces"' in traces_only and "secretapp" not in traces_only
    assert not any(f'id="{section}"' in traces_only for section in sections if section != "overview-traces")


def test_every_bulk_action_names_the_permission_it_needs():
    """Django offers an action with no ``allowed_permissions`` to whoever may view the list."""
    admin.site.get_urls()  # as the URLconf does: third-party actions get the change permission there
    missing = [
        f"{model._meta.label}.{name}"
        for model, model_admin in admin.site._registry.items()
        for function, name, _ in model_admin._get_base_actions()
        if not getattr(function, "allowed_permissions", ())
    ]
    assert missing == []


def test_a_user_who_may_only_view_sessions_cannot_erase_their_users():
    client_for("shop").post("/api/v1/apps/shop/users/ada/sessions/", {"id": "s1"}, format="json")
    viewer = _staff_with("view_session")
    pk = Session.objects.get().pk

    viewer.post("/admin/sessions_app/session/", {"action": "erase_users", "_selected_action": [pk]})

    assert Session.objects.filter(pk=pk).exists()


def test_a_staff_login_reaches_the_api_only_with_the_permission_of_what_it_reads(staff):
    stream = "/api/v1/apps/shop/users/ada/sessions/nothing/events/stream/"

    assert staff.get("/api/v1/apps/shop/users/ada/sessions/").status_code == 403
    assert staff.get(stream).status_code == 403
    assert _staff_with("view_session").get(stream).status_code == 404  # let through: no such session
