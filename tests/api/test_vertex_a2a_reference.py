"""The Vertex AI and A2A surfaces have references of their own, /api/docs/vertex/ and /api/docs/a2a/, read off the
code that serves them: the Vertex URL patterns and views, the gRPC rules' protobuf messages, a2a-sdk's methods.

Before: /api/docs/ documented only /api/v1/ (the Vertex views opt out of drf-spectacular's schema, and A2A is an
ASGI application, not a Django view), so a Vertex or A2A client had nothing to read but the README.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any
from urllib.parse import urlsplit

import pytest

# First, before the 0.3 adapter, which a2a-sdk imports from it: the adapter imported first is a circle that fails.
from a2a.server.routes.jsonrpc_dispatcher import JsonRpcDispatcher

# isort: split
from a2a.compat.v0_3.jsonrpc_adapter import JSONRPC03Adapter
from django.conf import settings
from django.test import Client
from django.urls import resolve

from vertex_app import urls as vertex_urls
from vertex_app.transcoding import RULES

try:
    from openapi_spec_validator import validate as validate_openapi
except ImportError:  # not installed here: drf-spectacular's own check against the OpenAPI 3.0 JSON Schema
    from drf_spectacular.validation import validate_schema as validate_openapi

pytestmark = pytest.mark.django_db

PROJECT_FORM = "/v1beta1/projects/{project}/locations/{location}/"
REGISTRY_FORM = "/v1/projects/{project}/locations/{location}/"
SKILL_REGISTRY_FORM = "/v1alpha/projects/{project}/locations/{location}/"  # ADK's GCPSkillRegistry (issue 47)
"""The Agent Registry's paths: v1 and project mode only, as its clients send them."""
METHODS = ("get", "put", "post", "patch", "delete")


@pytest.fixture
def vertex() -> dict[str, Any]:
    answer = Client().get("/api/schema/vertex/")
    assert answer.status_code == 200 and answer["Content-Type"].startswith("application/json")
    return answer.json()


@pytest.fixture
def a2a() -> dict[str, Any]:
    answer = Client().get("/api/schema/a2a/")
    assert answer.status_code == 200 and answer["Content-Type"].startswith("application/json")
    return answer.json()


def _operations(document: dict[str, Any]) -> Iterator[tuple[str, str, dict[str, Any]]]:
    for path, item in document["paths"].items():
        for method in METHODS:
            if method in item:
                yield method, path, item[method]


def _refs(node: Any) -> Iterator[str]:
    if isinstance(node, dict):
        for key, value in node.items():
            if key == "$ref":
                yield value
            else:
                yield from _refs(value)
    elif isinstance(node, list):
        for value in node:
            yield from _refs(value)


def _resolve(document: dict[str, Any], schema: dict[str, Any]) -> dict[str, Any]:
    while "$ref" in schema:
        schema = document["components"]["schemas"][schema["$ref"].removeprefix("#/components/schemas/")]
    return schema


def _filled(path: str) -> str:
    """The documented path with a value in each parameter, as a client would send it."""
    return re.sub(r"\{(\w+)\}", lambda m: "123" if m[1] == "engine_id" else f"some-{m[1]}", path)


def test_every_vertex_route_is_documented_in_project_form_with_each_method_its_view_serves(vertex):
    routes = [p for p in vertex_urls.urlpatterns if hasattr(p.callback, "view_class")]
    documented = dict(vertex["paths"])
    assert all(
        path.removeprefix("/upload").startswith((PROJECT_FORM.rstrip("/"), REGISTRY_FORM, SKILL_REGISTRY_FORM))
        for path in documented
    ), list(documented)
    for route in routes:
        served = [path for path in documented if route.pattern.regex.match(_filled(path).lstrip("/"))]
        assert len(served) == 1, (route.pattern, served)
        view = route.callback.view_class
        assert resolve(_filled(served[0])).func.view_class is view
        implemented = [m for m in METHODS if hasattr(view, m)]
        assert [m for m in METHODS if m in documented[served[0]]] == implemented, view
    assert len(documented) == len(routes)  # the catch-all 404 is no operation
    assert "/v1beta1/reasoningEngines/{engine_id}/" in vertex["info"]["description"]  # the express form
    assert "`/v1/`" in vertex["info"]["description"]
    assert {REGISTRY_FORM + "agents", REGISTRY_FORM + "mcpServers/{server_id}"} <= set(documented)
    assert "Agent Registry" in vertex["info"]["description"]
    append = documented[PROJECT_FORM + "reasoningEngines/{engine_id}/sessions/{session_id}:appendEvent"]
    assert [p["name"] for p in append["post"]["parameters"] if p["in"] == "path"] == [
        "project",
        "location",
        "engine_id",
        "session_id",
    ]


