"""Creating, checking and revoking API keys."""

from __future__ import annotations

import functools
import hashlib
import hmac
import secrets

from django.db import connection
from django.utils import timezone

from cognizes.access import key_cache
from cognizes.access.models import ApiKey

KEY_PREFIX = "cgz"


def do_create_api_key(*, name: str, app_name: str, user_id: str = "", read_only: bool = False) -> tuple[ApiKey, str]:
    """Create a key; returns the row and the key itself, which is not stored and cannot be shown again."""
    if not app_name.strip():
        raise ValueError("An API key belongs to an app.")
    prefix = f"{KEY_PREFIX}_{secrets.token_hex(4)}"
    key = f"{prefix}_{secrets.token_urlsafe(24)}"
    api_key = ApiKey.objects.create(
        name=name or app_name,
        prefix=prefix,
        key_hash=_hash(key),
        app_name=app_name,
        user_id=user_id,
        read_only=read_only,
    )
    return api_key, key


def get_key(raw: str) -> ApiKey | None:
    """The usable key matching ``raw``, or None (unknown, malformed or revoked)."""
    parts = raw.split("_", 2)  # cgz_<8 hex>_<secret>; the secret may itself contain "_"
    prefix = "_".join(parts[:2]) if len(parts) == 3 and parts[0] == KEY_PREFIX else None
    api_key = key_cache.keys.lookup(prefix, _usable_by_prefix) if prefix else None
    if api_key is None or not hmac.compare_digest(api_key.key_hash, _hash(raw)):
        return None
    return api_key


def _usable_by_prefix(prefix: str) -> ApiKey | None:
    """``ApiKey.objects.usable().filter(prefix=…)``, its SQL built once: every API request asks it, and
    building the query cost more than running it (the prefix is unique)."""
    sql, params = _by_prefix_sql()
    with connection.cursor() as cursor:
        cursor.execute(sql, [prefix if param == _PREFIX else param for param in params])
        row = cursor.fetchone()
    return None if row is None else ApiKey.from_db("default", [f.attname for f in ApiKey._meta.concrete_fields], row)


_PREFIX = "\x00prefix"


@functools.cache
def _by_prefix_sql() -> tuple[str, tuple]:
    return ApiKey.objects.usable().filter(prefix=_PREFIX).query.sql_with_params()


def do_revoke_api_key(api_key: ApiKey) -> None:
    api_key.revoked_at = timezone.now()
    api_key.save(update_fields=["revoked_at"])


def _hash(key: str) -> str:
    return hashlib.sha256(key.encode()).hexdigest()
