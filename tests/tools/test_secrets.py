"""Issue 41 A: a tool's or MCP server's secret is its app's own, encrypted at rest and write-only; the server's
environment is reachable only by the names the operator allows an app (``COGNIZES_ENV_SECRETS``)."""

from __future__ import annotations

import logging

import httpx
import pytest
from django.db import connection

from cognizes.access.services import do_create_api_key
from cognizes.infra import encryption
from cognizes.infra.db_threads import run_in_db_thread
from tests.tools.conftest import WeatherApi, weather_document
from tools_app import direct, secrets, services
from tools_app.models import AppSecret, McpServer, Tool

pytestmark = pytest.mark.django_db(transaction=True)

APP = "weather"
OTHER = "appb"
SECRET = "wx-s3cret-7f1c2e"
OPERATOR_SECRET = "operator-signing-key-do-not-leak"


@pytest.fixture(autouse=True)
def _fresh_tools():
    direct.forget_tools()
    yield
    direct.forget_tools()


async def _key(app_name: str = APP, **kwargs) -> dict[str, str]:
    _, key = await run_in_db_thread(do_create_api_key, name="ops", app_name=app_name, **kwargs)
    return {"Authorization": f"Bearer {key}"}


async def _api(base: str, method: str, path: str, key: dict[str, str], body: dict | None = None) -> httpx.Response:
    async with httpx.AsyncClient(base_url=base, timeout=30) as http:
        return await http.request(method, path, json=body, headers=key)


async def _weather_tool(weather_api: str, app_name: str = APP) -> None:
    """The weather API's getWeather as a tool of ``app_name``, with no secret yet."""
    document = weather_document(weather_api)
    document["paths"] = {"/weather/{city}": document["paths"]["/weather/{city}"]}
    await run_in_db_thread(services.do_import_openapi, app_name=app_name, document=document)


async def _call_weather(app_name: str = APP) -> None:
    outcome = await direct.call_tool(
        name="get_weather", arguments={"city": "Paris"}, caller=direct.Caller(app_name=app_name, user_id="ada")
    )
    assert outcome.status == "succeeded", outcome.result


def _sent() -> list[str]:
    """Every header value the weather API received."""
    return [value for _, _, headers in WeatherApi.requests for value in headers.values()]


async def test_a_key_naming_the_servers_own_secrets_gets_a_400_and_nothing_is_sent(
    asgi_server,
    weather_api,
    monkeypatch,
    settings,
):
    monkeypatch.setenv("SECRET_KEY", OPERATOR_SECRET)
    settings.COGNIZES_ENV_SECRETS = {APP: ["OPENWEATHER_KEY"], OTHER: ["SECRET_KEY"]}
    key = await _key()
    await _weather_tool(weather_api)
    tool = f"/api/v1/apps/{APP}/tools/get_weather/"

    for source in ("app", "env"):
        for name in ("SECRET_KEY", "DATABASE_URL", "DJANGO_SECRET_KEY"):
            auth = {"auth_scheme": "bearer", "auth_secret_source": source, "auth_secret_name": name}
            refused = await _api(asgi_server, "PATCH", tool, key, auth)
            assert refused.status_code == 400, refused.text
            assert name in str(refused.json()["error"]["details"]["auth_secret_name"])
            server = await _api(
                asgi_server,
                "POST",
                f"/api/v1/apps/{APP}/mcp-servers/",
                key,
                {"name": "leak", "url": f"{weather_api}/mcp", **auth},
            )
            assert server.status_code == 400 and "auth_secret_name" in server.json()["error"]["details"]
    row = await run_in_db_thread(Tool.objects.get)
    assert (row.auth_scheme, row.version) == ("none", 1)
    assert await run_in_db_thread(McpServer.objects.count) == 0

    await _call_weather()
    assert WeatherApi.requests and not any(OPERATOR_SECRET in value for value in _sent())