def test_every_grpc_method_is_an_operation_named_for_it_with_its_messages_schemas(vertex):
    by_id = {operation["operationId"]: (method, path, operation) for method, path, operation in _operations(vertex)}
    for service, rules in RULES.items():
        for name, rule in rules.items():
            method, path, operation = by_id[name]
            assert method == rule.verb.lower() and path.endswith(rule.path[rule.path.index("}") + 1 :]), name
            assert "application/json" in operation["responses"]["200"]["content"], name
            assert ("requestBody" in operation) == (rule.body is not None), name
            assert f"{service}/{name}" in operation["description"]  # also served over gRPC, as this method
    schemas = vertex["components"]["schemas"]
    refs = set(_refs(vertex))
    assert refs and all(ref.removeprefix("#/components/schemas/") in schemas for ref in refs), refs - set(schemas)
    # The messages as proto3 JSON writes them: camelCase names, well-known types as their JSON forms.
    create = by_id["CreateSession"][2]
    session = _resolve(vertex, create["requestBody"]["content"]["application/json"]["schema"])
    assert {"userId", "sessionState", "createTime", "ttl"} <= set(session["properties"])
    assert session["properties"]["createTime"] == {"type": "string", "format": "date-time"}
    assert session["properties"]["sessionState"]["type"] == "object"
    assert session["properties"]["ttl"]["example"] == "3.5s"
    assert session["properties"]["labels"]["additionalProperties"] == {"type": "string"}
    assert "sessionId" in [p["name"] for p in create["parameters"] if p["in"] == "query"]
    operation = _resolve(vertex, create["responses"]["200"]["content"]["application/json"]["schema"])
    assert operation["properties"]["response"]["properties"]["@type"] == {"type": "string"}
    listed = _resolve(vertex, by_id["ListEvents"][2]["responses"]["200"]["content"]["application/json"]["schema"])
    assert listed["properties"]["sessionEvents"]["type"] == "array"
    assert {"pageSize", "pageToken", "filter"} <= {p["name"] for p in by_id["ListEvents"][2]["parameters"]}


def test_the_vertex_reference_names_its_keys_and_googles_errors(vertex):
    schemes = vertex["components"]["securitySchemes"]
    assert {"name": "x-goog-api-key", "in": "header", "type": "apiKey"}.items() <= next(
        s for s in schemes.values() if s.get("name") == "x-goog-api-key"
    ).items()
    assert any(s.get("scheme") == "bearer" for s in schemes.values())
    assert {name for requirement in vertex["security"] for name in requirement} == set(schemes)
    error = vertex["paths"][PROJECT_FORM + "reasoningEngines/{engine_id}/sessions/{session_id}"]["get"]["responses"]
    assert _resolve(vertex, error["default"]["content"]["application/json"]["schema"])["example"]["error"]["status"]


@pytest.mark.parametrize("name", ["vertex", "a2a"])
def test_each_operation_says_what_it_does_in_a_summary_of_its_own(name, request):
    document = request.getfixturevalue(name)
    summaries = [operation.get("summary", "") for _, _, operation in _operations(document)]
    assert summaries and all(summaries), summaries
    assert len(set(summaries)) == len(summaries), sorted(summaries)
    assert not any("``" in summary for summary in summaries)  # plain text, as Swagger UI shows it
    ids = [operation["operationId"] for _, _, operation in _operations(document)]
    assert len(set(ids)) == len(ids), sorted(ids)


