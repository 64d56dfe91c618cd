"""Issue 41 A: stored secrets survive key rotation (``cognizes.infra.encryption``, ``manage.py reencrypt_secrets``), and
the data migration keeps rows that named environment variables working only where the operator allows them."""

from __future__ import annotations

import io
import logging

import pytest
from cryptography.fernet import Fernet, InvalidToken
from django.core.exceptions import ImproperlyConfigured
from django.core.management import CommandError, call_command
from django.db import connection
from django.db.migrations.executor import MigrationExecutor

from cognizes.infra import encryption
from tools_app import mcp_servers, secrets, services
from tools_app.models import AppSecret, McpServer, Tool

APP = "weather"
SECRET = "wx-s3cret-7f1c2e"
CALLABLE = "tests.tools.callables.convert_currency"


def _sent_headers(app_name: str = APP) -> dict[str, dict[str, str]]:
    """What each enabled row of the app would send now, as agents load it."""
    _, tools, servers = mcp_servers.get_enabled_registry(app_name=app_name)
    return {row.name: row.secret_headers for row in [*tools, *servers]}


def _tool_sending(name: str) -> None:
    services.do_create_tool(
        app_name=APP, name="convert", kind="python", callable_path=CALLABLE, auth_scheme="bearer", auth_secret_name=name
    )


@pytest.mark.django_db
def test_a_secret_written_under_an_old_key_is_read_after_a_new_key_is_prepended_and_the_command_moves_it(settings):
    old, new = Fernet.generate_key().decode(), Fernet.generate_key().decode()
    settings.COGNIZES_SECRET_KEYS = [old]
    secrets.do_set_secret(app_name=APP, name="TOKEN", value=SECRET)
    _tool_sending("TOKEN")
    written = AppSecret.objects.get().ciphertext

    settings.COGNIZES_SECRET_KEYS = [new, old]  # every process gets the new key first: nothing stops
    assert _sent_headers() == {"convert": {"Authorization": f"Bearer {SECRET}"}}
    with pytest.raises(InvalidToken):
        Fernet(new).decrypt(written.encode())

    out = io.StringIO()
    call_command("reencrypt_secrets", stdout=out)

    assert "Re-encrypted 1 secret(s); 0 already had the newest key." in out.getvalue()
    moved = AppSecret.objects.get().ciphertext
    assert moved != written and Fernet(new).decrypt(moved.encode()).decode() == SECRET
    settings.COGNIZES_SECRET_KEYS = [new]  # the old key can go
    assert _sent_headers() == {"convert": {"Authorization": f"Bearer {SECRET}"}}
    call_command("reencrypt_secrets", stdout=out)
    assert "Re-encrypted 0 secret(s); 1 already had the newest key." in out.getvalue()


@pytest.mark.django_db
def test_a_key_dropped_too_early_sends_nothing_and_the_command_names_the_secrets_it_cannot_open(settings, caplog):
    caplog.set_level(logging.WARNING, logger="tools_app.secret_headers")
    settings.COGNIZES_SECRET_KEYS = [Fernet.generate_key().decode()]
    secrets.do_set_secret(app_name=APP, name="TOKEN", value=SECRET)
    _tool_sending("TOKEN")
    settings.COGNIZES_SECRET_KEYS = [Fernet.generate_key().decode()]

    assert _sent_headers() == {"convert": {}}
    assert "tool secret TOKEN of app weather cannot be read" in caplog.text and SECRET not in caplog.text
    with pytest.raises(CommandError, match="No configured key opens 1 secret"):
        call_command("reencrypt_secrets", stdout=io.StringIO())


@pytest.mark.django_db
def test_without_keys_of_its_own_the_server_derives_one_from_secret_key_and_can_move_off_it(settings):
    settings.COGNIZES_SECRET_KEYS = []
    secrets.do_set_secret(app_name=APP, name="TOKEN", value=SECRET)
    _tool_sending("TOKEN")
    out = io.StringIO()
    call_command("reencrypt_secrets", "--print-derived-key", stdout=out)
    derived = out.getvalue().strip()
    assert derived == encryption.derived_key(settings.SECRET_KEY) and derived not in settings.SECRET_KEY

    settings.COGNIZES_SECRET_KEYS = [Fernet.generate_key().decode(), derived]
    call_command("reencrypt_secrets", stdout=io.StringIO())
    settings.COGNIZES_SECRET_KEYS = settings.COGNIZES_SECRET_KEYS[:1]

    assert _sent_headers() == {"convert": {"Authorization": f"Bearer {SECRET}"}}


