"""Shared fixtures: the real (embedded or configured) PostgreSQL and Redis."""

from __future__ import annotations

import contextlib
import functools
import os
import shutil
import ssl
import threading
import time
from collections.abc import Iterator

import pytest
from django.apps import apps
from django.conf import settings
from django.core.management.commands import flush as flush_command
from django.db import connection, connections

from cognizes.infra import notified_cache
from cognizes.infra.db_threads import close_connections


@pytest.fixture(scope="session", autouse=True)
def _test_database(request, django_db_setup, django_db_blocker):
    """Guard the test database, and close the services' thread connections before it is dropped.

    pytest-django creates the test database only for the tests it sees asking for
    one; a module that gets ``db`` indirectly must say ``pytestmark =
    pytest.mark.django_db``, or its writes would land in the development database.
    """
    if any(item.get_closest_marker("django_db") for item in request.session.items):
        name = settings.DATABASES["default"]["NAME"]
        assert name.startswith("test_"), f"tests would run against {name!r}: mark the module with django_db"
        with django_db_blocker.unblock():
            _migrated_rows.keep(connection)
    yield
    close_connections()
    notified_cache.close_all()  # or their listeners would reconnect to the database being dropped
    # Connections of other threads (asgiref's sync_to_async) would block DROP DATABASE.
    with django_db_blocker.unblock(), connection.cursor() as cursor:
        cursor.execute(
            "SELECT pg_terminate_backend(pid) FROM pg_stat_activity "
            "WHERE datname = current_database() AND pid <> pg_backend_pid()"
        )


class _MigratedRows:
    """The rows the migrations wrote (content types, permissions, the beat schedules of the data migrations), kept
    through the flush after every transactional test.

    Django's flush empties every table and writes back only what post_migrate writes, so a test that reads a
    schedule a data migration made passes only when no transactional test ran before it in its process: true of
    pytest-django's order in one process, not of the files pytest-xdist hands a worker. So the flush truncates only
    the tables that hold rows (a table without rows is what a flush makes it; ``TRUNCATE`` of all ~50 tables costs
    ~0.2-0.4 s after each of ~700 tests) and leaves a migrated table alone while it holds exactly its migrated rows
    (fingerprinted), or puts them back from a copy taken after the migrations. post_migrate then has nothing to add
    (another ~0.3-0.6 s a flush, saved).
    """

    SCHEMA = "migrated_rows"

    def __init__(self) -> None:
        self.fingerprints: dict[str, str] = {}  # table → its rows' fingerprint after the migrations

    def keep(self, connection) -> None:
        """Copy the tables the migrations left rows in (after the test database is made)."""
        quote = connection.ops.quote_name
        with connection.cursor() as cursor:
            cursor.execute(f"DROP SCHEMA IF EXISTS {self.SCHEMA} CASCADE; CREATE SCHEMA {self.SCHEMA}")
            for table in self._holding_rows(connection, _tables(connection)):
                cursor.execute(f"CREATE TABLE {self.SCHEMA}.{quote(table)} AS TABLE {quote(table)}")
                cursor.execute("SELECT " + self._fingerprint_sql(connection, table))
                self.fingerprints[table] = cursor.fetchone()[0]

    def sql_flush(self, style, connection, reset_sequences=True, allow_cascade=False) -> list[str]:
        """Django's flush SQL for the tables with rows other than their migrated ones, and SQL putting those back.

        With ``reset_sequences`` (a test's ``django_db(reset_sequences=True)``) every table is emptied, as Django
        does, and the migrated rows' sequences restart past them."""
        quote = connection.ops.quote_name
        tables = _tables(connection)
        written = tables if reset_sequences else self._holding_rows(connection, tables)
        # Truncating one migrated table truncates those referring to it (CASCADE), so all of them go back together.
        restored = list(self.fingerprints) if reset_sequences or self._changed(connection) else []
        truncated = [table for table in written if restored or table not in self.fingerprints]
        models = [model for model in apps.get_models(include_auto_created=True) if model._meta.db_table in restored]
        # CASCADE: PostgreSQL refuses to truncate a table an empty one refers to. The foreign keys are checked when
        # the flush commits, after the rows are back.
        return [
            *connection.ops.sql_flush(style, truncated, reset_sequences=reset_sequences, allow_cascade=True),
            *(f"INSERT INTO {quote(table)} SELECT * FROM {self.SCHEMA}.{quote(table)}" for table in restored),
            *(connection.ops.sequence_reset_sql(style, models) if reset_sequences else ()),
        ]

    def _changed(self, connection) -> bool:
        """Whether a migrated table holds other rows than its migrated ones (one query: this runs at every flush)."""
        if not self.fingerprints:
            return False
        with connection.cursor() as cursor:
            cursor.execute(
                "SELECT " + ", ".join(self._fingerprint_sql(connection, table) for table in self.fingerprints)
            )
            return list(cursor.fetchone()) != list(self.fingerprints.values())

    @staticmethod
    def _holding_rows(connection, tables: list[str]) -> list[str]:
        if not tables:
            return []
        quote = connection.ops.quote_name
        with connection.cursor() as cursor:
            cursor.execute(
                " UNION ALL ".join(f"SELECT {i} WHERE EXISTS (SELECT FROM {quote(t)})" for i, t in enumerate(tables))
            )
            return [tables[row[0]] for row in cursor.fetchall()]

    @staticmethod
    def _fingerprint_sql(connection, table: str) -> str:
        """Every row hashed: any row added, changed or deleted changes it."""
        table = connection.ops.quote_name(table)
        return f"(SELECT count(*) || ':' || coalesce(sum(hashtext(t::text)), 0) FROM {table} t)"


