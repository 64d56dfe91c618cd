"""The rules of users' stored credentials (``UserCredential``): ``PostgresCredentialService`` and erasure call these.

A credential is stored as ADK's JSON of it, encrypted with the app secrets' keys (``cognizes.infra.encryption``),
and never with the agent's OAuth2 client secret: that belongs to the agent's configuration, not to the user's
tokens, so ``PostgresCredentialService`` strips it before saving and puts the configured one back on load
(what ADK's ``SessionStateCredentialService`` does). Saving is one ``INSERT … ON CONFLICT DO UPDATE``: two
processes refreshing the same token at once leave the row the later one wrote, never an error (ADK's own lock is
per process).

    do_save_credential(app_name="cal", user_id="ada", credential_key="adk_oauth2_…", credential_json="{…}")
    get_credential_json(app_name="cal", user_id="ada", credential_key="adk_oauth2_…")   # "{…}" or None
"""

from __future__ import annotations

import logging

from cognizes.infra import encryption
from tools_app.models import UserCredential

logger = logging.getLogger(__name__)


def do_save_credential(*, app_name: str, user_id: str, credential_key: str, credential_json: str) -> None:
    """Store (or replace) the user's credential under ``credential_key``, encrypted; the last write wins."""
    UserCredential.objects.bulk_create(
        [
            UserCredential(
                app_name=app_name,
                user_id=user_id,
                credential_key=credential_key,
                ciphertext=encryption.encrypt(credential_json),
            )
        ],
        update_conflicts=True,
        unique_fields=["app_name", "user_id", "credential_key"],
        update_fields=["ciphertext", "updated_at"],
    )


def do_delete_credential(*, app_name: str, user_id: str, credential_key: str) -> int:
    """Forget the user's credential under ``credential_key``; how many rows went (0 or 1)."""
    deleted, _ = UserCredential.objects.filter(
        app_name=app_name, user_id=user_id, credential_key=credential_key
    ).delete()
    return deleted


def get_credential_json(*, app_name: str, user_id: str, credential_key: str) -> str | None:
    """The user's stored credential JSON under ``credential_key``; None when there is none or no key opens it.

    An unreadable row (its key dropped from ``COGNIZES_SECRET_KEYS`` too early) reads as absent, so the user is
    asked to sign in again rather than the tool failing on every call.
    """
    row = (
        UserCredential.objects.filter(app_name=app_name, user_id=user_id, credential_key=credential_key)
        .values_list("pk", "ciphertext")
        .first()
    )
    if row is None:
        return None
    try:
        return encryption.decrypt(row[1])
    except encryption.UnreadableSecret:
        logger.warning("stored credential %s of %s/%s is unreadable: treated as absent", row[0], app_name, user_id)
        return None
