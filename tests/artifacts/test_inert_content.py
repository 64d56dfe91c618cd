"""Stored content is served inert (issue 41 D): a user's key uploads HTML with a script; neither the admin nor the
API hands it back as a page that runs.

Attachment, ``nosniff`` and a sandboxing CSP on every response of stored bytes
(cognizes/access/stored_content.py); in a real browser, the superuser who opens the
version from the admin runs nothing.
"""

from __future__ import annotations

import asyncio

import pytest
from google.genai import types

from artifacts_app.models import Artifact
from cognizes.adk import PostgresArtifactService
from tests.api.conftest import client_for

pytestmark = pytest.mark.django_db

PAGE = "/api/v1/apps/shop/users/bob/sessions/s1/artifacts/page.html/content/"
SCRIPT = b"<html><body><script>document.title='pwned'</script><p>hello</p></body></html>"


def _inert(response, filename: str) -> None:
    assert response.status_code == 200
    assert response["Content-Disposition"].startswith("attachment;") and filename in response["Content-Disposition"]
    assert response["X-Content-Type-Options"] == "nosniff"
    policy = response["Content-Security-Policy"]
    assert "sandbox" in policy and "default-src 'none'" in policy


@pytest.fixture
def uploaded() -> Artifact:
    """bob's key saves an HTML page with a script, as any user of the app could."""
    response = client_for("shop", user_id="bob").post(PAGE, SCRIPT, content_type="text/html")
    assert response.status_code == 201
    return Artifact.objects.get()


def test_the_admin_serves_an_uploaded_html_page_as_an_inert_download(admin_client, uploaded):
    response = admin_client.get(f"/admin/artifacts_app/artifact/{uploaded.pk}/versions/0/content/")

    _inert(response, "page.html")
    assert response.content == SCRIPT  # the bytes as stored: the operator may still save and read them


def test_the_api_download_is_inert_too(uploaded):
    response = client_for("shop", user_id="bob").get(PAGE)

    _inert(response, "page.html")
    assert response["Content-Type"] == "text/html"


@pytest.mark.django_db(transaction=True)
def test_a_hostile_filename_or_mime_type_is_a_download_not_a_500(admin_client):
    """A name with a quote and a line break, a mime type with CR LF (ADK's save_artifact takes any string)."""
    asyncio.run(
        PostgresArtifactService().save_artifact(
            app_name="shop",
            user_id="bob",
            session_id="s1",
            filename='a"b\r\nSet-Cookie: x=1.html',
            artifact=types.Part(inline_data=types.Blob(data=b"<script>1</script>", mime_type="text/html\r\nX-A: 1")),
        )
    )
    artifact = Artifact.objects.get()

    response = admin_client.get(f"/admin/artifacts_app/artifact/{artifact.pk}/versions/0/content/")

    _inert(response, "filename*=utf-8''a%22b%0D%0ASet-Cookie")
    assert response["Content-Type"] == "application/octet-stream" and "X-A" not in response


@pytest.mark.django_db(transaction=True)
def test_a_script_in_an_uploaded_page_does_not_run_when_the_superuser_opens_it(browser, live_server, admin_user):
    from tests.browser import log_in_as_admin

    response = client_for("shop", user_id="bob").post(PAGE, SCRIPT, content_type="text/html")
    assert response.status_code == 201
    artifact = Artifact.objects.get()
    log_in_as_admin(browser, live_server.url)
    browser.get(f"{live_server.url}/admin/artifacts_app/artifact/{artifact.pk}/change/")
    admin_title = browser.title

    browser.get(f"{live_server.url}/admin/artifacts_app/artifact/{artifact.pk}/versions/0/content/")

    assert browser.title != "pwned"  # a download: the browser stays on the admin's page, which runs nothing of it
    assert browser.execute_script("return document.title") in (admin_title, "")
