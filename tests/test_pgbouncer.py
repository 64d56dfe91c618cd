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

import pytest
from django.conf import settings

from cognizes.infra import local
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
