"""API keys are remembered by each server process and forgotten the moment one changes.

Over a real ASGI server: the key is read from the database once, and a revocation,
a change of scope, or a change made while the server was not listening is obeyed
at once (cognizes/access/key_cache.py).
"""

from __future__ import annotations

import time

import httpx
import pytest
from django.db import connection
from django.utils import timezone

from cognizes.access.models import ApiKey
from cognizes.access.services import do_create_api_key
from cognizes.infra import notified_cache

pytestmark = pytest.mark.django_db(transaction=True)

SESSIONS = "/api/v1/apps/shop/users/{user}/sessions/"


def _sql(statement: str) -> list[tuple]:
    with connection.cursor() as cursor:
        cursor.execute(statement)
        return cursor.fetchall() if cursor.description else []


def _listening() -> bool:
    """The server's key cache has its LISTEN connection up (its last statement is LISTEN or a heartbeat)."""
    return bool(
        _sql(
            "SELECT 1 FROM pg_stat_activity WHERE datname = current_database() "
            "AND application_name = 'cognizes key cache' AND query IN ('LISTEN cognizes_api_keys', 'SELECT 1')"
        )
    )


def _statuses_until(client: httpx.Client, path: str, status: int, seconds: float) -> list[int]:
    """GET ``path`` until it answers ``status`` or ``seconds`` pass; every status seen."""
    seen, deadline = [], time.monotonic() + seconds
    while not seen or (seen[-1] != status and time.monotonic() < deadline):
        seen.append(client.get(path).status_code)
        time.sleep(0.01)
    return seen


@pytest.fixture
def remembered(asgi_server):
    """A client whose key the server has read and remembered."""
    api_key, key = do_create_api_key(name="t", app_name="shop")
    client = httpx.Client(base_url=asgi_server, headers={"Authorization": f"Bearer {key}"})
    client.get(SESSIONS.format(user="ada"))  # starts the listener
    deadline = time.monotonic() + 10
    while not _listening():
        assert time.monotonic() < deadline, "the key cache did not start listening"
        time.sleep(0.02)
    time.sleep(0.05)
    assert client.get(SESSIONS.format(user="ada")).status_code == 200
    yield api_key, client
    client.close()


def test_a_remembered_key_is_not_read_again_and_its_revocation_is_obeyed_at_once(remembered):
    api_key, client = remembered
    # Revoked behind the cache's back (no notification): the server still has it, so it did not read it again.
    _sql("ALTER TABLE api_keys DISABLE TRIGGER api_keys_notify")
    try:
        ApiKey.objects.filter(pk=api_key.pk).update(revoked_at=timezone.now())
        assert client.get(SESSIONS.format(user="ada")).status_code == 200
    finally:
        _sql("ALTER TABLE api_keys ENABLE TRIGGER api_keys_notify")
        ApiKey.objects.filter(pk=api_key.pk).update(revoked_at=None)
    time.sleep(0.05)
    assert client.get(SESSIONS.format(user="ada")).status_code == 200

    ApiKey.objects.filter(pk=api_key.pk).update(revoked_at=timezone.now())
    started = time.monotonic()
    assert _statuses_until(client, SESSIONS.format(user="ada"), 401, 1.0)[-1] == 401
    assert time.monotonic() - started < 1.0


def test_a_key_given_to_another_user_is_refused_for_the_first_at_once(remembered):
    api_key, client = remembered
    api_key.refresh_from_db()
    api_key.user_id = "bob"  # as the admin saves it
    api_key.save()
    assert _statuses_until(client, SESSIONS.format(user="ada"), 404, 1.0)[-1] == 404  # other users are not there
    assert client.get(SESSIONS.format(user="bob")).status_code == 200


def test_a_revocation_while_the_server_is_not_listening_is_obeyed_at_once(remembered):
    api_key, client = remembered
    _sql(
        "SELECT pg_terminate_backend(pid) FROM pg_stat_activity "
        "WHERE datname = current_database() AND application_name = 'cognizes key cache'"
    )
    ApiKey.objects.filter(pk=api_key.pk).update(revoked_at=timezone.now())  # nobody hears this one
    # Within the listener's reconnection delay: the server reads keys from the database meanwhile.
    assert (
        _statuses_until(client, SESSIONS.format(user="ada"), 401, 0.8 * notified_cache.RECONNECT_DELAY_SECONDS)[-1]
        == 401
    )
