"""Deleting a session can take its memories with it: those it alone gave are forgotten, shared ones lose a source.

google/adk-python#7109: deleting a session left every memory made from it behind.
By default (as in Vertex AI) memories outlive their sessions; the setting and the
explicit action (API, admin) forget them, with revisions saying why.
"""

from __future__ import annotations

import asyncio

import pytest
from django.test import override_settings

from cognizes.adk import PostgresSessionService
from memory_app.models import Memory, MemoryRevision, Status
from memory_app.services import Candidate, do_remember
from sessions_app import services as sessions
from tests.api.conftest import client_for
from tests.memory.sessions import session_with_events

pytestmark = pytest.mark.django_db

APP = "lifecycle"
BASE = f"/api/v1/apps/{APP}/users/ada"


@pytest.fixture
def memories():
    """ "I play the cello." said in s1 only; "I live in Lisbon." in s1 and again in s2."""
    session_with_events(APP, session_id="s1")
    session_with_events(APP, session_id="s2")
    do_remember(
        app_name=APP,
        user_id="ada",
        cause="test",
        candidates=[
            Candidate(text="I play the cello.", session_id="s1", event_ids=("e3",)),
            Candidate(text="I live in Lisbon.", session_id="s1", event_ids=("e1",)),
        ],
    )
    do_remember(
        app_name=APP,
        user_id="ada",
        cause="test",
        candidates=[
            Candidate(text="I live in Lisbon.", session_id="s2", event_ids=("e9",)),
        ],
    )


def states() -> dict[str, tuple[str, list[str]]]:
    return {m.text: (m.status, m.source_session_ids) for m in Memory.objects.all()}


def test_by_default_deleting_a_session_keeps_its_memories(memories):
    assert sessions.do_delete_session(app_name=APP, user_id="ada", session_id="s1")
    assert states() == {"I play the cello.": ("active", ["s1"]), "I live in Lisbon.": ("active", ["s1", "s2"])}


@pytest.mark.django_db(transaction=True)  # ADK's service deletes on its own thread and connection, and commits
@override_settings(COGNIZES_FORGET_MEMORIES_WITH_SESSIONS=True)
def test_with_the_setting_deleting_a_session_through_adk_forgets_what_only_it_gave(memories):
    asyncio.run(PostgresSessionService().delete_session(app_name=APP, user_id="ada", session_id="s1"))

    assert states() == {"I play the cello.": ("forgotten", ["s1"]), "I live in Lisbon.": ("active", ["s2"])}
    lisbon = Memory.objects.get(text="I live in Lisbon.")
    assert (lisbon.source_session_id, lisbon.source_event_ids) == ("s2", ["e9"])
    why = MemoryRevision.objects.filter(memory__text="I play the cello.").last()
    assert (why.action, why.cause) == ("forget", "session s1 deleted")


def test_the_api_action_forgets_a_sessions_memories_even_after_it_is_gone(memories):
    sessions.do_delete_session(app_name=APP, user_id="ada", session_id="s1")
    api = client_for(APP)

    answer = api.post(f"{BASE}/sessions/s1/forget-memories/").json()

    cello, lisbon = Memory.objects.get(text="I play the cello."), Memory.objects.get(text="I live in Lisbon.")
    assert answer == {"forgotten": [str(cello.id)], "detached": [str(lisbon.id)]}
    assert (cello.status, lisbon.status) == (Status.FORGOTTEN, Status.ACTIVE)
    assert api.post(f"{BASE}/sessions/s1/forget-memories/").json() == {"forgotten": [], "detached": []}
    assert client_for("other_app").post(f"{BASE}/sessions/s1/forget-memories/").status_code == 404


def test_the_admin_action_on_sessions(admin_client, memories):
    from sessions_app.models import Session

    s2 = Session.objects.get(app_name=APP, session_id="s2")
    admin_client.post(
        "/admin/sessions_app/session/", {"action": "forget_session_memories", "_selected_action": [str(s2.pk)]}
    )
    assert states() == {"I play the cello.": ("active", ["s1"]), "I live in Lisbon.": ("active", ["s1"])}


@override_settings(COGNIZES_FORGET_MEMORIES_WITH_SESSIONS=True)
def test_deleting_sessions_from_the_admin_list_forgets_with_the_setting(
    admin_client, memories, django_capture_on_commit_callbacks
):
    from sessions_app.models import Session

    s1 = Session.objects.get(app_name=APP, session_id="s1")
    with django_capture_on_commit_callbacks(execute=True):
        admin_client.post(
            "/admin/sessions_app/session/",
            {"action": "delete_selected", "post": "yes", "_selected_action": [str(s1.pk)]},
        )
    assert not Session.objects.filter(pk=s1.pk).exists()
    assert states() == {"I play the cello.": ("forgotten", ["s1"]), "I live in Lisbon.": ("active", ["s2"])}
