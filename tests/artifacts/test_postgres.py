"""What only a shared store must do: gap-free versions across processes, a stated size limit."""

from __future__ import annotations

import asyncio
import json

import pytest
from django.test import override_settings
from google.adk.errors.input_validation_error import InputValidationError
from google.genai import types

from artifacts_app.models import Artifact, ArtifactContent, ArtifactVersion
from cognizes.adk import PostgresArtifactService
from tests.processes import run_python

pytestmark = pytest.mark.django_db(transaction=True)

SAVER = """
import asyncio
from google.genai import types
from cognizes.adk import PostgresArtifactService

async def main():
    service = PostgresArtifactService()
    return [await service.save_artifact(app_name="art_app", user_id="ada", session_id="s1", filename="log.txt",
                                        artifact=types.Part(text="line")) for _ in range(10)]
print(asyncio.run(main()))
"""


def test_concurrent_saves_from_several_processes_get_distinct_gap_free_versions():
    async def run_all():
        return await asyncio.gather(*(asyncio.to_thread(run_python, SAVER) for _ in range(3)))

    versions = sorted(v for done in asyncio.run(run_all()) for v in json.loads(done.stdout.strip().splitlines()[-1]))
    assert versions == list(range(30))
    assert ArtifactVersion.objects.count() == 30


@override_settings(COGNIZES_ARTIFACT_MAX_BYTES=1000)
async def test_a_version_over_the_limit_is_refused_and_stores_nothing():
    service = PostgresArtifactService()
    big = types.Part(inline_data=types.Blob(data=b"x" * 1001, mime_type="application/octet-stream"))
    with pytest.raises(InputValidationError, match="1001 bytes; the most one version may hold is 1000"):
        await service.save_artifact(app_name="art_app", user_id="ada", session_id="s1", filename="big", artifact=big)
    assert (
        await service.save_artifact(
            app_name="art_app",
            user_id="ada",
            session_id="s1",
            filename="small",
            artifact=types.Part(inline_data=types.Blob(data=b"x" * 1000, mime_type="text/plain")),
        )
        == 0
    )
    from cognizes.infra.db_threads import run_in_db_thread

    counts = await run_in_db_thread(lambda: (Artifact.objects.count(), ArtifactContent.objects.count()))
    assert counts == (1, 1)


def test_the_admin_lists_artifacts_with_their_versions(admin_client):
    async def saved():
        service = PostgresArtifactService()
        for text in ("one", "two"):
            await service.save_artifact(
                app_name="art_app", user_id="ada", session_id="s1", filename="notes.txt", artifact=types.Part(text=text)
            )

    asyncio.run(saved())
    artifact = Artifact.objects.get()
    assert "notes.txt" in admin_client.get("/admin/artifacts_app/artifact/").content.decode()
    page = admin_client.get(f"/admin/artifacts_app/artifact/{artifact.pk}/change/").content.decode()
    assert page.count("text/plain") == 2 and "<pre style='white-space: pre-wrap'>two</pre>" in page
    download = admin_client.get(f"/admin/artifacts_app/artifact/{artifact.pk}/versions/0/content/")
    assert (download["Content-Type"], download.content) == ("text/plain; charset=utf-8", b"one")


def test_cognizes_uri_gives_adks_cli_the_postgres_artifact_service():
    from google.adk.cli.service_registry import get_service_registry

    from cognizes.adk_services import register

    register()
    assert isinstance(get_service_registry().create_artifact_service("cognizes://"), PostgresArtifactService)


def test_runner_for_stores_artifacts_in_postgresql():
    from google.adk.agents import LlmAgent

    from cognizes.adk import runner_for

    runner = runner_for(LlmAgent(name="a", model="gemini-2.5-flash"), app_name="art_app", registry_tools=False)
    assert isinstance(runner.artifact_service, PostgresArtifactService)


async def test_a_padded_session_id_names_the_same_sessions_artifacts():
    """As PostgresSessionService trims session ids, artifacts saved under 'sess0\\n' are sess0's."""
    service = PostgresArtifactService()
    await service.save_artifact(
        app_name="art_app", user_id="ada", session_id="sess0\n", filename="a.txt", artifact=types.Part(text="hello")
    )
    assert await service.load_artifact(
        app_name="art_app", user_id="ada", session_id="sess0", filename="a.txt"
    ) == types.Part(text="hello")
    assert await service.list_artifact_keys(app_name="art_app", user_id="ada", session_id=" sess0") == ["a.txt"]


def test_an_events_artifact_delta_links_to_the_artifact_in_the_admin(admin_client):
    """A turn that saved an artifact: its event on the session page links to it."""
    from google.adk.events.event import Event
    from google.adk.events.event_actions import EventActions

    from cognizes.adk import PostgresSessionService
    from sessions_app.models import Session

    async def turn():
        sessions = PostgresSessionService()
        session = await sessions.create_session(app_name="art_app", user_id="ada", session_id="s1")
        await PostgresArtifactService().save_artifact(
            app_name="art_app", user_id="ada", session_id="s1", filename="plot.png", artifact=types.Part(text="x")
        )
        await sessions.append_event(
            session, Event(author="agent", invocation_id="i", actions=EventActions(artifact_delta={"plot.png": 0}))
        )

    asyncio.run(turn())
    page = admin_client.get(f"/admin/sessions_app/session/{Session.objects.get().pk}/change/").content.decode()
    assert (
        '/admin/artifacts_app/artifact/?app_name=art_app&amp;user_id=ada&amp;filename=plot.png">plot.png v0</a>' in page
    )
    listed = admin_client.get("/admin/artifacts_app/artifact/?app_name=art_app&user_id=ada&filename=plot.png")
    assert listed.status_code == 200 and "plot.png" in listed.content.decode()
