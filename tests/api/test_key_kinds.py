"""A key of the wrong kind is refused with the kind the path needs and how to get one (issue 43 item 2).

Three kinds (DESIGN.md, trust boundaries): a key of the whole app, a key of one user (``--user``), either read-only.
A refusal caused by the kind names the kind the path needs and the command that makes one, on every path of the
HTTP API; tests/runtime/test_a2a.py, tests/tools/test_mcp_server.py and tests/vertex check the other surfaces.
"""

from __future__ import annotations

import pytest

from sessions_app.models import AppState, Session
from tests.api.conftest import client_for
from tools_app.models import AppSecret, Tool

pytestmark = pytest.mark.django_db

APP = "shop"
BASE = f"/api/v1/apps/{APP}"


@pytest.mark.parametrize(
    ("method", "path", "body"),
    [
        ("patch", f"{BASE}/state/", {"state": {"x": 1}, "expected_version": 0}),
        ("patch", f"{BASE}/memory-config/", {"custom_topics": []}),
        ("post", f"{BASE}/tools/", {"name": "t", "kind": "python", "callable_path": "x.y"}),
        ("put", f"{BASE}/secrets/TOKEN/", {"value": "x"}),
        ("post", f"{BASE}/corpora/", {"display_name": "Handbook"}),
    ],
    ids=["app state", "memory config", "tools", "secrets", "corpora"],
)
def test_a_key_of_one_user_is_told_the_path_needs_a_key_of_the_whole_app(method, path, body):
    response = getattr(client_for(APP, user_id="ada"), method)(path, body, format="json")

    assert response.status_code == 403, response.content
    detail = response.json()["error"]["message"]
    assert "key of the whole app" in detail and f"cognizes create_api_key {APP}" in detail, detail
    assert "--user" not in detail.split(f"create_api_key {APP}")[1].split(")")[0]  # the command makes that kind
    assert not AppState.objects.exists() and not Tool.objects.exists() and not AppSecret.objects.exists()


@pytest.mark.parametrize(
    ("path", "body"),
    [
        (f"{BASE}/users/ada/sessions/", {}),
        (f"{BASE}/users/ada/state/", {"state": {"x": 1}, "expected_version": 0}),
    ],
    ids=["create a session", "user state"],
)
def test_a_read_only_key_is_told_the_path_needs_a_read_write_key(path, body):
    client = client_for(APP, user_id="ada", read_only=True)
    response = (client.patch if path.endswith("state/") else client.post)(path, body, format="json")

    assert response.status_code == 403, response.content
    detail = response.json()["error"]["message"]
    assert "read-only" in detail and f"cognizes create_api_key {APP}" in detail, detail
    assert not Session.objects.exists()


def test_a_key_of_one_user_writing_app_state_in_a_session_is_told_which_key_may():
    response = client_for(APP, user_id="ada").post(
        f"{BASE}/users/ada/sessions/", {"state": {"app:motd": "hi"}}, format="json"
    )

    assert response.status_code == 400, response.content
    assert f"cognizes create_api_key {APP}" in str(response.json()), response.json()
    assert not Session.objects.exists()


def test_an_unknown_app_name_in_the_command_is_quoted_as_a_shell_would_need():
    """The app name is the tenant's: a name with a space or a quote is still one argument of the printed command."""
    app = "l'app météo"
    response = client_for(app, user_id="ada").patch(
        f"/api/v1/apps/{app}/state/", {"state": {"x": 1}, "expected_version": 0}, format="json"
    )

    assert response.status_code == 403
    assert "cognizes create_api_key 'l'\"'\"'app météo'" in response.json()["error"]["message"]
