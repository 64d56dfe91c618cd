"""``cognizes adk …``: ADK's own CLI with Cognizes behind the services ADK's options cannot name (issue 47)."""

from __future__ import annotations

import google.adk.cli.cli as adk_run
import google.adk.cli.fast_api as adk_fast_api
import pytest

from cognizes.adk import PostgresCredentialService
from runtime_app.adk_launcher import adk_arguments, install

pytestmark = pytest.mark.django_db(transaction=True)


def test_adk_servers_and_adk_run_keep_users_credentials_in_postgres():
    install()
    install()

    # What get_fast_api_app (adk web, adk api_server) and adk run call to build their credential service.
    assert isinstance(adk_fast_api.InMemoryCredentialService(), PostgresCredentialService)
    assert isinstance(adk_run.InMemoryCredentialService(), PostgresCredentialService)


def test_serving_commands_default_every_service_to_cognizes_but_keep_uris_given():
    assert adk_arguments(["web", "--port", "9000", "agents"]) == [
        "web",
        "--session_service_uri",
        "cognizes://",
        "--memory_service_uri",
        "cognizes://",
        "--artifact_service_uri",
        "cognizes://",
        "--port",
        "9000",
        "agents",
    ]
    assert adk_arguments(["api_server", "--memory_service_uri=memory://", "--session_service_uri", "x://", "a"]) == [
        "api_server",
        "--artifact_service_uri",
        "cognizes://",
        "--memory_service_uri=memory://",
        "--session_service_uri",
        "x://",
        "a",
    ]
    assert adk_arguments(["eval", "agents/weather", "set_1"]) == ["eval", "agents/weather", "set_1"]