async def test_a_row_naming_a_variable_not_allowed_is_never_read_at_call_time(
    weather_api, monkeypatch, settings, caplog
):
    """A row written before the fix (or before the operator took a name off the list) sends nothing."""
    caplog.set_level(logging.WARNING, logger="tools_app.secret_headers")
    monkeypatch.setenv("SECRET_KEY", OPERATOR_SECRET)
    settings.COGNIZES_ENV_SECRETS = {OTHER: ["SECRET_KEY"]}  # another app's allowance is not this app's
    await _weather_tool(weather_api)
    await run_in_db_thread(
        lambda: Tool.objects.update(auth_scheme="bearer", auth_secret_source="env", auth_secret_name="SECRET_KEY")
    )

    await _call_weather()

    assert not any(OPERATOR_SECRET in value for value in _sent())
    assert "Authorization" not in WeatherApi.requests[0][2]
    assert "SECRET_KEY of app weather is not an environment variable COGNIZES_ENV_SECRETS allows" in caplog.text


async def test_an_allowed_variable_is_sent_and_stops_when_the_operator_withdraws_it(
    asgi_server,
    weather_api,
    monkeypatch,
    settings,
):
    monkeypatch.setenv("OPENWEATHER_KEY", "from-the-operator")
    settings.COGNIZES_ENV_SECRETS = {APP: ["OPENWEATHER_KEY"]}
    await _weather_tool(weather_api)
    patched = await _api(
        asgi_server,
        "PATCH",
        f"/api/v1/apps/{APP}/tools/get_weather/",
        await _key(),
        {
            "auth_scheme": "api_key_header",
            "auth_header_name": "X-Api-Key",
            "auth_secret_source": "env",
            "auth_secret_name": "OPENWEATHER_KEY",
        },
    )
    assert patched.status_code == 200, patched.text
    await _call_weather()
    assert WeatherApi.requests[-1][2]["X-Api-Key"] == "from-the-operator"

    settings.COGNIZES_ENV_SECRETS = {}
    await run_in_db_thread(services.bump_marker, APP)  # the next load (a restart, any registry change)
    await _call_weather()
    assert "X-Api-Key" not in WeatherApi.requests[-1][2]


async def test_a_stored_secret_is_sent_to_its_tool_and_is_in_no_column_response_or_admin_page(
    asgi_server,
    weather_api,
    admin_client,
):
    key = await _key()
    await _weather_tool(weather_api)
    stored = await _api(asgi_server, "PUT", f"/api/v1/apps/{APP}/secrets/OPENWEATHER_KEY/", key, {"value": SECRET})
    tool = await _api(
        asgi_server,
        "PATCH",
        f"/api/v1/apps/{APP}/tools/get_weather/",
        key,
        {"auth_scheme": "bearer", "auth_secret_name": "OPENWEATHER_KEY"},
    )
    assert (stored.status_code, tool.status_code) == (201, 200), tool.text

    await _call_weather()

    assert WeatherApi.requests[-1][2]["Authorization"] == f"Bearer {SECRET}"
    raw = await run_in_db_thread(_raw_secret_rows)
    assert raw and not any(SECRET in str(value) for row in raw for value in row)
    responses = [stored, tool] + [
        await _api(asgi_server, "GET", path, key)
        for path in (
            f"/api/v1/apps/{APP}/secrets/",
            f"/api/v1/apps/{APP}/secrets/OPENWEATHER_KEY/",
            f"/api/v1/apps/{APP}/tools/",
            f"/api/v1/apps/{APP}/tools/get_weather/",
        )
    ]
    assert all(r.status_code == 200 or r.status_code == 201 for r in responses)
    assert not any(SECRET in r.text for r in responses)
    assert [s["name"] for s in responses[2].json()["results"]] == ["OPENWEATHER_KEY"]
    assert set(responses[3].json()) == {"name", "created_at", "updated_at"}
    secret_id = (await run_in_db_thread(AppSecret.objects.get)).pk
    pages = [
        await run_in_db_thread(admin_client.get, path)
        for path in (
            "/admin/tools_app/appsecret/",
            f"/admin/tools_app/appsecret/{secret_id}/change/",
            f"/admin/tools_app/tool/{(await run_in_db_thread(Tool.objects.get)).pk}/change/",
        )
    ]
    assert [page.status_code for page in pages] == [200, 200, 200]
    assert not any(SECRET in page.content.decode() for page in pages)
    assert "••••••••" in pages[1].content.decode() and 'type="password"' in pages[1].content.decode()


