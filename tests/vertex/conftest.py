"""A Cognizes server on loopback and ADK's own Vertex AI clients pointed at it.

Both ways a Vertex client authenticates are exercised: express mode (the key as
``x-goog-api-key``, paths ``reasoningEngines/{id}/…``) and project mode (the key
as a bearer token, paths ``projects/{p}/locations/{l}/reasoningEngines/{id}/…``).
"""

from __future__ import annotations

from dataclasses import dataclass, replace

import pytest

from access.services import do_create_api_key
from cognizes.vertex import VertexAiMemoryBankService, VertexAiSessionService
from vertex_app.services import do_get_or_create_engine

APP = "vertex_shop"
MODES = {"express": {}, "project": {"project": "my-project", "location": "us-central1"}}


@dataclass(frozen=True)
class Endpoint:
    base_url: str
    engine_id: int
    key: str
    mode: dict

    def sessions(self, **overrides) -> VertexAiSessionService:
        return VertexAiSessionService(**{**self.options(), **overrides})

    def memory(self, **overrides) -> VertexAiMemoryBankService:
        return VertexAiMemoryBankService(**{**self.options(), **overrides})

    def options(self) -> dict:
        return {"base_url": self.base_url, "engine_id": self.engine_id, "api_key": self.key, **self.mode}

    def key_for(self, *, app_name: str = APP, user_id: str = "", read_only: bool = False) -> str:
        return do_create_api_key(name="test", app_name=app_name, user_id=user_id, read_only=read_only)[1]


@pytest.fixture
def server(asgi_server) -> Endpoint:
    """The server, the app's engine and a key of the app (express mode)."""
    engine = do_get_or_create_engine(app_name=APP)
    _, key = do_create_api_key(name="vertex", app_name=APP)
    return Endpoint(base_url=asgi_server + "/", engine_id=engine.engine_id, key=key, mode={})


@pytest.fixture(params=sorted(MODES))
def vertex(request, server) -> Endpoint:
    """``server``, reached in express and in project mode."""
    return replace(server, mode=MODES[request.param])
