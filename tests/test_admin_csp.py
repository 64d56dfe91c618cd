"""The site's Content-Security-Policy forbids inline script, and the admin's pages need none (issue 41 D).

Even if tenant text slipped past escaping into an admin page, the browser would not
run it: ``script-src 'self'`` allows only the site's own script files. This holds
only while every page loads its scripts as files, so each admin page a superuser
opens is read here for inline script and event-handler attributes (no browser on
every machine: the HTML is what the policy judges).
"""

from __future__ import annotations

import base64
import hashlib
import re

import pytest
from django.contrib import admin

from sessions_app.models import Session
from tests.api.conftest import client_for

pytestmark = pytest.mark.django_db

INLINE_SCRIPT = re.compile(r"<script(?![^>]*\bsrc=)(?![^>]*type=\"application/json\")[^>]*>", re.S)
HANDLER = re.compile(r"<[^>]+\son[a-z]+\s*=", re.S)
THIRD_PARTY = {
    "/admin/django_celery_beat/periodictask/add/": (
        "django-celery-beat's crontab help line (an inline script): the form works without it"
    )
}


def _policy(response) -> dict[str, list[str]]:
    header = response["Content-Security-Policy"]
    return {part.split()[0]: part.split()[1:] for part in header.split(";") if part.strip()}


def _pages() -> list[str]:
    pages = ["/admin/"]
    for model in admin.site._registry:
        base = f"/admin/{model._meta.app_label}/{model._meta.model_name}/"
        pages += [base, base + "add/"]
    return pages


def test_every_admin_page_runs_only_script_files(admin_client):
    client_for("shop").post("/api/v1/apps/shop/users/ada/sessions/", {"id": "s1"}, format="json")
    pages = [*_pages(), f"/admin/sessions_app/session/{Session.objects.get().pk}/change/"]  # the live events panel
    inline = {}
    for url in pages:
        response = admin_client.get(url)
        if response.status_code != 200 or url in THIRD_PARTY:
            continue
        policy = _policy(response)
        assert policy["script-src"][0] == "'self'" and "'unsafe-inline'" not in policy["script-src"], url
        assert policy["object-src"] == ["'none'"], url
        html = response.content.decode()
        found = INLINE_SCRIPT.findall(html) + HANDLER.findall(html)
        if found:
            inline[url] = found[:2]
    assert inline == {}


def test_the_browsable_apis_one_handler_is_allowed_by_its_hash_and_nothing_else_is(admin_client):
    response = admin_client.get("/api/v1/apps/shop/users/ada/sessions/", HTTP_ACCEPT="text/html")
    handlers = re.findall(r"\son[a-z]+='([^']*)'", response.content.decode())
    hashes = [source for source in _policy(response)["script-src"] if source.startswith("'sha256-")]

    assert handlers == ['document.getElementById("logoutForm").submit()']  # DRF's "Log out" link
    digest = base64.b64encode(hashlib.sha256(handlers[0].encode()).digest()).decode()
    assert hashes == [f"'sha256-{digest}'"]


def test_the_live_events_script_is_served_as_a_file(admin_client):
    script = admin_client.get("/static/sessions_app/live_events.js")

    assert script.status_code == 200
    assert b"EventSource" in b"".join(script.streaming_content if script.streaming else [script.content])


def test_stored_content_keeps_its_sandbox(admin_client):
    response = client_for("shop", user_id="bob").post(
        "/api/v1/apps/shop/users/bob/sessions/s1/artifacts/p.html/content/",
        b"<script>1</script>",
        content_type="text/html",
    )
    assert response.status_code == 201
    download = client_for("shop").get("/api/v1/apps/shop/users/bob/sessions/s1/artifacts/p.html/content/")

    assert download["Content-Security-Policy"] == "sandbox; default-src 'none'"
