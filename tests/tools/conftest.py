"""A real HTTP API on loopback for the OpenAPI tools, its OpenAPI document, and the allow-list."""

from __future__ import annotations

import json
import socket
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest

CALLABLES = ["tests.tools.callables.convert_currency", "tests.tools.callables.wire_money"]


class WeatherApi(BaseHTTPRequestHandler):
    """GET /weather/{city}, GET /v2/weather/{city}, POST /transfers, GET /broken (a 500)."""

    requests: list[tuple[str, str, dict[str, str]]] = []

    def _reply(self, status: int, body: dict[str, Any]) -> None:
        data = json.dumps(body).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def do_GET(self) -> None:
        self.requests.append(("GET", self.path, dict(self.headers)))
        if self.path.startswith("/weather/"):
            self._reply(200, {"city": self.path.rsplit("/", 1)[1], "temp": 21})
        elif self.path.startswith("/v2/weather/"):
            self._reply(200, {"city": self.path.rsplit("/", 1)[1], "temp": 21, "api": "v2"})
        else:
            self._reply(500, {"detail": "the weather station is down"})

    def do_POST(self) -> None:
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        self.requests.append(("POST", self.path, dict(self.headers)))
        self._reply(201, {"transferred": body["amount"], "to": body["to"]})

    def log_message(self, *args: Any) -> None:
        pass


@pytest.fixture
def weather_api() -> Iterator[str]:
    """The base URL of a fresh weather API (loopback only); its requests land in ``WeatherApi.requests``."""
    WeatherApi.requests = []
    server = ThreadingHTTPServer(("127.0.0.1", 0), WeatherApi)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_port}"
    server.shutdown()
    server.server_close()


def weather_document(base_url: str) -> dict[str, Any]:
    return {
        "openapi": "3.0.3",
        "info": {"title": "Weather", "version": "1"},
        "servers": [{"url": base_url}],
        "paths": {
            "/weather/{city}": {
                "get": {
                    "operationId": "getWeather",
                    "summary": "Current weather in a city.",
                    "parameters": [{"name": "city", "in": "path", "required": True, "schema": {"type": "string"}}],
                    "responses": {"200": {"description": "The weather."}},
                }
            },
            "/transfers": {
                "post": {
                    "operationId": "makeTransfer",
                    "summary": "Transfer money.",
                    "requestBody": {
                        "required": True,
                        "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Transfer"}}},
                    },
                    "responses": {"201": {"description": "Done."}},
                }
            },
            "/broken": {
                "get": {
                    "operationId": "getBroken",
                    "summary": "Always fails.",
                    "responses": {"200": {"description": "-"}},
                }
            },
        },
        "components": {
            "schemas": {
                "Transfer": {
                    "type": "object",
                    "required": ["amount", "to"],
                    "properties": {"amount": {"type": "number"}, "to": {"type": "string"}},
                }
            }
        },
    }


@pytest.fixture
def silent_api() -> Iterator[str]:
    """The base URL of a server that takes connections and never answers (a hung upstream)."""
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(8)
    yield f"http://127.0.0.1:{listener.getsockname()[1]}"
    listener.close()


@pytest.fixture(autouse=True)
def tool_settings(settings) -> None:
    settings.COGNIZES_TOOL_CALLABLES = CALLABLES
    settings.COGNIZES_TOOLS_ALLOW_PRIVATE_NETWORK = True
