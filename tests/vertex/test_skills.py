"""Skills on a real server (issue 47 item 5): agentplatform 2.6's ``client.skills`` (v1beta1) creates, gets, lists,
updates, retrieves, reads revisions and deletes; ADK's own ``GCPSkillRegistry`` (AGENT_REGISTRY_ENDPOINT pointed at
Cognizes, the key as its bearer token) searches, gets and loads the same skills; hostile zips are 400s; other
apps' keys see nothing."""

from __future__ import annotations

import asyncio
import base64
import io
import os
import stat
import zipfile

import httpx
import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext
from google.genai.errors import ClientError
from google.oauth2.credentials import Credentials

from tests.vertex.conftest import APP
from tools_app.skill_models import Skill
from tools_app.skills import default_revision, skills_of

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.filterwarnings("ignore::UserWarning")]

PARENT = "projects/my-project/locations/us-central1"
WEATHER = """---
name: weather-report
description: Écrit un bulletin météo — 天気予報を書く; пишет прогноз погоды.
license: Apache-2.0
---
Use get_weather, then write two sentences.
"""
PARCEL = """---
name: parcel-shipping
description: Quotes the price of shipping a parcel abroad.
---
Ask for the weight first.
"""


def _zip(skill_md: str, files: dict[str, bytes] | None = None) -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as archive:
        archive.writestr("SKILL.md", skill_md)
        for name, data in (files or {}).items():
            archive.writestr(name, data)
    return buffer.getvalue()


def _client(server, key: str | None = None):
    return server.project_client(key).skills


def test_agentplatform_creates_gets_lists_updates_retrieves_and_deletes_skills(server):
    skills = _client(server)
    created = skills.create(
        skill_id="weather-report",
        display_name="weather-report",
        description="",
        config={"zipped_filesystem": _zip(WEATHER, {"references/stations.md": "# Stations\nZürich, 東京".encode()})},
    )
    assert created.name == f"{PARENT}/skills/weather-report"
    assert created.description.startswith("Écrit un bulletin météo") and created.license == "Apache-2.0"
    skills.create(
        skill_id="parcel.shipping", display_name="parcel", description="", config={"zipped_filesystem": _zip(PARCEL)}
    )

    assert [s.name.rsplit("/", 1)[1] for s in skills.list()] == ["parcel.shipping", "weather-report"]
    with CaptureQueriesContext(connection) as listing:
        records = skills_of(APP)
        assert [default_revision(skill) is not None for skill in records] == [True, True]
    assert len(listing.captured_queries) == 1  # a list is one query, revisions included
    assert [s.display_name for s in skills.list(config={"filter": 'displayName:"weather"'})] == ["weather-report"]
    for query, expected in [
        ("天気予報", "weather-report"),
        ("прогноз погоды", "weather-report"),
        ("ship a box", "parcel.shipping"),
    ]:
        found = skills.retrieve(query=query, config={"top_k": 1}).retrieved_skills
        assert found[0].skill_name.endswith(expected), (query, found)

    updated = skills.update(
        name=created.name,
        config={"description": "Writes a weather report.", "zipped_filesystem": _zip(WEATHER.replace("two", "three"))},
    )
    assert updated.description == "Writes a weather report."
    revisions = skills.revisions.list(name=created.name).skill_revisions
    assert len(revisions) == 2
    newest = skills.revisions.get(name=revisions[0].name)
    assert newest.skill.name == created.name and newest.name == revisions[0].name

    skills.delete(name=f"{PARENT}/skills/parcel.shipping")
    with pytest.raises(ClientError) as gone:
        skills.get(name=f"{PARENT}/skills/parcel.shipping")
    assert gone.value.code == 404


def test_adks_gcp_skill_registry_finds_and_loads_skills_on_cognizes(server, monkeypatch):
    from google.adk.integrations.skill_registry.gcp_skill_registry import GCPSkillRegistry

    _client(server).create(
        skill_id="cloud.weather-report",
        display_name="",
        description="",
        config={"zipped_filesystem": _zip(WEATHER, {"scripts/report.py": b"print('42')"})},
    )
    monkeypatch.setenv("AGENT_REGISTRY_ENDPOINT", f"{server.base_url}v1alpha")
    registry = GCPSkillRegistry(
        project_id="my-project", location="us-central1", credentials=Credentials(token=server.key)
    )

    found = asyncio.run(registry.search_skills(query="прогноз погоды"))
    skill = asyncio.run(registry.get_skill(name="cloud.weather-report"))

    assert [(s.name, s.description[:20]) for s in found] == [("cloud.weather-report", "Écrit un bulletin mé")]
    assert skill.frontmatter.name == "weather-report" and "two sentences" in skill.instructions
    assert skill.resources.scripts["report.py"].src == "print('42')"


