"""Session expiry (Vertex's ttl / expireTime): an expired session is as if deleted at once, and removed hourly."""

from __future__ import annotations

import time
from datetime import UTC, datetime, timedelta

import pytest
from django.test import override_settings
from django_celery_beat.models import PeriodicTask
from google.adk.agents import LlmAgent

from cognizes.adk import PostgresSessionService, runner_for
from cognizes.infra.db_threads import run_in_db_thread
from sessions_app import services
from sessions_app.models import Event, Session
from sessions_app.tasks import remove_expired

pytestmark = pytest.mark.django_db

APP = "expiry_app"


def create(session_id: str, *, expires_in: timedelta | None) -> services.StoredSession:
    expire_time = datetime.now(UTC) + expires_in if expires_in is not None else None
    return services.do_create_session(
        app_name=APP,
        user_id="ada",
        session_id=session_id,
        delta=services.StateDelta(session={"a": 1}),
        now=time.time(),
        attributes=services.SessionAttributes(expire_time=expire_time),
    )


def append(session_id: str, version: int) -> int:
    event = services.NewEvent(
        event_id=f"e{version}",
        invocation_id="i",
        author="user",
        branch=None,
        timestamp=time.time(),
        data_json="{}",
        preview="",
        state_delta=services.StateDelta(),
    )
    return services.do_append_event(
        app_name=APP, user_id="ada", session_id=session_id, expected_version=version, event=event
    )


def test_an_expired_session_is_invisible_and_refuses_writes():
    create("old", expires_in=timedelta(seconds=-1))
    create("fresh", expires_in=timedelta(hours=1))
    create("forever", expires_in=None)

    assert services.get_session(app_name=APP, user_id="ada", session_id="old") is None
    assert [s.session_id for s in services.list_sessions(app_name=APP)] == ["old", "fresh", "forever"][1:]
    assert services.get_session_pk(app_name=APP, user_id="ada", session_id="old") is None
    with pytest.raises(services.SessionNotFound):
        append("old", 1)
    assert append("fresh", 1) == 2


@pytest.mark.django_db(transaction=True)  # now() is the transaction's start: let time pass between statements
def test_a_session_becomes_invisible_when_its_time_comes():
    create("soon", expires_in=timedelta(seconds=1))
    assert services.get_session(app_name=APP, user_id="ada", session_id="soon") is not None

    time.sleep(1.2)

    assert services.get_session(app_name=APP, user_id="ada", session_id="soon") is None


def test_an_expired_sessions_id_can_be_used_again():
    create("s1", expires_in=timedelta(seconds=-1))

    again = create("s1", expires_in=None)

    assert again.version == 1 and services.get_session(app_name=APP, user_id="ada", session_id="s1").state == {"a": 1}


def test_the_hourly_task_removes_expired_sessions_with_their_events():
    create("old", expires_in=timedelta(hours=1))
    append("old", 1)
    Session.objects.filter(session_id="old").update(expire_time=datetime.now(UTC) - timedelta(seconds=1))
    create("kept", expires_in=None)

    remove_expired()

    assert list(Session.objects.values_list("session_id", flat=True)) == ["kept"]
    assert Event.objects.count() == 0
    assert PeriodicTask.objects.get(task="sessions_app.remove_expired").interval.every == 1


def test_the_native_api_does_not_show_expired_sessions():
    from tests.api.conftest import client_for

    create("old", expires_in=timedelta(seconds=-1))
    create("fresh", expires_in=None)
    api = client_for(APP)

    listed = api.get(f"/api/v1/apps/{APP}/users/ada/sessions/").json()["results"]
    assert [s["id"] for s in listed] == ["fresh"]
    assert api.get(f"/api/v1/apps/{APP}/users/ada/sessions/old/").status_code == 404
    assert api.get(f"/api/v1/apps/{APP}/users/ada/sessions/old/events/").status_code == 404


async def test_sessions_created_through_adk_take_the_services_ttl(transactional_db):
    """runner_for(session_ttl=…) / PostgresSessionService(ttl=…): ADK's create_session has no TTL of its own."""

    async def expiry(service: PostgresSessionService, session_id: str) -> timedelta | None:
        await service.create_session(app_name="ttl_app", user_id="ada", session_id=session_id)
        expires = await run_in_db_thread(lambda: Session.objects.get(session_id=session_id).expire_time)
        return expires - datetime.now(UTC) if expires else None

    assert await expiry(PostgresSessionService(), "forever") is None  # the setting is unset by default
    assert (
        timedelta(minutes=59)
        < await expiry(PostgresSessionService(ttl=timedelta(hours=1)), "hour")
        <= timedelta(hours=1)
    )
    with override_settings(COGNIZES_SESSION_TTL_SECONDS=60):
        assert timedelta(seconds=55) < await expiry(PostgresSessionService(), "minute") <= timedelta(seconds=60)
    runner = runner_for(LlmAgent(name="a", model="gemini-2.5-flash"), app_name="ttl_app", session_ttl=timedelta(days=1))
    assert runner.session_service.ttl == timedelta(days=1)


@pytest.mark.django_db(transaction=True)
def test_expired_sessions_go_in_batches_that_skip_what_a_writer_holds():
    import psycopg

    from tests.processes import database_env

    for i in range(5):
        create(f"old{i}", expires_in=timedelta(seconds=-1))
    create("kept", expires_in=None)
    with psycopg.connect(database_env()["DATABASE_URL"]) as writer:  # a transaction holding one row, as a writer does
        writer.execute("SELECT 1 FROM sessions WHERE session_id = 'old0' FOR UPDATE")
        started = time.monotonic()
        assert services.do_delete_expired_sessions(batch=2) == 4  # three batches: 2, 2, and 0 (old0 skipped)
        assert time.monotonic() - started < 5  # it did not wait for the writer
    assert services.do_delete_expired_sessions(batch=2) == 1
    assert list(Session.objects.values_list("session_id", flat=True)) == ["kept"]
