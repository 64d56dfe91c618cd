"""PostgresArtifactService keeps ADK's artifact contract: each case runs against ADK's InMemoryArtifactService too.

The cases follow ADK 2.13's BaseArtifactService documentation and what its own
services do (versions from 0, ``user:`` names seen from every session, inline
data, text and file-data parts unchanged, ``artifact://`` references followed
within their scope); the in-memory run shows the expectation is ADK's, the
PostgreSQL run that Cognizes meets it.
"""

from __future__ import annotations

import pytest
from google.adk.artifacts import InMemoryArtifactService
from google.adk.errors.input_validation_error import InputValidationError
from google.adk.platform import time as platform_time
from google.genai import types

from cognizes.adk import PostgresArtifactService

pytestmark = pytest.mark.django_db(transaction=True)

APP, USER = "art_app", "ada"


@pytest.fixture(params=["in_memory", "postgres"])
def service(request):
    return InMemoryArtifactService() if request.param == "in_memory" else PostgresArtifactService()


def inline(data: bytes, mime_type: str = "image/png") -> types.Part:
    return types.Part(inline_data=types.Blob(data=data, mime_type=mime_type))


async def save(service, filename: str, part, session_id: str | None = "s1", **kwargs) -> int:
    return await service.save_artifact(
        app_name=APP, user_id=USER, session_id=session_id, filename=filename, artifact=part, **kwargs
    )


async def load(service, filename: str, session_id: str | None = "s1", **kwargs):
    return await service.load_artifact(app_name=APP, user_id=USER, session_id=session_id, filename=filename, **kwargs)


async def test_versions_count_from_zero_and_any_version_loads(service):
    assert [await save(service, "report.png", inline(bytes([i]) * 10)) for i in range(3)] == [0, 1, 2]

    assert await load(service, "report.png") == inline(b"\x02" * 10)
    assert await load(service, "report.png", version=0) == inline(b"\x00" * 10)
    assert await load(service, "report.png", version=7) is None
    assert await load(service, "missing.png") is None
    assert await service.list_versions(app_name=APP, user_id=USER, session_id="s1", filename="report.png") == [0, 1, 2]


async def test_text_and_file_data_parts_round_trip_with_their_mime_types(service):
    await save(service, "notes.txt", types.Part(text="Remember the milk."))
    file_part = types.Part(file_data=types.FileData(file_uri="gs://bucket/video.mp4", mime_type="video/mp4"))
    await save(service, "video", file_part)

    assert await load(service, "notes.txt") == types.Part(text="Remember the milk.")
    assert await load(service, "video") == file_part
    versions = [
        await service.get_artifact_version(app_name=APP, user_id=USER, session_id="s1", filename=name)
        for name in ("notes.txt", "video")
    ]
    assert [v.mime_type for v in versions] == ["text/plain", "video/mp4"]


async def test_a_dict_in_camel_case_is_a_part(service):
    await save(service, "data.bin", {"inlineData": {"data": "AAEC", "mimeType": "application/octet-stream"}})
    assert await load(service, "data.bin") == inline(b"\x00\x01\x02", "application/octet-stream")


async def test_user_artifacts_are_seen_from_every_session_and_listed_with_the_sessions_own(service):
    await save(service, "user:avatar.png", inline(b"me"), session_id="s1")
    await save(service, "draft.md", types.Part(text="# Draft"), session_id="s1")
    await save(service, "other.md", types.Part(text="# Other"), session_id="s2")

    assert await load(service, "user:avatar.png", session_id="s2") == inline(b"me")
    assert await load(service, "user:avatar.png", session_id=None) == inline(b"me")
    assert await service.list_artifact_keys(app_name=APP, user_id=USER, session_id="s1") == [
        "draft.md",
        "user:avatar.png",
    ]
    assert await service.list_artifact_keys(app_name=APP, user_id=USER) == ["user:avatar.png"]
    assert await service.list_artifact_keys(app_name=APP, user_id="bob", session_id="s1") == []


async def test_a_session_name_needs_a_session(service):
    with pytest.raises(InputValidationError):
        await save(service, "draft.md", types.Part(text="x"), session_id=None)


async def test_unsafe_path_segments_are_refused(service):
    with pytest.raises(InputValidationError):
        await service.save_artifact(
            app_name=APP, user_id="../bob", session_id="s1", filename="x", artifact=types.Part(text="x")
        )


async def test_version_metadata(service):
    await save(service, "chart.png", inline(b"v0"), custom_metadata={"source": "tool"})
    await save(service, "user:cv.pdf", inline(b"%PDF", "application/pdf"))

    [version] = await service.list_artifact_versions(app_name=APP, user_id=USER, session_id="s1", filename="chart.png")
    assert (version.version, version.mime_type, version.custom_metadata) == (0, "image/png", {"source": "tool"})
    assert version.canonical_uri.endswith(f"apps/{APP}/users/{USER}/sessions/s1/artifacts/chart.png/versions/0")
    assert isinstance(version.create_time, float)
    latest = await service.get_artifact_version(app_name=APP, user_id=USER, session_id="s9", filename="user:cv.pdf")
    assert latest.canonical_uri.endswith(f"apps/{APP}/users/{USER}/artifacts/user:cv.pdf/versions/0")
    assert (
        await service.get_artifact_version(app_name=APP, user_id=USER, session_id="s1", filename="chart.png", version=3)
        is None
    )


async def test_create_time_follows_adks_time_provider(service):
    """Agents under test pin ADK's clock (``google.adk.platform.time``); a version's time is that clock's."""
    platform_time.set_time_provider(lambda: 1_735_732_800.0)
    try:
        await save(service, "chart.png", inline(b"v0"))
    finally:
        platform_time.reset_time_provider()

    version = await service.get_artifact_version(app_name=APP, user_id=USER, session_id="s1", filename="chart.png")
    assert version.create_time == 1_735_732_800.0


async def test_delete_removes_every_version_and_the_name_starts_again(service):
    await save(service, "tmp.txt", types.Part(text="a"))
    await save(service, "tmp.txt", types.Part(text="b"))
    await service.delete_artifact(app_name=APP, user_id=USER, session_id="s1", filename="tmp.txt")

    assert await load(service, "tmp.txt") is None
    assert await service.list_versions(app_name=APP, user_id=USER, session_id="s1", filename="tmp.txt") == []
    assert await save(service, "tmp.txt", types.Part(text="c")) == 0


async def test_a_reference_to_another_artifact_is_followed_within_its_scope(service):
    await save(service, "user:logo.png", inline(b"logo"))
    uri = f"artifact://apps/{APP}/users/{USER}/artifacts/user:logo.png/versions/0"
    await save(service, "logo-ref", types.Part(file_data=types.FileData(file_uri=uri)))

    assert await load(service, "logo-ref") == inline(b"logo")
    foreign = f"artifact://apps/{APP}/users/bob/artifacts/user:logo.png/versions/0"
    with pytest.raises(InputValidationError):
        await save(service, "stolen", types.Part(file_data=types.FileData(file_uri=foreign)))
