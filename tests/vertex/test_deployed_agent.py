"""Cognizes' agents deployed as Vertex AI Agent Engine serves them: Google's agentplatform SDK
(``client.runtimes.get`` → the methods it builds from ``spec.classMethods``) against a live server
running the weather demo agent (offline model), with a real Celery worker for memory."""

from __future__ import annotations

import asyncio
import json

import agentplatform
import httpx
import pytest
from google.adk.cli.cli_deploy import _AGENT_ENGINE_CLASS_METHODS
from google.auth.credentials import Credentials as _Credentials
from google.genai.errors import APIError, ClientError
from opentelemetry import trace

from cognizes.access.services import do_create_api_key
from demo_agents.weather.tools import register
from memory_app.models import ConsolidationJob, JobStatus
from runtime_app.agents import forget_runners
from sessions_app.models import Event, Session
from tests.polling import wait_for
from tests.vertex.conftest import APP
from tools_app.models import ToolExecution
from vertex_app.services import do_get_or_create_engine

pytestmark = pytest.mark.django_db(transaction=True)

WEATHER = "weather"
ADK_METHODS = [method["name"] for method in _AGENT_ENGINE_CLASS_METHODS]


class Credentials(_Credentials):
    """A Cognizes API key as the bearer token of project mode."""

    def __init__(self, token: str) -> None:
        super().__init__()
        self.token = token

    def refresh(self, request) -> None:
        pass


@pytest.fixture
def weather(asgi_server):
    """The weather app served by the live server: (base URL, engine id, a read-write key of the app)."""
    register()
    forget_runners()
    engine = do_get_or_create_engine(app_name=WEATHER)
    _, key = do_create_api_key(name="deployed", app_name=WEATHER)
    yield asgi_server + "/", engine.engine_id, key
    forget_runners()


def express(base_url: str, key: str):
    return agentplatform.Client(api_key=key, http_options={"base_url": base_url})


def project(base_url: str, key: str):
    return agentplatform.Client(
        project="my-project", location="us-central1", credentials=Credentials(key), http_options={"base_url": base_url}
    )


def texts(events: list[dict]) -> list[str]:
    return [p["text"] for e in events for p in (e.get("content") or {}).get("parts", []) if p.get("text")]


def calls(events: list[dict]) -> list[tuple[str, dict]]:
    parts = [p for e in events for p in (e.get("content") or {}).get("parts", [])]
    return [(p["function_call"]["name"], p["function_call"]["args"]) for p in parts if p.get("function_call")]


def test_a_two_turn_conversation_through_stream_query_remembers_the_first_turn(weather, celery_worker):
    base_url, engine_id, key = weather
    remote = express(base_url, key).runtimes.get(name=f"reasoningEngines/{engine_id}")

    resource = remote.api_resource
    assert [m["name"] for m in resource.spec.class_methods] == ADK_METHODS
    assert resource.spec.agent_framework == "google-adk"
    assert resource.display_name == "weather_assistant" and "weather" in resource.description
    session = remote.create_session(user_id="ada")
    assert (session["app_name"], session["user_id"], session["events"]) == (WEATHER, "ada", [])

    told = list(remote.stream_query(user_id="ada", session_id=session["id"], message="I prefer Fahrenheit."))
    assert texts(told) == ["[offline model] Got it: from now on I'll give temperatures in Fahrenheit."]
    assert told[-1]["author"] == "weather_assistant" and told[-1]["invocation_id"]  # ADK's own dump, snake_case
    wait_for(
        lambda: ConsolidationJob.objects.filter(session_id=session["id"], status=JobStatus.DONE).exists(),
        60,
        "the worker consolidating the first turn",
    )

    asked = list(remote.stream_query(user_id="ada", message="What's the weather in Paris?"))  # a new session
    assert [name for name, _ in calls(asked)] == ["load_memory", "get_weather"]
    assert calls(asked)[1][1] == {"city": "Paris", "unit": "fahrenheit"}
    assert texts(asked)[-1] == "[offline model] It's 64°F and clear in Paris."

    # The first session, as the native API and Vertex's Sessions API show it; the second one's tool call audited.
    headers = {"Authorization": f"Bearer {key}"}
    native = httpx.get(f"{base_url}api/v1/apps/weather/users/ada/sessions/{session['id']}/events/", headers=headers)
    assert [e["event"]["author"] for e in native.json()["results"]] == ["user", "weather_assistant"]
    vertex = httpx.get(f"{base_url}v1beta1/reasoningEngines/{engine_id}/sessions/{session['id']}", headers=headers)
    assert vertex.json()["userId"] == "ada"
    assert len(remote.list_sessions(user_id="ada")["sessions"]) == 2
    second = Session.objects.exclude(session_id=session["id"]).get(user_id="ada")
    wait_for(
        lambda: ToolExecution.objects.filter(session_id=second.session_id, tool_name="get_weather").exists(),
        30,
        "the audit row of get_weather",
    )
    trace.get_tracer_provider().force_flush()
    traced = httpx.get(
        f"{base_url}api/v1/apps/weather/users/ada/sessions/{second.session_id}/traces/", headers=headers
    ).json()
    assert traced["results"], "the turn's trace"


