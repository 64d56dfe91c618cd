"""``adk api_server --session_service_uri cognizes:// --memory_service_uri cognizes://`` runs on Cognizes."""

from __future__ import annotations

import json
import subprocess
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest
from google.adk.cli.service_registry import get_service_registry

from cognizes.adk import PostgresMemoryService, PostgresSessionService
from memory_app.models import ConsolidationJob
from runtime_app.adk_services import memory_service_factory, register, session_service_factory
from sessions_app.models import Event, Session
from tests.processes import ROOT, database_env, free_port
from tools_app.models import ToolExecution

pytestmark = pytest.mark.django_db(transaction=True)

ADK = Path(sys.executable).parent / "adk"  # the console script of this venv's google-adk
STARTUP_SECONDS = 60
PLUGINS = ("cognizes.adk.AuditPlugin", "cognizes.adk.MemoryIngestionPlugin")


def test_register_twice_leaves_one_factory_per_service():
    register()
    register()

    registry = get_service_registry()
    assert registry._session_factories["cognizes"] is session_service_factory
    assert registry._memory_factories["cognizes"] is memory_service_factory


def test_registry_builds_cognizes_services_for_the_bare_uri():
    register()
    registry = get_service_registry()

    assert isinstance(registry.create_session_service("cognizes://", agents_dir="demo_agents"), PostgresSessionService)
    assert isinstance(registry.create_memory_service("cognizes://", agents_dir="demo_agents"), PostgresMemoryService)


@pytest.mark.parametrize(
    "uri", ["cognizes://somehost/db", "cognizes:///db", "cognizes://?dbname=x"], ids=["host", "path", "query"]
)
def test_uri_naming_a_database_is_refused_pointing_at_database_url(uri):
    register()
    registry = get_service_registry()

    with pytest.raises(ValueError, match="DATABASE_URL"):
        registry.create_session_service(uri)
    with pytest.raises(ValueError, match="DATABASE_URL"):
        registry.create_memory_service(uri)


@pytest.mark.timeout(240)
def test_api_server_runs_the_weather_agent_on_postgres(weather_app, tmp_path):
    with api_server(log=tmp_path / "adk.log") as base:
        created = request(f"{base}/apps/weather/users/ada/sessions", {"session_id": "s1"})
        assert created["id"] == "s1"

        events = request(
            f"{base}/run",
            {
                "app_name": "weather",
                "user_id": "ada",
                "session_id": "s1",
                "new_message": {"role": "user", "parts": [{"text": "What's the weather in London?"}]},
            },
            timeout=STARTUP_SECONDS,
        )
        # The extra plugins write after the turn, in the background: the tool calls audited,
        # the turn queued for memory consolidation.
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline and not (_audited("s1") == {"load_memory", "get_weather"} and _jobs("s1")):
            time.sleep(0.2)
        assert _audited("s1") == {"load_memory", "get_weather"}, (tmp_path / "adk.log").read_text()
        assert _jobs("s1") == 1

    calls = [part["functionCall"] for event in events for part in event["content"]["parts"] if "functionCall" in part]
    assert {"name": "get_weather", "args": {"city": "London", "unit": "celsius"}} in [
        {"name": call["name"], "args": call["args"]} for call in calls
    ]
    assert events[-1]["content"]["parts"][-1]["text"] == "[offline model] It's 15°C and cloudy in London."

    # Stored in our PostgreSQL, the user's message first: the server used cognizes://.
    session = Session.objects.get(app_name="weather", user_id="ada", session_id="s1")
    stored = list(Event.objects.filter(session=session).order_by("version").values_list("author", "event_id"))
    assert stored[0][0] == "user"
    assert [event_id for _, event_id in stored[1:]] == [event["id"] for event in events]


def _audited(session_id: str) -> set[str]:
    return set(ToolExecution.objects.filter(session_id=session_id).values_list("tool_name", flat=True))


def _jobs(session_id: str) -> int:
    return ConsolidationJob.objects.filter(app_name="weather", user_id="ada", session_id=session_id).count()


@contextmanager
def api_server(
    *,
    log: Path,
    services_uri: str = "cognizes://",
    plugins: tuple[str, ...] = PLUGINS,
    env: dict[str, str] | None = None,
) -> Iterator[str]:
    """``adk api_server`` on the demo agents and the test database, on a free port; yields its URL."""
    port = free_port()
    env = {
        key: value
        for key, value in {**database_env(), **(env or {})}.items()
        if key not in {"GOOGLE_API_KEY", "GOOGLE_GENAI_USE_VERTEXAI"}
    }  # the offline model answers
    command = [
        str(ADK),
        "api_server",
        "--session_service_uri",
        services_uri,
        "--memory_service_uri",
        services_uri,
        # Artifacts in PostgreSQL too (ADK's default would write demo_agents/weather/.adk/ into the repo).
        "--artifact_service_uri",
        services_uri if services_uri == "cognizes://" else "memory://",
        "--no-reload",
        "--port",
        str(port),
        *[option for plugin in plugins for option in ("--extra_plugins", plugin)],
        "demo_agents",
    ]
    base = f"http://127.0.0.1:{port}"
    # Output to a file, not a pipe nobody reads while the server runs (a full pipe blocks it).
    with log.open("w") as output:
        server = subprocess.Popen(
            command, cwd=ROOT, env=env, stdin=subprocess.DEVNULL, stdout=output, stderr=subprocess.STDOUT
        )
    try:
        _wait_until_listed(base, server, log=log)
        yield base
    finally:
        server.kill()
        server.wait(timeout=30)


def _wait_until_listed(base: str, server: subprocess.Popen, *, log: Path) -> None:
    deadline = time.monotonic() + STARTUP_SECONDS
    while time.monotonic() < deadline:
        if server.poll() is not None:
            raise AssertionError(f"adk api_server exited ({server.returncode}):\n{log.read_text()}")
        try:
            with urllib.request.urlopen(f"{base}/list-apps", timeout=5) as response:
                if "weather" in json.load(response):
                    return
        except OSError:
            pass
        time.sleep(0.5)
    raise AssertionError(f"adk api_server did not list 'weather' within {STARTUP_SECONDS}s:\n{log.read_text()}")


def request(url: str, body: dict[str, Any] | None = None, *, timeout: float = 10) -> Any:
    request = urllib.request.Request(
        url,
        data=None if body is None else json.dumps(body).encode(),
        headers={"Content-Type": "application/json"},
    )
    try:
        with urllib.request.urlopen(request, timeout=timeout) as response:
            return json.load(response)
    except urllib.error.HTTPError as error:
        raise AssertionError(f"{url}: {error.code} {error.read().decode()}") from None
