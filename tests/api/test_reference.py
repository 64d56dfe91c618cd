"""The API reference a person reads at /api/docs/: sections per resource, a summary per operation, examples that work.

Before: all operations sat under one "v1" tag, without summaries; building the schema warned
(an enum named "Kind9f7Enum", three filter sets it could not read) on every page load.
"""

from __future__ import annotations

import json

import pytest
from django.conf import settings
from django.core.management import call_command

from tests.api.conftest import client_for

pytestmark = pytest.mark.django_db


@pytest.fixture(scope="module")
def schema(tmp_path_factory) -> dict:
    path = tmp_path_factory.mktemp("schema") / "schema.json"
    call_command(
        "spectacular", "--fail-on-warn", "--format", "openapi-json", "--file", str(path)
    )  # raises on a warning
    return json.loads(path.read_text())


def _operations(schema: dict) -> list[tuple[str, str, dict]]:
    return [
        (method.upper(), path, operation)
        for path, item in schema["paths"].items()
        for method, operation in item.items()
    ]


def test_every_operation_is_in_a_section_of_its_resource_in_the_docs_order(schema):
    sections = [tag["name"] for tag in settings.SPECTACULAR_SETTINGS["TAGS"]]
    assert [tag["name"] for tag in schema["tags"]] == sections
    tagged = {(method, path): operation["tags"] for method, path, operation in _operations(schema)}
    assert all(len(tags) == 1 and tags[0] in sections for tags in tagged.values()), tagged
    prefix = "/api/v1/apps/{app_name}/users/{user_id}/"
    assert tagged[("POST", prefix + "memories/search/")] == ["Memories"]
    assert tagged[("PATCH", prefix + "state/")] == ["State"]
    assert tagged[("POST", prefix + "sessions/{session_id}/run/stream/")] == ["Agent runs"]
    assert tagged[("GET", prefix + "sessions/{session_id}/events/stream/")] == ["Events"]
    assert tagged[("DELETE", prefix)] == ["Users"]
    assert tagged[("GET", "/api/v1/apps/{app_name}/tool-approvals/")] == ["Tools"]
    assert tagged[("PUT", "/api/v1/apps/{app_name}/secrets/{name}/")] == ["Tools"]  # an app's tools' secrets
    page = (settings.BASE_DIR / "docs" / "api" / "http.md").read_text()  # the HTTP API's page of the docs
    positions = [page.find(f"**{name}**") for name in sections]
    assert -1 not in positions and positions == sorted(positions), "docs/api/http.md lists the sections in this order"


def test_every_operation_has_a_summary_of_its_own_and_a_name(schema):
    summaries = {(method, path): operation.get("summary", "") for method, path, operation in _operations(schema)}
    assert all(summaries.values()), [key for key, summary in summaries.items() if not summary]
    assert len(set(summaries.values())) == len(summaries), "each says what it does, not its view's class"
    assert not any("``" in summary for summary in summaries.values())  # plain text, as Swagger UI shows it
    ids = [operation["operationId"] for _, _, operation in _operations(schema)]
    assert [i for i in ids if i.startswith("v1_")] == []  # named, not derived from the path


def test_the_examples_of_the_main_operations_are_accepted_as_written(schema):
    by_id = {operation["operationId"]: (path, operation) for _, path, operation in _operations(schema)}
    api = client_for("shop")
    for name in ("create_session", "append_event", "create_memory", "search_memories"):
        path, operation = by_id[name]
        examples = operation["requestBody"]["content"]["application/json"]["examples"]
        assert examples, name
        url = path.format(app_name="shop", user_id="alice", session_id="trip-planning")
        for example in examples.values():
            answer = api.post(url, example["value"], format="json")
            assert answer.status_code in (200, 201), (name, answer.json())
    assert "examples" in by_id["run_agent"][1]["requestBody"]["content"]["application/json"]


def test_a_body_of_a_media_type_the_api_does_not_read_is_a_documented_415(schema):
    """A client that sends its body as something other than JSON (here a Content-Type like ``.8``, which a fuzzer
    sent) gets 415 naming the type, and every operation that reads a body says so, as it does for 413."""
    operations = [(method, path, op) for method, path, op in _operations(schema) if "requestBody" in op]
    assert operations and [(m, p) for m, p, op in operations if "415" not in op["responses"]] == []
    answer = client_for("shop").generic(
        "PATCH", "/api/v1/apps/shop/users/bob/state/", '{"state": {}}', content_type=".8"
    )
    assert answer.status_code == 415 and answer.json()["error"]["code"] == "unsupported_media_type"