def test_every_class_method_adk_lists_answers_in_the_shapes_the_sdk_reads(weather):
    base_url, engine_id, key = weather
    remote = project(base_url, key).runtimes.get(
        name=f"projects/my-project/locations/us-central1/reasoningEngines/{engine_id}"
    )
    assert remote.api_resource.name.startswith("projects/my-project/")
    assert all(callable(getattr(remote, name)) for name in ADK_METHODS)

    # Sessions, sync and async.
    made = remote.create_session(user_id="ada", session_id="chat-1", state={"topic": "rain"})
    assert (made["id"], made["state"]) == ("chat-1", {"topic": "rain"})
    again = asyncio.run(remote.async_create_session(user_id="ada"))
    assert remote.get_session(user_id="ada", session_id="chat-1")["state"] == {"topic": "rain"}
    assert asyncio.run(remote.async_get_session(user_id="ada", session_id=again["id"]))["id"] == again["id"]
    listed = asyncio.run(remote.async_list_sessions(user_id="ada"))["sessions"]
    assert sorted(s["id"] for s in listed) == sorted(["chat-1", again["id"]])
    assert asyncio.run(remote.async_delete_session(user_id="ada", session_id=again["id"])) is None
    assert remote.delete_session(user_id="ada", session_id="chat-1") is None
    assert remote.list_sessions(user_id="ada") == {"sessions": []}
    with pytest.raises(ClientError) as gone:
        remote.get_session(user_id="ada", session_id="chat-1")
    assert gone.value.code == 404 and "chat-1" in gone.value.message

    # A streamed turn, then memory.
    session = remote.create_session(user_id="ada")
    events = asyncio.run(
        _collect(
            remote.async_stream_query(
                user_id="ada", session_id=session["id"], message={"role": "user", "parts": [{"text": "Celsius please"}]}
            )
        )
    )
    assert "Celsius" in texts(events)[-1]
    assert (
        asyncio.run(
            remote.async_add_session_to_memory(session=remote.get_session(user_id="ada", session_id=session["id"]))
        )
        is None
    )
    assert ConsolidationJob.objects.filter(session_id=session["id"]).exists()
    assert asyncio.run(remote.async_search_memory(user_id="ada", query="unit")) == {"memories": []}  # not yet run

    # Artifacts.
    assert (
        asyncio.run(
            remote.async_save_artifact(
                user_id="ada", filename="notes.txt", artifact="pack a coat", session_id=session["id"]
            )
        )
        == 0
    )
    ask = {"user_id": "ada", "filename": "notes.txt", "session_id": session["id"]}
    assert asyncio.run(remote.async_load_artifact(**ask))["text"] == "pack a coat"  # a Part, as AdkApp dumps one
    assert asyncio.run(remote.async_list_artifact_keys(user_id="ada", session_id=session["id"])) == ["notes.txt"]
    assert asyncio.run(remote.async_list_versions(**ask)) == [0]
    (version,) = asyncio.run(remote.async_list_artifact_versions(**ask))
    assert version["version"] == 0 and version["mime_type"] == "text/plain"
    assert asyncio.run(remote.async_get_artifact_version(**ask, version=0))["version"] == 0
    assert asyncio.run(remote.async_delete_artifact(**ask)) is None
    assert asyncio.run(remote.async_load_artifact(**ask)) is None

    # Streams on a session made for the call and deleted after it: session_events, and AgentSpace's envelope.
    before = Session.objects.count()
    replayed = asyncio.run(
        _collect(
            remote.async_stream_query(
                user_id="ada",
                message="Fahrenheit",
                session_events=[{"author": "user", "content": {"role": "user", "parts": [{"text": "hello"}]}}],
            )
        )
    )
    assert "Fahrenheit" in texts(replayed)[-1]
    request = {
        "userId": "ada",
        "message": {"role": "user", "parts": [{"text": "Celsius"}]},
        "authorizations": {"calendar": {"access_token": "secret-token"}},
    }
    enveloped = asyncio.run(_collect(remote.streaming_agent_run_with_events(request_json=json.dumps(request))))
    assert [sorted(item) for item in enveloped] == [["artifacts", "events", "session_id"]]
    assert "Celsius" in texts(enveloped[0]["events"])[-1]
    assert Session.objects.count() == before
    assert not Event.objects.filter(data__icontains="secret-token").exists()  # temp: state, never stored