def _raw_secret_rows() -> list[tuple]:
    with connection.cursor() as cursor:
        cursor.execute("SELECT * FROM tools_app_appsecret")
        return cursor.fetchall()


async def test_a_replaced_secret_reaches_the_running_tools_and_one_in_use_is_not_deleted(asgi_server, weather_api):
    key = await _key()
    path = f"/api/v1/apps/{APP}/secrets/OPENWEATHER_KEY/"
    await _weather_tool(weather_api)
    await _api(asgi_server, "PUT", path, key, {"value": "first"})
    await _api(
        asgi_server,
        "PATCH",
        f"/api/v1/apps/{APP}/tools/get_weather/",
        key,
        {"auth_scheme": "bearer", "auth_secret_name": "OPENWEATHER_KEY"},
    )
    await _call_weather()

    replaced = await _api(asgi_server, "PUT", path, key, {"value": "second"})
    await _call_weather()
    in_use = await _api(asgi_server, "DELETE", path, key)

    assert replaced.status_code == 200
    assert [headers["Authorization"] for _, _, headers in WeatherApi.requests] == ["Bearer first", "Bearer second"]
    assert in_use.status_code == 409 and "tool get_weather" in in_use.json()["error"]["message"]
    await _api(asgi_server, "PATCH", f"/api/v1/apps/{APP}/tools/get_weather/", key, {"auth_scheme": "none"})
    assert (await _api(asgi_server, "DELETE", path, key)).status_code == 204
    assert (await _api(asgi_server, "GET", path, key)).status_code == 404


async def test_another_app_can_neither_use_nor_see_nor_change_a_secret(asgi_server, weather_api):
    await run_in_db_thread(secrets.do_set_secret, app_name=APP, name="OPENWEATHER_KEY", value=SECRET)
    await _weather_tool(weather_api, app_name=OTHER)
    other = await _key(OTHER)
    path = f"/api/v1/apps/{APP}/secrets/OPENWEATHER_KEY/"

    uses = await _api(
        asgi_server,
        "PATCH",
        f"/api/v1/apps/{OTHER}/tools/get_weather/",
        other,
        {"auth_scheme": "bearer", "auth_secret_name": "OPENWEATHER_KEY"},
    )
    server = await _api(
        asgi_server,
        "POST",
        f"/api/v1/apps/{OTHER}/mcp-servers/",
        other,
        {"name": "up", "url": f"{weather_api}/mcp", "auth_scheme": "bearer", "auth_secret_name": "OPENWEATHER_KEY"},
    )

    assert uses.status_code == 400 and "App 'appb' has no secret named 'OPENWEATHER_KEY'" in uses.text
    assert server.status_code == 400
    for method, body in (("GET", None), ("PUT", {"value": "mine now"}), ("DELETE", None)):
        assert (await _api(asgi_server, method, path, other, body)).status_code == 404
    assert (await _api(asgi_server, "GET", f"/api/v1/apps/{OTHER}/secrets/", other)).json()["count"] == 0
    await _call_weather(OTHER)
    assert "Authorization" not in WeatherApi.requests[-1][2]
    stored = await run_in_db_thread(AppSecret.objects.get)
    assert (stored.app_name, encryption.decrypt(stored.ciphertext)) == (APP, SECRET)  # untouched


