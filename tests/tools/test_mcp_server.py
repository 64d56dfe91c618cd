"""Every app's tool registry is an MCP server at /mcp/{app}/: the SDK's client and ADK's McpToolset list and call."""

from __future__ import annotations

import httpx2
import pytest
from mcp import Client
from mcp.client.streamable_http import streamable_http_client

from access.services import do_create_api_key
from infra.db_threads import run_in_db_thread
from tests.tools.conftest import weather_document
from tools_app import services
from tools_app.models import ToolExecution

pytestmark = pytest.mark.django_db(transaction=True)

APP = "travel_app"


async def _key(app_name: str = APP, **kwargs) -> dict[str, str]:
    _, key = await run_in_db_thread(do_create_api_key, name="mcp", app_name=app_name, **kwargs)
    return {"Authorization": f"Bearer {key}"}


async def test_smoke(asgi_server, weather_api):
    await run_in_db_thread(services.do_import_openapi, app_name=APP, document=weather_document(weather_api))
    headers = await _key(user_id="ada")
    async with httpx2.AsyncClient(headers=headers) as http:
        async with Client(streamable_http_client(f"{asgi_server}/mcp/{APP}/", http_client=http)) as client:
            listed = await client.list_tools()
            print([t.name for t in listed.tools])
            result = await client.call_tool("get_weather", {"city": "Paris"})
            print(result)
    print(await run_in_db_thread(lambda: list(ToolExecution.objects.values())))