def test_python_aiplatforms_agent_engines_client_builds_the_same_methods(weather):
    import vertexai

    base_url, engine_id, key = weather
    client = vertexai.Client(
        project="my-project", location="us-central1", credentials=Credentials(key), http_options={"base_url": base_url}
    )
    remote = client.agent_engines.get(name=f"projects/my-project/locations/us-central1/reasoningEngines/{engine_id}")
    session = remote.create_session(user_id="ada")
    events = list(remote.stream_query(user_id="ada", session_id=session["id"], message="Fahrenheit, always."))
    assert "Fahrenheit" in texts(events)[-1]
    assert [s["id"] for s in remote.list_sessions(user_id="ada")["sessions"]] == [session["id"]]


def test_a_busy_session_is_a_409_and_a_turn_whose_client_leaves_runs_to_its_end(asgi_server, settings):
    from tests.runtime.test_http import GATE

    settings.COGNIZES_AGENTS = {"slow": "tests.runtime.test_http.slow_runner"}
    forget_runners()
    GATE.clear()
    path = f"v1beta1/reasoningEngines/{do_get_or_create_engine(app_name='slow').engine_id}"
    engine = f"{asgi_server}/{path}"
    key = do_create_api_key(name="slow", app_name="slow")[1]
    made = _post(
        asgi_server + "/",
        f"{path}:query",
        {"classMethod": "create_session", "input": {"user_id": "ada", "session_id": "s1"}},
        key,
    )
    assert made.status_code == 200, made.text
    turn = {"classMethod": "stream_query", "input": {"user_id": "ada", "session_id": "s1", "message": "one"}}
    with httpx.stream(
        "POST", f"{engine}:streamQuery?alt=sse", json=turn, headers={"x-goog-api-key": key}, timeout=60
    ) as response:
        assert response.status_code == 200
        wait_for(lambda: Event.objects.filter(session__session_id="s1").exists(), 30, "the turn starting")
    # The client has left mid-turn: the turn goes on, and holds the session until it ends.
    busy = httpx.post(f"{engine}:streamQuery?alt=sse", json=turn, headers={"x-goog-api-key": key}, timeout=60)
    assert busy.status_code == 409 and busy.json()["error"]["status"] == "ABORTED"
    GATE.set()
    wait_for(lambda: Event.objects.filter(session__session_id="s1").count() == 2, 30, "the turn's answer stored")
    again = httpx.post(f"{engine}:streamQuery?alt=sse", json=turn, headers={"x-goog-api-key": key}, timeout=60)
    assert again.status_code == 200 and "slow answer" in again.text
    forget_runners()


async def _collect(stream) -> list[dict]:
    return [item async for item in stream]


def _post(base_url: str, path: str, body, key: str, **kwargs) -> httpx.Response:
    return httpx.post(base_url + path, json=body, headers={"x-goog-api-key": key}, timeout=60, **kwargs)