async def test_only_a_key_of_the_whole_app_writes_secrets_and_no_key_reads_a_servers_header_values(asgi_server):
    key = await _key()
    path = f"/api/v1/apps/{APP}/secrets/TOKEN/"
    user_key, read_only = await _key(user_id="ada"), await _key(read_only=True)

    assert (await _api(asgi_server, "PUT", path, user_key, {"value": "x"})).status_code == 403
    assert (await _api(asgi_server, "PUT", path, read_only, {"value": "x"})).status_code == 403
    assert (await _api(asgi_server, "PUT", path, key, {"value": "x"})).status_code == 201
    assert (await _api(asgi_server, "DELETE", path, user_key)).status_code == 403
    assert (await _api(asgi_server, "DELETE", path, read_only)).status_code == 403
    created = await _api(
        asgi_server,
        "POST",
        f"/api/v1/apps/{APP}/mcp-servers/",
        key,
        {"name": "up", "url": "https://mcp.example/mcp", "headers": {"X-Tenant": "tenant-credential-9"}},
    )
    assert created.status_code == 201, created.text
    for reader in (key, user_key, read_only):
        for listed in ("", "up/"):
            answer = await _api(asgi_server, "GET", f"/api/v1/apps/{APP}/mcp-servers/{listed}", reader)
            assert answer.status_code == 200 and "tenant-credential-9" not in answer.text
            assert "X-Tenant" in answer.text  # the names are shown, not the values


@pytest.mark.parametrize(
    "body, field",
    [
        ({"value": ""}, "value"),
        ({"value": "a\r\nX-Injected: 1"}, "value"),
        ({"value": "x" * 8193}, "value"),
        ({"value": "nul\x00"}, "value"),
        ({}, "value"),
        ({"value": ["a"]}, "value"),
    ],
    ids=["empty", "header injection", "too long", "NUL", "missing", "not text"],
)
async def test_a_bad_secret_is_a_400_naming_the_field_that_never_echoes_the_value(asgi_server, body, field):
    refused = await _api(asgi_server, "PUT", f"/api/v1/apps/{APP}/secrets/TOKEN/", await _key(), body)

    error = refused.json()["error"]
    assert refused.status_code == 400 and (field in (error["details"] or {}) or "NUL" in error["message"]), refused.text
    assert "X-Injected" not in refused.text and "xxxxxxxx" not in refused.text
    assert await run_in_db_thread(AppSecret.objects.count) == 0


async def test_a_bad_secret_name_is_a_400(asgi_server):
    key = await _key()
    for name in ("9lives", "a-b", "x" * 129, "%C2%B2"):
        refused = await _api(asgi_server, "PUT", f"/api/v1/apps/{APP}/secrets/{name}/", key, {"value": "v"})
        error = refused.json()["error"]
        assert refused.status_code == 400 and ("name" in (error["details"] or {}) or "at most" in error["message"]), (
            name,
            refused.text,
        )


async def test_bad_auth_fields_of_a_row_are_400s_naming_the_field(asgi_server, weather_api):
    key = await _key()
    await _weather_tool(weather_api)
    await run_in_db_thread(secrets.do_set_secret, app_name=APP, name="TOKEN", value=SECRET)
    tool = f"/api/v1/apps/{APP}/tools/get_weather/"
    for bad, field in [
        ({"auth_secret_source": "file"}, "auth_secret_source"),
        (
            {"auth_scheme": "api_key_header", "auth_secret_name": "TOKEN", "auth_header_name": "X Api\r\nKey"},
            "auth_header_name",
        ),
        ({"auth_scheme": "bearer", "auth_secret_name": "../TOKEN"}, "auth_secret_name"),
        ({"auth_scheme": "bearer", "auth_secret_name": ""}, "auth_secret_name"),
    ]:
        refused = await _api(asgi_server, "PATCH", tool, key, bad)
        assert refused.status_code == 400 and field in refused.json()["error"]["details"], (bad, refused.text)
    assert (await run_in_db_thread(Tool.objects.get)).version == 1
