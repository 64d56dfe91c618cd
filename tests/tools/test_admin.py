"""The admin edits the registry through the services: versions, the change marker, import, approvals."""

from __future__ import annotations

import json

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile

from tests.tools.conftest import weather_document
from tools_app import services
from tools_app.models import Tool, ToolApproval

pytestmark = pytest.mark.django_db

APP = "travel_app"


def test_uploading_a_document_imports_its_operations(admin_client):
    upload = SimpleUploadedFile("weather.json", json.dumps(weather_document("https://w.example")).encode())
    response = admin_client.post("/admin/tools_app/tool/import/", {"app_name": APP, "document": upload}, follow=True)
    assert "Created 3, changed 0, unchanged 0, rejected 0." in response.content.decode()
    assert Tool.objects.filter(app_name=APP).count() == 3


def test_a_bad_upload_shows_the_error_and_imports_nothing(admin_client):
    upload = SimpleUploadedFile("bad.yaml", b"openapi: '2.0'")
    response = admin_client.post("/admin/tools_app/tool/import/", {"app_name": APP, "document": upload})
    assert "Only OpenAPI 3" in response.content.decode()
    assert not Tool.objects.exists()


def test_disable_action_and_edit_form_bump_versions_and_the_marker(admin_client):
    services.do_import_openapi(app_name=APP, document=weather_document("https://w.example"))
    weather = Tool.objects.get(name="get_weather")
    admin_client.post("/admin/tools_app/tool/", {"action": "disable", "_selected_action": [weather.pk]}, follow=True)
    weather.refresh_from_db()
    assert (weather.enabled, weather.version) == (False, 2)

    page = admin_client.get(f"/admin/tools_app/tool/{weather.pk}/change/")
    assert page.status_code == 200 and "parameters schema" in page.content.decode().lower()
    before = services.get_registry_version(app_name=APP)
    form = {
        "app_name": APP,
        "name": "get_weather",
        "description": "Weather now.",
        "kind": "openapi",
        "openapi_operation": json.dumps(weather.openapi_operation),
        "callable_path": "",
        "enabled": "on",
        "base_url": "",
        "auth_scheme": "none",
        "auth_secret_source": "app",
        "auth_secret_name": "",
        "auth_header_name": "X-API-Key",
        "timeout_seconds": "5",
        "versions-TOTAL_FORMS": "0",
        "versions-INITIAL_FORMS": "0",
    }
    response = admin_client.post(f"/admin/tools_app/tool/{weather.pk}/change/", form)
    assert response.status_code == 302, response.content.decode()[:2000]
    weather.refresh_from_db()
    assert (weather.description, weather.enabled, weather.version, weather.timeout_seconds) == (
        "Weather now.",
        True,
        3,
        5.0,
    )
    assert services.get_registry_version(app_name=APP) == before + 1


def test_approve_action_decides_pending_calls(admin_client):
    services.do_record_approval_request(
        app_name=APP, user_id="ada", session_id="s1", request_id="r1", function_call_id="c1", tool_name="t"
    )
    admin_client.post(
        "/admin/tools_app/toolapproval/", {"action": "approve", "_selected_action": [ToolApproval.objects.get().pk]}
    )
    assert ToolApproval.objects.get().status == "approved"
    assert ToolApproval.objects.get().decided_by == "admin:admin"


def _staff(django_user_model, client, *permissions: str):
    """A client logged in as a staff user holding only ``permissions`` (codenames of tools_app)."""
    from django.contrib.auth.models import Permission

    user = django_user_model.objects.create_user("clerk", password="pw-123456-x", is_staff=True)
    user.user_permissions.set(Permission.objects.filter(content_type__app_label="tools_app", codename__in=permissions))
    client.force_login(user)
    return client


def test_staff_without_the_add_permission_cannot_import_tools_issue_41_i(client, django_user_model):
    staff = _staff(django_user_model, client)
    upload = SimpleUploadedFile("weather.json", json.dumps(weather_document("https://w.example")).encode())

    assert staff.get("/admin/tools_app/tool/import/").status_code == 403
    response = staff.post("/admin/tools_app/tool/import/", {"app_name": "any_app", "document": upload})

    assert response.status_code == 403
    assert not Tool.objects.exists()


def test_staff_with_add_tool_imports_but_changes_existing_tools_only_with_change_tool(client, django_user_model):
    services.do_import_openapi(app_name=APP, document=weather_document("https://old.example"))
    staff = _staff(django_user_model, client, "add_tool", "view_tool")
    document = weather_document("https://w.example")
    document["paths"]["/forecast"] = {
        "get": {"operationId": "getForecast", "summary": "Tomorrow.", "responses": {"200": {"description": "-"}}}
    }
    upload = SimpleUploadedFile("weather.json", json.dumps(document).encode())

    response = staff.post("/admin/tools_app/tool/import/", {"app_name": APP, "document": upload}, follow=True)

    page = response.content.decode()
    assert response.status_code == 200 and "Created 1, changed 0, unchanged 0, rejected 3." in page
    assert "may not change" in page
    assert Tool.objects.get(app_name=APP, name="get_weather").openapi_operation["servers"] == [
        {"url": "https://old.example"}
    ]
    assert Tool.objects.filter(app_name=APP).count() == 4


