"""``adk api_server`` with ``cognizes+vertex://``: the demo agent on ADK's Vertex clients, against Cognizes."""

from __future__ import annotations

import pytest
from google.adk.cli.service_registry import get_service_registry

from cognizes.access.services import do_create_api_key
from cognizes.vertex import VertexAiMemoryBankService, VertexAiSessionService, register
from sessions_app.models import Event, Session
from tests.runtime.test_adk_cli import api_server, request
from vertex_app.services import do_get_or_create_engine

pytestmark = pytest.mark.django_db(transaction=True)


def test_the_uri_builds_adks_vertex_services_on_the_named_server(monkeypatch):
    monkeypatch.setenv("COGNIZES_API_KEY", "cgz_0_x")
    register()
    registry = get_service_registry()

    sessions = registry.create_session_service("cognizes+vertex://127.0.0.1:8000/123", agents_dir="demo_agents")
    memory = registry.create_memory_service("cognizes+vertex+https://memory.example:443/123")

    assert isinstance(sessions, VertexAiSessionService) and isinstance(memory, VertexAiMemoryBankService)
    assert sessions._endpoint.base_url == "http://127.0.0.1:8000/" and sessions._agent_engine_id == "123"
    assert memory._endpoint.base_url == "https://memory.example:443/"


@pytest.mark.parametrize(
    "uri", ["cognizes+vertex://127.0.0.1:8000", "cognizes+vertex://127.0.0.1:8000/abc", "cognizes+vertex:///123"]
)
def test_a_uri_without_host_or_numeric_engine_is_refused(monkeypatch, uri):
    monkeypatch.setenv("COGNIZES_API_KEY", "cgz_0_x")
    register()
    with pytest.raises(ValueError, match="ENGINE_ID"):
        get_service_registry().create_session_service(uri)


def test_a_missing_key_is_refused_with_what_to_set(monkeypatch):
    monkeypatch.delenv("COGNIZES_API_KEY", raising=False)
    register()
    with pytest.raises(ValueError, match="COGNIZES_API_KEY"):
        get_service_registry().create_session_service("cognizes+vertex://127.0.0.1:8000/123")


@pytest.mark.timeout(240)
def test_api_server_runs_the_weather_agent_through_the_vertex_surface(weather_app, asgi_server, tmp_path):
    engine = do_get_or_create_engine(app_name="weather")
    _, key = do_create_api_key(name="adk", app_name="weather")
    uri = f"cognizes+vertex://{asgi_server.removeprefix('http://')}/{engine.engine_id}"

    with api_server(
        log=tmp_path / "adk.log", services_uri=uri, plugins=("cognizes.adk.AuditPlugin",), env={"COGNIZES_API_KEY": key}
    ) as base:
        created = request(f"{base}/apps/weather/users/ada/sessions", {"session_id": "s1"})
        events = request(
            f"{base}/run",
            {
                "app_name": "weather",
                "user_id": "ada",
                "session_id": created["id"],
                "new_message": {"role": "user", "parts": [{"text": "What's the weather in London?"}]},
            },
            timeout=60,
        )

    assert events[-1]["content"]["parts"][-1]["text"] == "[offline model] It's 15°C and cloudy in London."
    # Stored through the Vertex surface in Cognizes' own rows, the user's message first.
    session = Session.objects.get(app_name="weather", user_id="ada", session_id="s1")
    stored = list(Event.objects.filter(session=session).order_by("version").values_list("author", "event_id"))
    assert stored[0][0] == "user"
    assert [event_id for _, event_id in stored[1:]] == [event["id"] for event in events]