def _tables(connection) -> list[str]:
    return connection.introspection.django_table_names(only_existing=True, include_views=False)


_migrated_rows = _MigratedRows()
flush_command.sql_flush = _migrated_rows.sql_flush
# The flush's post_migrate signal: it would write only what _MigratedRows keeps or puts back.
flush_command.emit_post_migrate_signal = lambda *args, **kwargs: None


def _one_default_ssl_context() -> None:
    """Every client of the suite shares one default SSL context per trust store.

    google.genai builds three for each client (httpx's, aiohttp's and websockets'), and ADK's Vertex services build
    a client for each call: reading the CA bundle three times cost ~0.1 s a call, a sixth of the inner loop's CPU.
    The suite's servers are all plain HTTP on loopback, so no context is used for a handshake here.
    """
    create = ssl.create_default_context

    @functools.cache
    def shared(purpose=ssl.Purpose.SERVER_AUTH, *, cafile=None, capath=None, cadata=None) -> ssl.SSLContext:
        return create(purpose, cafile=cafile, capath=capath, cadata=cadata)

    ssl.create_default_context = shared  # type: ignore[assignment]


_one_default_ssl_context()


@pytest.fixture(autouse=True)
def _spans_written_before_teardown():
    """Write a test's pending spans before pytest-django empties the tables.

    The span exporter writes from the BatchSpanProcessor's thread; an insert still
    in flight while a transactional test's TRUNCATE runs deadlocks the flush.
    Plugin fixtures are set up first and torn down last, so this runs before it.
    """
    yield
    from opentelemetry import trace

    provider = trace.get_tracer_provider()
    if hasattr(provider, "force_flush"):
        # force_flush exports in the calling thread: use one with its own connection.
        flusher = threading.Thread(target=_flush, args=(provider,))
        flusher.start()
        flusher.join()


def _flush(provider) -> None:
    try:
        provider.force_flush(30_000)
    finally:
        connections.close_all()


@pytest.fixture(scope="session")
def _uvicorn(django_db_setup) -> Iterator[str]:
    """uvicorn serving the project's ASGI application on loopback, one for the run (it serves the tests in turn);
    its base URL. One for each test cost ~0.17 s a test, mostly uvicorn's shutdown, which sleeps 0.1 s twice."""
    import uvicorn

    from cognizes.asgi import application

    server = uvicorn.Server(uvicorn.Config(application, host="127.0.0.1", port=0, log_level="warning", lifespan="off"))
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    deadline = time.monotonic() + 30
    while not server.started:
        assert thread.is_alive() and time.monotonic() < deadline, "uvicorn did not start"
        time.sleep(0.02)
    port = server.servers[0].sockets[0].getsockname()[1]
    yield f"http://127.0.0.1:{port}"
    server.should_exit = True
    thread.join(30)


@pytest.fixture
def asgi_server(transactional_db, _uvicorn) -> str:
    """The project's ASGI application served by uvicorn on loopback (what ``make run`` serves); its base URL.

    Streaming responses (Server-Sent Events) need a real ASGI server: the test
    client would read an endless stream to its end. The server's threads reach the
    test database only while a test holds it (pytest-django's blocker), as with
    ``transactional_db`` their writes are seen by the test and emptied after it.
    """
    return _uvicorn


@pytest.fixture
def celery_worker(monkeypatch):
    """A real Celery worker on the real Redis broker, in this process (tasks run on its thread)."""
    from celery.contrib.testing.worker import start_worker
    from kombu.transport import redis

    from cognizes.celery import app as celery_app

    # Between messages the worker waits on Redis (BRPOP) for up to this long, and only then sees it is to stop: kombu's
    # 1 s made each test with a worker ~1 s longer.
    monkeypatch.setattr(redis.Transport, "brpop_timeout", 0.05)

    celery_app.control.purge()  # tasks left on the broker by earlier runs name other databases' rows
    # The teardown waits for a task still running (on a loaded machine, embedding a document can take a minute):
    # a worker left running past it would take the next test's first message and hold it unacknowledged.
    with start_worker(celery_app, pool="solo", perform_ping_check=False, shutdown_timeout=600) as worker:
        yield worker


