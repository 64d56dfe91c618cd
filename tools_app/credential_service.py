"""``PostgresCredentialService``: ADK's credential service on PostgreSQL, so users' tokens survive restarts.

ADK's ``CredentialManager`` loads a tool's credential from the credential service before asking the user to sign
in, and saves it after a sign-in, an exchange or a refresh; ADK offers only an in-memory service (a restart, or a
second worker, asks every user to sign in again). This one keeps each credential per (app, user,
``auth_config.credential_key``) in ``UserCredential``, encrypted, without the agent's client secret
(``tools_app.credentials``); it is erased with the user.

    runner = Runner(..., credential_service=PostgresCredentialService())   # runner_for passes one already
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from google.adk.auth.auth_credential import AuthCredential
from google.adk.auth.credential_service.base_credential_service import BaseCredentialService
from google.adk.auth.oauth2_credential_util import _credential_without_client_secret, _with_configured_client_secret
from typing_extensions import override

from cognizes.infra.db_threads import run_in_db_thread
from tools_app import credentials

if TYPE_CHECKING:
    from google.adk.agents.callback_context import CallbackContext
    from google.adk.auth.auth_tool import AuthConfig


class PostgresCredentialService(BaseCredentialService):
    """ADK's ``BaseCredentialService`` on PostgreSQL: scoped by the session's app and the user, keyed by the auth
    config's ``credential_key``; tokens encrypted at rest, the client secret never stored."""

    @override
    async def load_credential(
        self, auth_config: AuthConfig, callback_context: CallbackContext
    ) -> AuthCredential | None:
        stored = await run_in_db_thread(credentials.get_credential_json, **_scope(auth_config, callback_context))
        if stored is None:
            return None
        # Saved without the client secret: put the configured one back, or a refresh would go out as a public
        # client (ADK then drops to token_endpoint_auth_method='none' and a confidential client's refresh fails).
        return _with_configured_client_secret(
            credential=AuthCredential.model_validate_json(stored), raw_credential=auth_config.raw_auth_credential
        )

    @override
    async def save_credential(self, auth_config: AuthConfig, callback_context: CallbackContext) -> None:
        credential = _credential_without_client_secret(auth_config.exchanged_auth_credential)
        scope = _scope(auth_config, callback_context)
        if credential is None:  # ADK's in-memory service then answers None too
            await run_in_db_thread(credentials.do_delete_credential, **scope)
            return
        await run_in_db_thread(
            credentials.do_save_credential, **scope, credential_json=credential.model_dump_json(exclude_none=True)
        )


def _scope(auth_config: AuthConfig, callback_context: CallbackContext) -> dict[str, str]:
    return {
        "app_name": callback_context.session.app_name,
        "user_id": callback_context.session.user_id,
        "credential_key": auth_config.credential_key or auth_config.get_credential_key(),  # set by its validator
    }
