"""Cognizes behind PgBouncer in transaction pooling mode, as production runs PostgreSQL past one machine.

The suites that exercise what a transaction pooler can break run again, in a
pytest of their own whose ``DATABASE_URL`` goes through Debian's pgbouncer (1.18,
``pool_mode = transaction``, fewer server connections than clients) and whose
``DATABASE_LISTEN_URL`` reaches PostgreSQL directly: the session contract and
concurrent writers (compare-and-swap in SQL), live event streams and the API key
cache (LISTEN), memory consolidation on a real Celery worker and hybrid search
(``SET LOCAL``, the transaction-level advisory lock; ADK's memory service and its
tools), and the run endpoints over a real uvicorn. PgBouncer's log must then hold
no notification delivered to a server connection no client was linked to — what a
LISTEN through the pool leaves.
"""

from __future__ import annotations

import os
import subprocess
import sys

import psycopg
import pytest
from django.conf import settings
from django.core.exceptions import ImproperlyConfigured
from django.db import connection

from cognizes.infra import direct_db, local
from cognizes.infra.postgres.base import ONLY_WHEN_ASKED, DatabaseWrapper
from tests.pgbouncer import EXECUTABLE, MISSING, PgBouncer
from tests.processes import ROOT

pytestmark = pytest.mark.skipif(not EXECUTABLE, reason=MISSING)

SUITES = [
    "tests/sessions/test_contract.py",
    "tests/sessions/test_concurrency.py",
    "tests/sessions/test_live.py",
    "tests/api/test_key_cache.py",
    "tests/memory/test_adk.py",
    "tests/runtime/test_http.py",
    "-k",
    "not in_memory",  # the contract's runs against ADK's in-memory service have no database to pool
]


@pytest.fixture
def bouncer():
    bouncer = PgBouncer(local.database_url(), pool_size=8)
    yield bouncer
    bouncer.stop()


def run_suites(bouncer: PgBouncer, **env: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "pytest", *SUITES, "-q", "-p", "no:cacheprovider", "-x"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=900,
        env={
            **os.environ,
            "DATABASE_URL": bouncer.url(local.DATABASE_NAME),
            "REDIS_URL": settings.REDIS_URL,
            "COGNIZES_TEST_DATABASE": "test_cognizes_pgbouncer",
            **env,
        },
    )


@pytest.mark.timeout(900)
def test_the_session_memory_live_and_run_suites_pass_through_pgbouncer(bouncer):
    run = run_suites(bouncer, DATABASE_TRANSACTION_POOLING="1", DATABASE_LISTEN_URL=local.database_url())
    assert run.returncode == 0, run.stdout[-6000:] + run.stderr[-3000:]
    assert " passed" in run.stdout.splitlines()[-1]
    assert "login attempt: db=test_cognizes_pgbouncer" in bouncer.log()  # the suites' connections went through it
    assert bouncer.notifications_to_nobody() == 0


def test_transaction_pooling_without_a_direct_listen_url_is_refused_at_start():
    run = subprocess.run(
        [sys.executable, "manage.py", "check"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
        env={**os.environ, "DATABASE_TRANSACTION_POOLING": "1", "DATABASE_LISTEN_URL": ""},
    )
    assert run.returncode != 0
    assert "DATABASE_TRANSACTION_POOLING needs DATABASE_LISTEN_URL" in run.stderr


def _through(url: str, **settings_dict):
    """Django's database settings as ``cognizes.settings`` makes them from ``url`` with the pooling setting unset."""
    from cognizes.settings import _database

    made = {**connection.settings_dict, **_database(url), **settings_dict}
    for key in ("TRANSACTION_POOLING", "PREPARED_STATEMENTS", "DISABLE_SERVER_SIDE_CURSORS", "TEST"):
        made.pop(key, None)
    made.setdefault("DISABLE_SERVER_SIDE_CURSORS", False)
    made["OPTIONS"] = {k: v for k, v in made["OPTIONS"].items() if k != "pool"}
    return made


def test_without_the_setting_a_transaction_pooler_is_found_at_the_first_connection(bouncer, django_db_blocker):
    """Issue 43 item 10: two clients' prepared statements met on one server connection of PgBouncer
    (``prepared statement "_pg3_0" already exists``). A pooler is found by the first connection; what the setting
    would have turned off is off, and a direct connection keeps its prepared statements."""
    pooled = _through(bouncer.url("postgres"))  # one dict for every thread's wrapper, as Django's
    clients = [DatabaseWrapper(pooled, alias="default") for _ in range(2)]  # not registered: connections of their own
    direct = DatabaseWrapper(_through(local.database_url().rsplit("/", 1)[0] + "/postgres"), alias="default")
    try:
        with django_db_blocker.unblock():
            for turn in range(3):
                for wrapper in (*clients, direct):
                    with wrapper.prepared_cursor() as cursor:
                        cursor.execute("SELECT %s::int + 1", [turn])
                        assert cursor.fetchone() == (turn + 1,)
        assert (pooled["TRANSACTION_POOLING"], pooled["DISABLE_SERVER_SIDE_CURSORS"]) == (True, True)
        assert direct.settings_dict["TRANSACTION_POOLING"] is False
        assert direct.connection.prepare_threshold == ONLY_WHEN_ASKED
    finally:
        for wrapper in (*clients, direct):
            wrapper.close()


def test_listening_through_a_pooler_is_refused_with_the_settings_to_set(bouncer):
    pooled = {"default": {**_through(bouncer.url("postgres")), "TRANSACTION_POOLING": None}}

    with pytest.raises(ImproperlyConfigured, match="DATABASE_LISTEN_URL") as refused:
        direct_db.connect("test listener", databases=pooled)
    with direct_db.connect("test listener", databases={**pooled, "listen": _through(local.database_url())}) as conn:
        assert isinstance(conn, psycopg.Connection)

    assert "DATABASE_TRANSACTION_POOLING" in str(refused.value)