@pytest.fixture
def browser():
    """Headless Chromium driven by Selenium; skips with the reason when either is missing."""
    webdriver = pytest.importorskip("selenium.webdriver", reason="selenium is not installed")
    chromium = shutil.which("chromium") or shutil.which("chromium-browser")
    chromedriver = shutil.which("chromedriver")
    if not (chromium and chromedriver):
        pytest.skip("no chromium/chromedriver on this machine (apt-get install chromium chromium-driver)")
    options = webdriver.ChromeOptions()
    options.binary_location = chromium
    for argument in ("--headless=new", "--no-sandbox", "--disable-dev-shm-usage", "--window-size=1400,900"):
        options.add_argument(argument)
    driver = webdriver.Chrome(options=options, service=webdriver.ChromeService(executable_path=chromedriver))
    yield driver
    driver.quit()


def pytest_sessionfinish(session, exitstatus):
    """Fail the run if a test left a server of its own running (issue 30): every private stack must be stopped.

    A test's servers keep their data under pytest's temporary directory, so a process whose command line names
    it outlived the test that started it. It is killed, and the run fails naming it.
    """
    import psutil

    factory = getattr(session.config, "_tmp_path_factory", None)
    if factory is None or getattr(factory, "_basetemp", None) is None:
        return
    base = str(factory.getbasetemp())
    left = [
        process
        for process in psutil.process_iter(["pid", "cmdline"])
        if process.pid != os.getpid() and base in " ".join(process.info["cmdline"] or [])
    ]
    if not left:
        return
    names = [" ".join(process.info["cmdline"])[:160] for process in left]
    for process in left:
        with contextlib.suppress(psutil.Error):
            process.kill()
    session.config.get_terminal_writer().line(f"\nLEFT RUNNING after the tests (killed now): {names}", red=True)
    session.exitstatus = pytest.ExitCode.TESTS_FAILED


# The tests `make test-fast` leaves out (pytest.ini names the markers), by the node-id prefix of what they start.
# Browser tests are marked by their fixture (``browser``), wherever they are.
_MARKED = {
    "servers": (  # servers or workers in processes of their own: private stacks, PgBouncer, `cognizes run`
        "tests/test_outages.py",
        "tests/test_hosts.py",
        "tests/test_replica.py",
        "tests/test_pgbouncer.py",
        "tests/test_package.py",
        "tests/docs/test_snippets.py",
        "tests/test_secret_key.py",
        "tests/vertex/test_agent_registry.py::test_the_docs_registry_snippet_",
        "tests/memory/test_lost_jobs.py",
        "tests/knowledge/test_lost_documents.py",
        "tests/test_admin_overview.py::test_a_killed_worker_goes_silent_and_a_stopped_beat_leaves",
    ),
    "clients": (  # other languages' toolchains (Go, Java and Maven) and ADK's own command-line servers
        "tests/vertex/test_official_clients.py",
        "tests/vertex/test_agent_registry.py::test_adk_for_go_",
        "tests/runtime/test_adk_cli.py::test_api_server_",
        "tests/vertex/test_adk_cli.py::test_api_server_",
    ),
    "sweeps": (  # a pass over the whole code base or API (pre-commit runs ruff and mypy before a commit)
        "tests/api/test_schemathesis.py",
        "tests/test_tidy.py::test_mypy_",
        "tests/test_security_lint.py::test_bandit_",
        "tests/docs/test_site.py",
    ),
}


def pytest_collection_finish(session):
    """Start mypy beside the suite when its test is selected (tests/test_tidy.start_mypy says why).

    Not in pytest-xdist's workers: each collects every test and would start its own. There the test is scheduled
    first (``pytest_collection_modifyitems``) and runs mypy itself beside the other worker's tests.
    """
    from tests import test_tidy

    if not _XDIST_WORKER and any(item.nodeid == test_tidy.MYPY_TEST for item in session.items):
        session.config.mypy_run = test_tidy.start_mypy()


def pytest_unconfigure(config):
    """A run stopped before the mypy test leaves no mypy behind."""
    typing = getattr(config, "mypy_run", None)
    if typing is not None and typing.poll() is None:
        typing.kill()
        typing.wait()


def pytest_collection_modifyitems(config, items):
    for item in items:
        if "browser" in getattr(item, "fixturenames", ()):
            item.add_marker(pytest.mark.browser)
        for marker, prefixes in _MARKED.items():
            if item.nodeid.startswith(prefixes):
                item.add_marker(getattr(pytest.mark, marker))
    if _XDIST_WORKER:
        items.sort(key=_longest_first)


# pytest-xdist's worker running this process ("gw0", "gw1", …), or "" when the tests run in one process.
_XDIST_WORKER = os.environ.get("PYTEST_XDIST_WORKER", "")


def _longest_first(item: pytest.Item) -> int:
    """Where a test goes in the order pytest-xdist hands files to its workers (every worker sorts the same way):
    mypy (a core for over a minute), then the files that start processes of their own, which take longest, so that
    the last files given out are short and both workers finish together."""
    from tests import test_tidy

    if item.nodeid == test_tidy.MYPY_TEST:
        return 0
    return 1 if any(item.get_closest_marker(marker) for marker in ("servers", "clients", "browser", "sweeps")) else 2
