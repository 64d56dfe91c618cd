"""The hot session statements are prepared once per connection (cognizes.infra.postgres.prepared_cursor).

What a user would notice if it went wrong: an append or read failing after an error, a
rollback or a lost connection, because the server no longer has a statement the client
thinks it prepared; a pooled deployment failing outright (tests/test_pgbouncer.py runs
the session suites through PgBouncer, where nothing may be prepared). What it is for —
fewer microseconds per append — is bench/sessions.py's to count, not a test's.
"""

from __future__ import annotations

import asyncio

import pytest
from django.db import connection, transaction
from google.adk.errors._stale_session_error import StaleSessionError

from cognizes.adk import PostgresSessionService
from cognizes.infra.postgres.base import DatabaseWrapper
from sessions_app import services
from sessions_app.models import Session
from tests.sessions.test_contract import text_event

pytestmark = pytest.mark.django_db(transaction=True)

APP = "prepared_app"


def _prepared_statements() -> list[str]:
    """The statements prepared on this thread's connection (the server's view)."""
    with connection.cursor() as cursor:
        cursor.execute("SELECT statement FROM pg_prepared_statements")
        return [statement for (statement,) in cursor.fetchall()]


def _new_event(text: str, **state) -> services.NewEvent:
    from sessions_app.adk import to_new_event

    return to_new_event(text_event(text, **state))


def _append_and_read(session_id: str, count: int) -> services.StoredSession:
    version = services.get_session(app_name=APP, user_id="u", session_id=session_id).version
    for n in range(count):
        version = services.do_append_event(
            app_name=APP,
            user_id="u",
            session_id=session_id,
            expected_version=version,
            event=_new_event(f"turn {n}", n=n),
        )
    return services.get_session(app_name=APP, user_id="u", session_id=session_id)


def test_an_append_and_a_read_are_prepared_once_and_django_queries_never():
    session = services.do_create_session(
        app_name=APP, user_id="u", session_id="s1", delta=services.StateDelta(), now=1.0
    )
    stored = _append_and_read(session.session_id, 3)
    prepared = _prepared_statements()
    stored_again = _append_and_read(session.session_id, 3)
    for _ in range(10):  # more than psycopg's default threshold (5): Django's client-side cursors never prepare
        Session.objects.filter(app_name=APP).count()

    assert [len(stored.events_json), len(stored_again.events_json)] == [3, 6]
    assert stored_again.state == {"n": 2}
    assert any("UPDATE sessions" in statement and "INSERT INTO events" in statement for statement in prepared)
    assert any("FROM events WHERE session_id" in statement for statement in prepared)
    assert sorted(_prepared_statements()) == sorted(prepared)  # the same statements, not new ones per call


async def test_refused_appends_leave_the_prepared_statements_usable():
    service = PostgresSessionService()
    session = await service.create_session(app_name=APP, user_id="u", state={"n": 0})
    first = text_event("first", n=1)
    await service.append_event(session, first)

    with pytest.raises(ValueError, match="already stored"):  # the same event id again: refused by the unique index
        await service.append_event(session, first.model_copy())
    stale = await service.get_session(app_name=APP, user_id="u", session_id=session.id)
    await service.append_event(session, text_event("second", n=2))
    with pytest.raises(StaleSessionError):
        await service.append_event(stale, text_event("from a stale copy", n=99))
    await service.append_event(session, text_event("third", n=3))

    stored = await service.get_session(app_name=APP, user_id="u", session_id=session.id)
    assert [event.content.parts[0].text for event in stored.events] == ["first", "second", "third"]
    assert stored.state == {"n": 3}


def test_an_append_rolled_back_with_its_transaction_is_gone_and_the_next_one_lands():
    session = services.do_create_session(
        app_name=APP, user_id="u", session_id="s2", delta=services.StateDelta(), now=1.0
    )
    with pytest.raises(RuntimeError), transaction.atomic():
        services.do_append_event(
            app_name=APP,
            user_id="u",
            session_id="s2",
            expected_version=session.version,
            event=_new_event("rolled back", n=1),
        )
        raise RuntimeError("the caller's transaction fails after the append")
    version = services.do_append_event(
        app_name=APP, user_id="u", session_id="s2", expected_version=session.version, event=_new_event("kept", n=2)
    )

    stored = services.get_session(app_name=APP, user_id="u", session_id="s2")
    assert (version, stored.version, stored.state) == (session.version + 1, session.version + 1, {"n": 2})
    assert len(stored.events_json) == 1 and "kept" in stored.events_json[0]


def test_with_prepared_statements_off_as_behind_a_transaction_pooler_nothing_is_prepared():
    wrapper = DatabaseWrapper(
        {**connection.settings_dict, "PREPARED_STATEMENTS": False}, alias="default"
    )  # not registered: a second connection
    try:
        for _ in range(3):
            with wrapper.prepared_cursor() as cursor:
                cursor.execute("SELECT count(*) FROM sessions WHERE app_name = %s", [APP])
                assert cursor.fetchone() == (0,)
        with wrapper.cursor() as cursor:
            cursor.execute("SELECT count(*) FROM pg_prepared_statements")
            assert cursor.fetchone() == (0,)
        assert wrapper.connection.prepare_threshold is None
    finally:
        wrapper.close()


async def test_the_services_threads_answer_from_prepared_statements_after_their_connections_end():
    """The server forgetting every statement (its connections ended) is the client's cue to prepare anew."""
    from cognizes.infra.db_threads import run_in_db_thread
    from tests.sessions.test_connections import _backend_pid, _terminate

    service = PostgresSessionService()
    session = await service.create_session(app_name=APP, user_id="u", state={})
    await service.append_event(session, text_event("before", n=1))
    threads = {await run_in_db_thread(_backend_pid) for _ in range(5)}
    await asyncio.to_thread(_terminate, threads)

    await service.append_event(session, text_event("after", n=2))
    stored = await service.get_session(app_name=APP, user_id="u", session_id=session.id)
    assert [event.content.parts[0].text for event in stored.events] == ["before", "after"]
    assert await run_in_db_thread(lambda: any("INSERT INTO events" in s for s in _prepared_statements()))