HOSTILE = [
    ({"classMethod": "run_shell", "input": {}}, 400, "Unknown class method 'run_shell'"),
    ({"input": {"user_id": "ada"}}, 400, "classMethod is required"),
    ({"classMethod": "create_session", "class_method": "get_session", "input": {"user_id": "ada"}}, 400, "twice"),
    ({"classMethod": "create_session", "input": {"user_id": 7}}, 400, "user_id must be a string"),
    ({"classMethod": "create_session", "input": "ada"}, 400, "input must be a JSON object"),
    ({"classMethod": "create_session", "input": {"user_id": "ada", "shell": "rm"}}, 400, "no parameter 'shell'"),
    ({"classMethod": "create_session", "input": {"user_id": "a\x00b"}}, 400, "NUL"),
    ({"classMethod": "get_session", "input": {"user_id": "ada", "session_id": "s\x00"}}, 400, "NUL"),
    ({"classMethod": "async_search_memory", "input": {"user_id": "ada", "query": "\x00"}}, 400, "NUL"),
    ({"classMethod": "create_session", "input": {"user_id": "ada", "state": {"k\x00": 1}}}, 400, "NUL"),
    ({"classMethod": "create_session", "input": {"user_id": "ada", "ttl": "60s"}}, 400, "ttl and expire_time"),
    ({"classMethod": "get_session", "input": {"user_id": "ada"}}, 400, "session_id is required"),
    ({"classMethod": "stream_query", "input": {"user_id": "ada", "message": "hi"}}, 400, "call it with :streamQuery"),
    (
        {"classMethod": "async_save_artifact", "input": {"user_id": "ada", "filename": "x", "artifact": 3}},
        400,
        "artifact must be an object or string",
    ),
    ({"class_method": "get_session", "input": {"user_id": "ada", "session_id": "bobs"}}, 404, "no"),
]
HOSTILE_STREAMS = [
    ({"classMethod": "get_session", "input": {"user_id": "ada", "session_id": "x"}}, 400, "call it with :query"),
    ({"classMethod": "stream_query", "input": {"user_id": "ada", "message": "  "}}, 400, "The message is empty"),
    ({"classMethod": "stream_query", "input": {"user_id": "ada", "message": ["hi"]}}, 400, "message must be"),
    (
        {
            "classMethod": "stream_query",
            "input": {"user_id": "ada", "message": {"role": "model", "parts": [{"text": "x"}]}},
        },
        400,
        "role 'user'",
    ),
    (
        {"classMethod": "stream_query", "input": {"user_id": "ada", "message": "hi", "session_id": "bobs"}},
        404,
        "user 'ada' has no session 'bobs'",
    ),
    ({"classMethod": "stream_query", "input": {"user_id": "ada", "message": "x" * (10 * 1024 * 1024)}}, 413, ""),
    (
        {
            "classMethod": "stream_query",
            "input": {"user_id": "ada", "message": "hi", "run_config": {"max_llm_calls": "x"}},
        },
        400,
        "run_config",
    ),
    ({"classMethod": "streaming_agent_run_with_events", "input": {"request_json": "{not json"}}, 400, "not JSON"),
    (
        {
            "classMethod": "streaming_agent_run_with_events",
            "input": {
                "request_json": json.dumps(
                    {"user_id": "ada", "message": {"role": "user", "parts": [{"text": "hi\x00"}]}}
                )
            },
        },
        400,
        "NUL",
    ),
    (
        {
            "classMethod": "streaming_agent_run_with_events",
            "input": {
                "request_json": json.dumps(
                    {
                        "user_id": "ada",
                        "message": {"role": "user", "parts": [{"text": "hi"}]},
                        "artifacts": [{"file_name": "a"}],
                    }
                )
            },
        },
        400,
        "artifacts are not taken",
    ),
]