def test_a_malformed_key_is_a_configuration_error_that_does_not_print_it(settings):
    settings.COGNIZES_SECRET_KEYS = [Fernet.generate_key().decode(), "not-a-fernet-key-but-a-secret"]

    with pytest.raises(ImproperlyConfigured) as error:
        encryption.encrypt("x")

    assert "key 2 of 2" in str(error.value) and "not-a-fernet-key" not in str(error.value)


@pytest.mark.django_db(transaction=True)
def test_the_data_migration_makes_named_variables_env_references_sent_only_where_the_operator_allows(
    settings,
    monkeypatch,
    capsys,
):
    before, latest = ("tools_app", "0003_mcp_server"), ("tools_app", "0005_secret_names_become_env_references")
    executor = MigrationExecutor(connection)
    executor.migrate([before])
    try:
        old = executor.loader.project_state([before]).apps
        OldTool, OldServer = old.get_model("tools_app", "Tool"), old.get_model("tools_app", "McpServer")
        OldTool.objects.create(
            app_name=APP,
            name="forecast",
            kind="python",
            callable_path=CALLABLE,
            auth_scheme="bearer",
            auth_secret_name="OPENWEATHER_KEY",
        )
        OldTool.objects.create(app_name=APP, name="plain", kind="python", callable_path=CALLABLE)
        OldTool.objects.create(
            app_name="appb",
            name="leak",
            kind="python",
            callable_path=CALLABLE,
            auth_scheme="bearer",
            auth_secret_name="SECRET_KEY",
        )
        OldServer.objects.create(
            app_name=APP,
            name="acme",
            url="https://mcp.acme.example/mcp",
            auth_scheme="api_key_header",
            auth_header_name="X-Api-Key",
            auth_secret_name="ACME_KEY",
        )
        settings.COGNIZES_ENV_SECRETS = {APP: ["OPENWEATHER_KEY", "ACME_KEY"]}

        executor = MigrationExecutor(connection)
        executor.migrate([latest])
    finally:
        executor = MigrationExecutor(connection)
        executor.migrate(executor.loader.graph.leaf_nodes("tools_app"))

    printed = capsys.readouterr().out
    assert "COGNIZES_ENV_SECRETS=appb=SECRET_KEY" in printed and "OPENWEATHER_KEY" not in printed
    assert dict(Tool.objects.values_list("name", "auth_secret_source")) == {
        "forecast": "env",
        "plain": "app",
        "leak": "env",
    }
    assert McpServer.objects.get().auth_secret_source == "env"
    assert not AppSecret.objects.exists()  # no value of the environment was copied into the database
    monkeypatch.setenv("OPENWEATHER_KEY", "ow-123")
    monkeypatch.setenv("ACME_KEY", "acme-456")
    monkeypatch.setenv("SECRET_KEY", "operator-signing-key")
    assert _sent_headers() == {
        "forecast": {"Authorization": "Bearer ow-123"},
        "plain": {},
        "acme": {"X-Api-Key": "acme-456"},
    }
    assert _sent_headers("appb") == {"leak": {}}


def test_the_settings_read_the_allow_list_per_app_and_the_keys_newest_first():
    import json
    import os
    import subprocess
    import sys

    from tests.processes import ROOT

    env = {
        **os.environ,
        "DJANGO_SETTINGS_MODULE": "cognizes.settings",
        "COGNIZES_ENV_SECRETS": " weather = OPENWEATHER_KEY, ACME_KEY ;travel=ACME_KEY;;",
        "COGNIZES_SECRET_KEYS": "new-key, old-key",
    }
    script = (
        "import json; from django.conf import settings; "
        "print(json.dumps([settings.COGNIZES_ENV_SECRETS, settings.COGNIZES_SECRET_KEYS]))"
    )
    out = subprocess.run([sys.executable, "-c", script], cwd=ROOT, env=env, capture_output=True, text=True, timeout=60)

    assert json.loads(out.stdout.strip().splitlines()[-1]) == [
        {"weather": ["OPENWEATHER_KEY", "ACME_KEY"], "travel": ["ACME_KEY"]},
        ["new-key", "old-key"],
    ]
