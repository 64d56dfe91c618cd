"""The registry's rules: import reports, validation, versions, the allow-list, the change marker."""

from __future__ import annotations

import io
import json

import pytest
from django.core.management import CommandError, call_command

from tests.tools.conftest import weather_document
from tools_app import services
from tools_app.models import Tool, ToolExecution
from tools_app.openapi import InvalidOpenApi

pytestmark = pytest.mark.django_db

APP = "travel_app"
URL = "https://weather.example"


def test_an_import_creates_one_tool_per_operation_and_reports_it():
    report = services.do_import_openapi(app_name=APP, document=weather_document(URL))

    assert sorted(report.created) == ["get_broken", "get_weather", "make_transfer"]
    weather = Tool.objects.get(app_name=APP, name="get_weather")
    assert (weather.kind, weather.version, weather.enabled, weather.description) == (
        "openapi",
        1,
        True,
        "Current weather in a city.",
    )
    assert list(weather.openapi_operation["paths"]) == ["/weather/{city}"]
    assert weather.parameters_schema["properties"]["city"]["type"] == "string"


def test_a_second_import_reports_changed_and_unchanged_and_bumps_only_changed_versions():
    services.do_import_openapi(app_name=APP, document=weather_document(URL))
    document = weather_document(URL)
    document["paths"]["/broken"]["get"]["summary"] = "Fails, now documented."

    report = services.do_import_openapi(app_name=APP, document=json.dumps(document))

    assert (report.created, report.changed, sorted(report.unchanged)) == (
        [],
        ["get_broken"],
        ["get_weather", "make_transfer"],
    )
    assert dict(Tool.objects.values_list("name", "version")) == {"get_broken": 2, "get_weather": 1, "make_transfer": 1}
    assert [v.version for v in Tool.objects.get(name="get_broken").versions.all()] == [2, 1]


@pytest.mark.parametrize(
    ("document", "message"),
    [
        pytest.param("not: [valid", "Not JSON or YAML", id="not-yaml"),
        pytest.param({"swagger": "2.0", "paths": {}}, "Only OpenAPI 3", id="swagger-2"),
        pytest.param({"openapi": "3.0.0", "info": {}, "paths": {}}, "'paths' is missing", id="no-paths"),
        pytest.param(
            {
                "openapi": "3.0.0",
                "info": {},
                "paths": {"/a": {"get": {"operationId": "x", "parameters": [{"in": "path"}]}}},
            },
            "GET /a",
            id="broken-operation",
        ),
    ],
)
def test_a_bad_document_is_refused_with_a_clear_error_and_changes_nothing(document, message):
    services.do_import_openapi(app_name=APP, document=weather_document(URL))
    with pytest.raises(InvalidOpenApi, match=message):
        services.do_import_openapi(app_name=APP, document=document)
    assert Tool.objects.count() == 3 and set(Tool.objects.values_list("version", flat=True)) == {1}


def test_an_operation_clashing_with_a_python_tool_is_rejected_and_the_rest_imported(settings):
    services.do_create_tool(
        app_name=APP, name="get_weather", kind="python", callable_path="tests.tools.callables.convert_currency"
    )
    report = services.do_import_openapi(app_name=APP, document=weather_document(URL))
    assert report.rejected == {"get_weather": "A Python tool of the app already has this name."}
    assert sorted(report.created) == ["get_broken", "make_transfer"]


def test_python_tools_must_be_allow_listed():
    with pytest.raises(services.InvalidTool) as error:
        services.do_create_tool(app_name=APP, name="sneaky", kind="python", callable_path="os.system")
    assert "COGNIZES_TOOL_CALLABLES" in error.value.errors["callable_path"]
    assert not Tool.objects.exists()


def test_a_secret_is_referenced_by_name_never_stored():
    services.do_import_openapi(app_name=APP, document=weather_document(URL))
    with pytest.raises(services.InvalidTool) as error:
        services.do_update_tool(Tool.objects.get(name="get_weather"), changes={"auth_scheme": "bearer"})
    assert "auth_secret_name" in error.value.errors


def test_every_change_bumps_the_tool_version_and_the_apps_registry_marker():
    assert services.get_registry_version(app_name=APP) == 0
    tool = services.do_create_tool(
        app_name=APP, name="convert", kind="python", callable_path="tests.tools.callables.convert_currency"
    )
    services.do_update_tool(tool, changes={"description": "Convert money."})
    assert (tool.version, services.get_registry_version(app_name=APP)) == (2, 2)
    assert services.get_registry_version(app_name="other_app") == 0

    with pytest.raises(services.StaleTool):
        services.do_update_tool(tool, changes={"enabled": False}, expected_version=1)
    services.do_delete_tool(tool)
    assert services.get_registry_version(app_name=APP) == 3


def test_results_past_the_size_limit_are_cut_and_the_full_size_kept(settings):
    settings.COGNIZES_TOOL_RESULT_MAX_BYTES = 50
    execution = services.do_record_execution(
        app_name=APP,
        user_id="ada",
        session_id="s",
        tool_name="t",
        status="succeeded",
        started_at="2026-01-01T00:00:00Z",
        duration_ms=1.0,
        arguments={},
        result={"text": "x" * 500},
    )
    execution = ToolExecution.objects.get(pk=execution.pk)
    assert execution.result_truncated and execution.result_size == len(json.dumps({"text": "x" * 500}))
    assert len(execution.result["truncated"]) == 50


def test_the_management_command_imports_a_file(tmp_path):
    path = tmp_path / "weather.json"
    path.write_text(json.dumps(weather_document(URL)))
    out = io.StringIO()
    call_command("import_openapi", APP, str(path), stdout=out)
    assert sorted(json.loads(out.getvalue())["created"]) == ["get_broken", "get_weather", "make_transfer"]

    path.write_text("{}")
    with pytest.raises(CommandError, match="Only OpenAPI 3"):
        call_command("import_openapi", APP, str(path))