def test_hostile_input_is_a_4xx_in_googles_shape_and_nothing_is_stored(weather):
    base_url, engine_id, key = weather
    httpx.post(
        f"{base_url}api/v1/apps/weather/users/bob/sessions/",
        json={"id": "bobs"},
        headers={"Authorization": f"Bearer {key}"},
    ).raise_for_status()
    engine = f"v1beta1/reasoningEngines/{engine_id}"
    answers = [(_post(base_url, f"{engine}:query", body, key), status, text) for body, status, text in HOSTILE]
    answers += [
        (_post(base_url, f"{engine}:streamQuery", body, key, params={"alt": "sse"}), status, text)
        for body, status, text in HOSTILE_STREAMS
    ]

    for answer, status, text in answers:
        error = answer.json()["error"]
        assert (answer.status_code, error["code"]) == (status, status), (answer.request.content[:200], error)
        assert text in error["message"] and error["status"], error
    assert list(Session.objects.values_list("user_id", "session_id")) == [("bob", "bobs")]
    assert Event.objects.count() == 0


def test_keys_act_only_as_their_user_read_only_keys_do_not_run_and_other_apps_see_nothing(weather):
    base_url, engine_id, _key = weather
    engine = f"v1beta1/reasoningEngines/{engine_id}"
    ada = do_create_api_key(name="ada", app_name=WEATHER, user_id="ada")[1]
    reader = do_create_api_key(name="reader", app_name=WEATHER, read_only=True)[1]
    other = do_create_api_key(name="shop", app_name=APP)[1]
    run = {"classMethod": "stream_query", "input": {"user_id": "ada", "message": "Celsius"}}

    as_bob = _post(base_url, f"{engine}:query", {"classMethod": "create_session", "input": {"user_id": "bob"}}, ada)
    own = _post(base_url, f"{engine}:query", {"classMethod": "create_session", "input": {"user_id": "ada"}}, ada)
    read = _post(base_url, f"{engine}:query", {"classMethod": "list_sessions", "input": {"user_id": "ada"}}, reader)
    not_run = _post(base_url, f"{engine}:streamQuery?alt=sse", run, reader)
    not_made = _post(base_url, f"{engine}:query", {"classMethod": "create_session", "input": {"user_id": "x"}}, reader)
    elsewhere = _post(base_url, f"{engine}:query", {"classMethod": "list_sessions", "input": {"user_id": "ada"}}, other)

    assert (as_bob.status_code, own.status_code, read.status_code) == (404, 200, 200)
    assert own.json()["output"]["user_id"] == "ada" and len(read.json()["output"]["sessions"]) == 1
    assert (not_run.status_code, not_made.status_code, elsewhere.status_code) == (403, 403, 404)
    assert elsewhere.json()["error"]["status"] == "NOT_FOUND"

    with pytest.raises(ClientError) as refused:
        express(base_url, ada).runtimes.get(name=f"reasoningEngines/{engine_id}").create_session(user_id="bob")
    assert refused.value.code == 404


def test_an_engine_without_an_agent_stays_bare_and_a_failing_agent_is_an_error_in_the_stream(weather, settings):
    base_url, _engine_id, _key = weather
    shop = do_get_or_create_engine(app_name=APP).engine_id
    shop_key = do_create_api_key(name="shop", app_name=APP)[1]
    bare = httpx.get(f"{base_url}v1beta1/reasoningEngines/{shop}", headers={"x-goog-api-key": shop_key}).json()
    assert "spec" not in bare and bare["displayName"] == APP
    refused = _post(
        base_url,
        f"v1beta1/reasoningEngines/{shop}:query",
        {"classMethod": "list_sessions", "input": {"user_id": "ada"}},
        shop_key,
    )
    assert refused.status_code == 400 and "hosts no agent" in refused.json()["error"]["message"]

    settings.COGNIZES_AGENTS = {**settings.COGNIZES_AGENTS, "broken": "tests.runtime.test_http.broken_runner"}
    broken = do_get_or_create_engine(app_name="broken").engine_id
    remote = express(base_url, do_create_api_key(name="b", app_name="broken")[1]).runtimes.get(
        name=f"reasoningEngines/{broken}"
    )
    with pytest.raises(APIError) as failed:
        list(remote.stream_query(user_id="ada", message="hello"))
    assert failed.value.code == 500 and "the model service is unreachable" in str(failed.value)
    assert remote.list_sessions(user_id="ada")["sessions"][0]["user_id"] == "ada"  # the session, freed
