"""The service's database threads keep persistent connections: one the server closed is replaced unseen.

Django's own check of such a connection is a ``SELECT 1`` before its first use after every call;
``cognizes.infra.postgres`` looks at the socket instead (tests/sessions/test_connections.py times nothing:
bench/sessions.py counts the cost).
"""

from __future__ import annotations

import asyncio
import time

import pytest
from django.db import connection

from cognizes.adk import PostgresSessionService
from cognizes.infra.db_threads import run_in_db_thread
from tests.sessions.test_contract import text_event

pytestmark = pytest.mark.django_db(transaction=True)


def _backend_pid() -> int:
    with connection.cursor() as cursor:
        cursor.execute("SELECT pg_backend_pid()")
        return cursor.fetchone()[0]


def _terminate(pids: set[int]) -> int:
    with connection.cursor() as cursor:
        cursor.execute("SELECT count(pg_terminate_backend(pid)) FROM unnest(%s::int[]) AS pid", [sorted(pids)])
        terminated = cursor.fetchone()[0]
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline:  # pg_terminate_backend only signals: wait until they are gone
            cursor.execute("SELECT count(*) FROM pg_stat_activity WHERE pid = ANY(%s::int[])", [sorted(pids)])
            if cursor.fetchone()[0] == 0:
                break
            time.sleep(0.01)
    connection.close()
    return terminated


async def test_appends_and_reads_go_on_after_the_server_ends_every_connection_of_the_service():
    service = PostgresSessionService()
    session = await service.create_session(app_name="conn_app", user_id="u", state={"n": 0})
    await service.append_event(session, text_event("before", n=1))

    threads = {await run_in_db_thread(_backend_pid) for _ in range(5)}  # the connections the service uses
    assert await asyncio.to_thread(_terminate, threads) == len(threads)  # on a thread (and connection) of its own
    await service.append_event(session, text_event("after", n=2))

    stored = await service.get_session(app_name="conn_app", user_id="u", session_id=session.id)
    assert [e.content.parts[0].text for e in stored.events] == ["before", "after"]
    assert stored.state == {"n": 2}