@pytest.mark.parametrize("name", ["vertex", "a2a"])
def test_both_references_are_valid_openapi_documents(name, request):
    document = request.getfixturevalue(name)
    assert document["openapi"].startswith("3.0")
    validate_openapi(document)


def test_the_a2a_reference_lists_the_methods_of_both_protocol_versions(a2a):
    card = a2a["paths"]["/a2a/{app_name}/.well-known/agent-card.json"]["get"]
    card_schema = _resolve(a2a, card["responses"]["200"]["content"]["application/json"]["schema"])
    assert {"name", "skills", "supportedInterfaces", "securitySchemes"} <= set(card_schema["properties"])
    rpc = a2a["paths"]["/a2a/{app_name}/"]["post"]
    body = rpc["requestBody"]["content"]["application/json"]
    call = _resolve(a2a, body["schema"])
    methods = call["properties"]["method"]["enum"]
    assert {"message/send", "SendMessage", "tasks/get", "GetTask"} <= set(methods)
    assert set(methods) == set(JsonRpcDispatcher.METHOD_TO_MODEL) | set(JSONRPC03Adapter.METHOD_TO_MODEL)
    assert {example["value"]["method"] for example in body["examples"].values()} >= {
        "message/send",
        "SendMessage",
        "tasks/get",
        "GetTask",
    }
    headers = {p["name"]: p for p in rpc["parameters"] if p["in"] == "header"}
    assert {"X-User-Id", "A2A-Version"} <= set(headers)
    assert {"0.3", "1.0"} <= set(headers["A2A-Version"]["schema"]["enum"])
    assert any(s.get("scheme") == "bearer" for s in a2a["components"]["securitySchemes"].values())
    assert "session" in a2a["info"]["description"] and "context" in a2a["info"]["description"]
    refs = set(_refs(a2a))
    assert all(ref.removeprefix("#/components/schemas/") in a2a["components"]["schemas"] for ref in refs)


def test_the_three_references_link_to_each_other(vertex, a2a):
    pages = {"native": "/api/docs/", "vertex": "/api/docs/vertex/", "a2a": "/api/docs/a2a/"}
    descriptions = {
        "native": settings.SPECTACULAR_SETTINGS["DESCRIPTION"],
        "vertex": vertex["info"]["description"],
        "a2a": a2a["info"]["description"],
    }
    for name, description in descriptions.items():
        linked = set(re.findall(r"\]\((/api/docs/[\w/]*)\)", description))
        assert linked == {page for other, page in pages.items() if other != name}, (name, linked)


@pytest.mark.parametrize(
    ("page", "schema"), [("/api/docs/vertex/", "/api/schema/vertex/"), ("/api/docs/a2a/", "/api/schema/a2a/")]
)
def test_the_docs_pages_load_only_files_served_here(page, schema):
    answer = Client().get(page)

    assert answer.status_code == 200
    html = answer.content.decode()
    assets = re.findall(r'(?:src|href)="([^"]+)"', html)
    assert assets and all(urlsplit(url).path.startswith("/static/") and not urlsplit(url).netloc for url in assets)
    assert f'"{schema}"' in html


@pytest.mark.django_db(transaction=True)
def test_swagger_ui_shows_the_vertex_operations(browser, live_server):
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.ui import WebDriverWait

    browser.get(f"{live_server.url}/api/docs/vertex/")
    WebDriverWait(browser, 30).until(lambda b: len(b.find_elements(By.CSS_SELECTOR, ".opblock")) >= 20)

    paths = [e.text.replace("\u200b", "") for e in browser.find_elements(By.CSS_SELECTOR, ".opblock-summary-path")]
    assert PROJECT_FORM + "reasoningEngines/{engine_id}/sessions/{session_id}:appendEvent" in paths
    loaded = browser.execute_script("return performance.getEntriesByType('resource').map(e => e.name)")
    assert {urlsplit(url).netloc for url in [browser.current_url, *loaded]} == {urlsplit(live_server.url).netloc}
