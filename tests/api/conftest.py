"""API test helpers: clients that authenticate with real API keys."""

from __future__ import annotations

import pytest
from rest_framework.test import APIClient

from cognizes.access.services import do_create_api_key


def client_for(app_name: str, *, user_id: str = "", read_only: bool = False) -> APIClient:
    _, key = do_create_api_key(name="test", app_name=app_name, user_id=user_id, read_only=read_only)
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Bearer {key}")
    return client


@pytest.fixture
def api(db) -> APIClient:
    """A read-write key for app 'shop', any user."""
    return client_for("shop")
