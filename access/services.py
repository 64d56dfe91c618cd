"""Creating, checking and revoking API keys."""

from __future__ import annotations

import hashlib
import hmac
import secrets

from django.utils import timezone

from access.models import ApiKey

KEY_PREFIX = "cgz"


def do_create_api_key(*, name: str, app_name: str, user_id: str = "", read_only: bool = False) -> tuple[ApiKey, str]:
    """Create a key; returns the row and the key itself, which is not stored and cannot be shown again."""
    if not app_name.strip():
        raise ValueError("An API key belongs to an app.")
    prefix = f"{KEY_PREFIX}_{secrets.token_hex(4)}"
    key = f"{prefix}_{secrets.token_urlsafe(24)}"
    api_key = ApiKey.objects.create(
        name=name or app_name, prefix=prefix, key_hash=_hash(key), app_name=app_name, user_id=user_id,
        read_only=read_only,
    )
    return api_key, key


def get_key(raw: str) -> ApiKey | None:
    """The usable key matching ``raw``, or None (unknown, malformed or revoked)."""
    parts = raw.split("_", 2)  # cgz_<8 hex>_<secret>; the secret may itself contain "_"
    prefix = "_".join(parts[:2]) if len(parts) == 3 and parts[0] == KEY_PREFIX else None
    api_key = ApiKey.objects.usable().filter(prefix=prefix).first() if prefix else None
    if api_key is None or not hmac.compare_digest(api_key.key_hash, _hash(raw)):
        return None
    return api_key


def do_revoke_api_key(api_key: ApiKey) -> None:
    api_key.revoked_at = timezone.now()
    api_key.save(update_fields=["revoked_at"])


def _hash(key: str) -> str:
    return hashlib.sha256(key.encode()).hexdigest()
