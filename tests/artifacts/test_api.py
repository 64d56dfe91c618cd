"""The artifacts API: what a session's agents saved, its versions, and their content, under the usual keys."""

from __future__ import annotations

import asyncio

import pytest
from django.test import override_settings
from google.genai import types

from cognizes.adk import PostgresArtifactService
from tests.api.conftest import client_for

pytestmark = pytest.mark.django_db(transaction=True)

APP = "art_api"
S1 = f"/api/v1/apps/{APP}/users/ada/sessions/s1/artifacts"


@pytest.fixture
def saved():
    async def save():
        service = PostgresArtifactService()
        for data in (b"first", b"second"):
            await service.save_artifact(
                app_name=APP,
                user_id="ada",
                session_id="s1",
                filename="chart.png",
                artifact=types.Part(inline_data=types.Blob(data=data, mime_type="image/png")),
                custom_metadata={"by": "tool"},
            )
        await service.save_artifact(
            app_name=APP,
            user_id="ada",
            session_id="s2",
            filename="user:notes.txt",
            artifact=types.Part(text="Café at 9."),
        )

    asyncio.run(save())


def test_list_versions_and_download(saved):
    api = client_for(APP)

    listed = api.get(f"{S1}/").json()
    assert [(a["filename"], a["latest"]["version"], a["latest"]["mime_type"]) for a in listed] == [
        ("chart.png", 1, "image/png"),
        ("user:notes.txt", 0, "text/plain"),
    ]
    versions = api.get(f"{S1}/chart.png/").json()["versions"]
    assert [(v["version"], v["size"], v["custom_metadata"]) for v in versions] == [
        (0, 5, {"by": "tool"}),
        (1, 6, {"by": "tool"}),
    ]
    latest = api.get(f"{S1}/chart.png/content/")
    assert (latest.status_code, latest["Content-Type"], latest.content) == (200, "image/png", b"second")
    assert api.get(f"{S1}/chart.png/content/", {"version": 0}).content == b"first"
    text = api.get(f"{S1}/user:notes.txt/content/")
    assert (text["Content-Type"], text.content.decode()) == ("text/plain; charset=utf-8", "Café at 9.")


def test_missing_and_foreign_artifacts_are_404(saved):
    api = client_for(APP)
    assert api.get(f"{S1}/nothing.png/").status_code == 404
    assert api.get(f"{S1}/chart.png/content/", {"version": 9}).status_code == 404
    assert api.get(f"/api/v1/apps/{APP}/users/ada/sessions/s2/artifacts/chart.png/").status_code == 404  # s1's
    assert client_for(APP, user_id="bob").get(f"{S1}/").status_code == 404
    assert client_for("other").get(f"{S1}/").status_code == 404


def test_an_upload_saves_the_next_version_with_its_content_type(saved, asgi_server):
    """Over the real ASGI server: bodies above the API's JSON limit (1 MB) are allowed up to the artifact limit."""
    import httpx

    from cognizes.access.services import do_create_api_key

    _, key = do_create_api_key(name="t", app_name=APP)
    photo = bytes(range(256)) * 8192  # 2 MB
    with httpx.Client(base_url=asgi_server, headers={"Authorization": f"Bearer {key}"}, timeout=60) as http:
        uploaded = http.post(f"{S1}/chart.png/content/", content=photo, headers={"Content-Type": "image/png"})
        assert (uploaded.status_code, uploaded.json()) == (201, {"filename": "chart.png", "version": 2})
        back = http.get(f"{S1}/chart.png/content/")
        assert (back.headers["content-type"], back.content) == ("image/png", photo)
        with override_settings(COGNIZES_ARTIFACT_MAX_BYTES=1024 * 1024):
            refused = http.post(f"{S1}/chart.png/content/", content=photo, headers={"Content-Type": "image/png"})
        assert refused.status_code == 413
    assert (
        client_for(APP, read_only=True)
        .post(f"{S1}/x.bin/content/", b"x", content_type="application/octet-stream")
        .status_code
        == 403
    )