SECRET = "wx-s3cret-7f1c2e"


def test_a_secret_added_in_the_admin_is_stored_encrypted_and_never_shown_again(admin_client):
    from cognizes.infra import encryption
    from tools_app.models import AppSecret

    added = admin_client.post("/admin/tools_app/appsecret/add/", {"app_name": APP, "name": "TOKEN", "value": SECRET})
    assert added.status_code == 302, added.content.decode()[:2000]
    secret = AppSecret.objects.get()
    assert SECRET not in secret.ciphertext and encryption.decrypt(secret.ciphertext) == SECRET
    change = f"/admin/tools_app/appsecret/{secret.pk}/change/"
    page = admin_client.get(change).content.decode()
    assert SECRET not in page and "••••••••" in page and 'type="password"' in page
    assert SECRET not in admin_client.get("/admin/tools_app/appsecret/").content.decode()

    refused = admin_client.post(change, {"value": "new-value\r\nX-Evil: 1"})
    assert refused.status_code == 200 and "One line" in refused.content.decode()
    assert "new-value" not in refused.content.decode()  # not even what was just typed
    assert admin_client.post(change, {"value": ""}).status_code == 302  # empty: the value stays
    assert encryption.decrypt(AppSecret.objects.get().ciphertext) == SECRET
    assert admin_client.post(change, {"value": "rotated"}).status_code == 302
    assert encryption.decrypt(AppSecret.objects.get().ciphertext) == "rotated"

    services.do_create_tool(
        app_name=APP,
        name="convert",
        kind="python",
        callable_path="tests.tools.callables.convert_currency",
        auth_scheme="bearer",
        auth_secret_name="TOKEN",
    )
    kept = admin_client.post(f"/admin/tools_app/appsecret/{secret.pk}/delete/", {"post": "yes"}, follow=True)
    assert "is sent by tool convert" in kept.content.decode() and AppSecret.objects.exists()


def test_an_mcp_servers_headers_are_write_only_in_the_admin(admin_client):
    from tools_app import mcp_servers
    from tools_app.models import McpServer

    server = mcp_servers.do_create_mcp_server(
        app_name=APP, name="up", url="https://mcp.example/mcp", headers={"X-Tenant": "tenant-credential-9"}
    )
    change = f"/admin/tools_app/mcpserver/{server.pk}/change/"
    page = admin_client.get(change).content.decode()
    assert "tenant-credential-9" not in page and "X-Tenant: ••••••••" in page
    form = {
        "app_name": APP,
        "name": "up",
        "description": "",
        "url": "https://mcp.example/mcp",
        "transport": "streamable_http",
        "headers": "",
        "allowed_tools": "[]",
        "denied_tools": "[]",
        "tool_name_prefix": "",
        "enabled": "on",
        "auth_scheme": "none",
        "auth_secret_source": "app",
        "auth_secret_name": "",
        "auth_header_name": "X-API-Key",
        "timeout_seconds": "5",
        "list_cache_seconds": "60",
    }

    assert admin_client.post(change, form).status_code == 302  # headers left empty: kept
    assert McpServer.objects.get().headers == {"X-Tenant": "tenant-credential-9"}
    refused = admin_client.post(change, {**form, "headers": '{"X-Tenant": "typed\\r\\nX-Evil: 1"}'})
    assert refused.status_code == 200 and "typed" not in refused.content.decode()
    assert admin_client.post(change, {**form, "headers": '{"X-Other": "v2"}'}).status_code == 302
    assert McpServer.objects.get().headers == {"X-Other": "v2"}


def test_disabling_a_row_whose_secret_the_operator_no_longer_allows_says_why_instead_of_failing(admin_client):
    services.do_import_openapi(app_name=APP, document=weather_document("https://w.example"))
    Tool.objects.filter(name="get_weather").update(
        auth_scheme="bearer", auth_secret_source="env", auth_secret_name="SECRET_KEY"
    )  # as the data migration leaves it
    ids = list(Tool.objects.values_list("pk", flat=True))

    response = admin_client.post("/admin/tools_app/tool/", {"action": "disable", "_selected_action": ids}, follow=True)

    page = response.content.decode()
    assert response.status_code == 200 and "Disabled 2 tools." in page
    assert "was left as it is" in page and "COGNIZES_ENV_SECRETS" in page
    assert sorted(Tool.objects.values_list("name", "enabled")) == [
        ("get_broken", False),
        ("get_weather", True),
        ("make_transfer", False),
    ]
