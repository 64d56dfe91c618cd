"""Erasing a user removes everything stored of them in every table, and nothing of anyone else.

One API call (or one admin action) against data in every app: sessions and
events, feedback on them, user state, memories and revisions, consolidation jobs, artifacts with
their versions and bytes, tool calls, approvals, sandbox runs, A2A tasks, traces and spans, and the
knowledge documents that are theirs (uploaded with their keys).
"""

from __future__ import annotations

import asyncio

import pytest
from django.apps import apps as django_apps
from django.db import connection
from django.utils import timezone
from google.genai import types

from cognizes.access.models import ApiKey
from cognizes.adk import PostgresArtifactService
from knowledge_app.models import Corpus, Document
from memory_app import consolidation
from memory_app.services import Candidate, do_remember
from runtime_app.models import A2aTask
from sessions_app import services as sessions
from sessions_app.models import FeedbackEntry, Session
from tests.api.conftest import client_for
from tests.memory.sessions import session_with_events
from tests.tracing.factories import record_trace
from tools_app.credentials import do_save_credential
from tools_app.models import SandboxExecution, ToolApproval, ToolExecution, UserCredential
from tracing_app.models import Trace

pytestmark = pytest.mark.django_db(transaction=True)

APP = "erase_app"


def fill(user_id: str, trace_id: str) -> None:
    session_with_events(APP, user_id=user_id, session_id="s1")
    sessions.do_replace_user_state(app_name=APP, user_id=user_id, state={"lang": "pt"}, expected_version=0)
    do_remember(app_name=APP, user_id=user_id, cause="test", candidates=[Candidate(text=f"{user_id} plays chess.")])
    consolidation.do_enqueue_session(app_name=APP, user_id=user_id, session_id="s1", run_inline=True)
    asyncio.run(
        PostgresArtifactService().save_artifact(
            app_name=APP,
            user_id=user_id,
            session_id="s1",
            filename="scan.png",
            artifact=types.Part(inline_data=types.Blob(data=b"png", mime_type="image/png")),
        )
    )
    scope = {"app_name": APP, "user_id": user_id, "session_id": "s1"}
    ToolExecution.objects.create(
        **scope, tool_name="get_weather", status="succeeded", started_at=timezone.now(), duration_ms=1.0
    )
    ToolApproval.objects.create(**scope, request_id=f"r-{user_id}", function_call_id="f", tool_name="pay")
    SandboxExecution.objects.create(
        **scope,
        code="print(1)",
        language="python",
        exit_status="OUTCOME_OK",
        started_at=timezone.now(),
        duration_ms=1.0,
    )
    A2aTask.objects.create(
        app_name=APP,
        user_id=user_id,
        context_id="s1",
        task_id=f"t-{user_id}",
        state="TASK_STATE_COMPLETED",
        data={"id": f"t-{user_id}"},
    )
    do_save_credential(app_name=APP, user_id=user_id, credential_key="adk_oauth2_calendar", credential_json="{}")
    session = Session.objects.get(app_name=APP, user_id=user_id, session_id="s1")
    FeedbackEntry.objects.create(
        session=session,
        app_name=APP,
        user_id=user_id,
        event_id=session.events.first().event_id,
        feedback_type="THUMBS_UP",
    )
    record_trace(trace_id, session_id="s1")
    Trace.objects.filter(trace_id=trace_id).update(app_name=APP, user_id=user_id)
    corpus, _ = Corpus.objects.get_or_create(app_name=APP, display_name="Memories")  # the app's: it stays
    Document.objects.create(
        corpus=corpus,
        app_name=APP,
        user_id=user_id,
        display_name="s1.txt",
        content_hash=user_id,
        content=f"{user_id}'s session".encode(),
    )


def rows() -> dict[str, int]:
    """Rows of every table of the database (but the API keys, which the test itself adds)."""
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT tablename FROM pg_tables WHERE schemaname = 'public' AND tablename <> %s", [ApiKey._meta.db_table]
        )
        counts = {}
        for (table,) in cursor.fetchall():
            cursor.execute(f'SELECT count(*) FROM "{table}"')
            counts[table] = cursor.fetchone()[0]
    return counts


def test_erasing_a_user_empties_their_rows_in_every_table_and_leaves_the_others():
    fill("bob", "b" * 32)
    only_bob = rows()
    fill("ada", "a" * 32)
    before = rows()
    assert {t for t in before if before[t] > only_bob[t]} >= {
        "sessions",
        "events",
        "user_states",
        "memories",
        "memory_revisions",
        "consolidation_jobs",
        "artifacts",
        "artifact_versions",
        "artifact_contents",
        "traces",
        "spans",
        "knowledge_documents",
        "feedback_entries",
        *(model._meta.db_table for model in (ToolExecution, ToolApproval, SandboxExecution, A2aTask, UserCredential)),
    }

    answer = client_for(APP).delete(f"/api/v1/apps/{APP}/users/ada/")

    assert answer.status_code == 200
    assert rows() == only_bob  # every table back to what bob alone had
    kinds = {
        model._meta.db_table: "_".join(str(model._meta.verbose_name_plural).lower().split())
        for model in django_apps.get_models()
        if not model._meta.proxy  # a proxy (the admin's profile fields) names a table another model owns
    }
    erased = {kinds.get(t, t): before[t] - only_bob[t] for t in before if before[t] > only_bob[t]}
    assert answer.json()["erased"] == erased
    named = {"tool_executions", "a2a_tasks", "sandbox_executions", "user_credentials"}
    assert named <= set(erased)  # named as what they are
    assert client_for(APP, read_only=True).delete(f"/api/v1/apps/{APP}/users/bob/").status_code == 403
    assert client_for("other_app").delete(f"/api/v1/apps/{APP}/users/bob/").status_code == 404


@pytest.mark.parametrize("user_id, why", [("%20", "user_id must be a non-empty string"), ("a%00b", "NUL")])
def test_erasing_a_user_id_that_cannot_exist_is_a_400_that_changes_nothing(user_id, why):
    fill("bob", "b" * 32)
    before = rows()
    answer = client_for(APP).delete(f"/api/v1/apps/{APP}/users/{user_id}/")
    assert answer.status_code == 400, answer.content
    assert why in answer.content.decode()
    assert rows() == before


def test_the_sessions_admin_erases_the_users_of_selected_sessions(admin_client):
    from memory_app.models import Memory
    from sessions_app.models import Session, UserState

    fill("ada", "a" * 32)
    fill("bob", "b" * 32)
    ada = Session.objects.get(app_name=APP, user_id="ada")

    admin_client.post("/admin/sessions_app/session/", {"action": "erase_users", "_selected_action": [str(ada.pk)]})

    assert sorted(Session.objects.values_list("user_id", flat=True)) == ["bob"]
    assert sorted(UserState.objects.values_list("user_id", flat=True)) == ["bob"]
    assert set(Memory.objects.values_list("user_id", flat=True)) == {"bob"}