def test_hostile_zips_are_refused_with_400(server):
    headers = {"Authorization": f"Bearer {server.key}"}

    def create(zipped: bytes, skill_id: str = "evil") -> httpx.Response:
        body = {"displayName": "x", "description": "x", "zippedFilesystem": base64.b64encode(zipped).decode()}
        return httpx.post(
            f"{server.base_url}v1beta1/{PARENT}/skills", params={"skillId": skill_id}, json=body, headers=headers
        )

    def with_entry(name: str, data: bytes = b"x", *, link: bool = False) -> bytes:
        buffer = io.BytesIO()
        with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as archive:
            archive.writestr("SKILL.md", WEATHER)
            info = zipfile.ZipInfo(name)
            if link:
                info.external_attr = (stat.S_IFLNK | 0o777) << 16
            archive.writestr(info, data)
        return buffer.getvalue()

    bomb = io.BytesIO()
    with zipfile.ZipFile(bomb, "w", zipfile.ZIP_DEFLATED) as archive:
        archive.writestr("SKILL.md", WEATHER)
        archive.writestr("assets/zeros.bin", b"\0" * (64 * 1024 * 1024))
    yaml_bomb = (
        "---\nname: weather-report\ndescription: x\na: &a [1,1,1,1,1,1,1,1,1]\nb: &b [*a,*a,*a,*a,*a,*a,*a,*a]\n---\n"
    )
    cases = {
        "not a zip": b"PK\x03\x04 nothing",
        "no SKILL.md": _zip(WEATHER).replace(b"SKILL.md", b"OTHER.md"),
        "path out": with_entry("../../etc/passwd"),
        "absolute": with_entry("/etc/passwd"),
        "backslash": with_entry("scripts\\..\\x.py"),
        "symlink": with_entry("references/link", b"/etc/passwd", link=True),
        "zip bomb": bomb.getvalue(),
        "yaml bomb": _zip(yaml_bomb),
        "bad front matter": _zip("---\nname: Not Kebab\ndescription: x\n---\n"),
        "too big": _zip(WEATHER, {"assets/noise.bin": os.urandom(600 * 1024)}),
    }
    for what, zipped in cases.items():
        response = create(zipped)
        assert response.status_code == 400, (what, response.text)
        assert response.json()["error"]["status"] == "INVALID_ARGUMENT", what
    for skill_id in ("Upper", "a..b", "-x", "x" * 64):
        assert create(_zip(WEATHER), skill_id=skill_id).status_code == 400, skill_id
    not_base64 = httpx.post(
        f"{server.base_url}v1beta1/{PARENT}/skills",
        params={"skillId": "x"},
        json={"zippedFilesystem": "!!!"},
        headers=headers,
    )
    assert not_base64.status_code == 400
    assert not Skill.objects.exists()


def test_other_apps_keys_see_no_skill_and_a_users_key_only_reads(server):
    name = (
        _client(server)
        .create(skill_id="weather-report", display_name="", description="", config={"zipped_filesystem": _zip(WEATHER)})
        .name
    )
    stranger = _client(server, server.key_for(app_name="another_app"))
    with pytest.raises(ClientError) as hidden:
        stranger.get(name=name)
    assert hidden.value.code == 404
    assert list(stranger.list()) == [] and not stranger.retrieve(query="weather").retrieved_skills
    zip_url = f"{server.base_url}v1alpha/{name}/revisions/{Skill.objects.get().revisions.get().pk}"
    foreign = httpx.get(
        zip_url, params={"alt": "media"}, headers={"Authorization": f"Bearer {server.key_for(app_name='another_app')}"}
    )
    assert foreign.status_code == 404

    ada = _client(server, server.key_for(user_id="ada"))
    assert ada.get(name=name).description.startswith("Écrit")
    with pytest.raises(ClientError) as refused:
        ada.delete(name=name)
    assert refused.value.code == 403
    own = httpx.get(zip_url, params={"alt": "media"}, headers={"Authorization": f"Bearer {server.key}"})
    assert own.headers["content-type"] == "application/zip" and own.headers["x-content-type-options"] == "nosniff"
    assert own.headers["content-disposition"].startswith("attachment")


def test_a_skill_uploaded_in_the_admin_is_served_and_a_hostile_zip_is_refused_there(server, admin_user):
    from django.core.files.uploadedfile import SimpleUploadedFile
    from django.test import Client

    staff = Client()
    staff.force_login(admin_user)
    form = {"app_name": "vertex_shop", "skill_id": "weather-report", "state": "ACTIVE", "labels": "{}"}
    evil = SimpleUploadedFile("evil.zip", _zip(WEATHER, {"../escape.py": b"x"}), content_type="application/zip")
    refused = staff.post("/admin/tools_app/skill/add/", {**form, "zip_file": evil})
    assert refused.status_code == 200 and "not a plain relative path" in refused.content.decode()
    assert not Skill.objects.exists()

    upload = SimpleUploadedFile("weather.zip", _zip(WEATHER), content_type="application/zip")
    added = staff.post("/admin/tools_app/skill/add/", {**form, "zip_file": upload})
    assert added.status_code == 302, added.context["adminform"].form.errors

    got = _client(server).get(name=f"{PARENT}/skills/weather-report")
    assert got.display_name == "weather-report" and got.description.startswith("Écrit un bulletin météo")
