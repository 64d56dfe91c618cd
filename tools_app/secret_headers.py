"""How a row (``models.SecretAuth``: a registry tool, an external MCP server) names its secret, and the header
that carries it.

A row names one of its own app's secrets (``AppSecret``, stored encrypted), or an environment variable the
operator allows that app in ``COGNIZES_ENV_SECRETS``. Both are checked when the row is written (a clear 400),
and again when the secret is read: a name the operator never allowed the row's app is never looked up in the
environment, whatever a row says (issue 41 A: a tenant naming ``SECRET_KEY`` received it). Secrets are read on
the database threads when the registry is loaded (``load_secret_headers``), so a changed secret moves the
registry marker like a changed row, and the value lives only in the toolset's memory. No message of this module
carries a value.
"""

from __future__ import annotations

import logging
import os
import re
from collections.abc import Sequence

from django.conf import settings
from django.db.models import Q

from cognizes.infra import encryption
from tools_app.models import AppSecret, AuthScheme, SecretAuth, SecretSource

logger = logging.getLogger(__name__)

HEADER_NAME = re.compile(r"^[!#$%&'*+.^_`|~0-9A-Za-z-]+$")
"""An HTTP header name (an RFC 9110 token)."""
SECRET_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]{0,127}$")
"""What a secret (or an environment variable a row names) may be called: an environment variable's shape."""


def allowed_env_names(app_name: str) -> frozenset[str]:
    """The environment variables the operator lets ``app_name``'s rows send (``COGNIZES_ENV_SECRETS``)."""
    return frozenset(settings.COGNIZES_ENV_SECRETS.get(app_name, ()))


def secrets_path(app_name: str, name: str) -> str:
    """Where the app stores a secret over the API (said in messages)."""
    return f"PUT /api/v1/apps/{app_name}/secrets/{name}/"


def check_secret_auth(row: SecretAuth, errors: dict[str, str], *, app_name: str) -> None:
    """Add to ``errors`` what is wrong with how ``row`` (of ``app_name``) names its secret."""
    if row.auth_scheme not in AuthScheme.values:
        errors["auth_scheme"] = f"One of {', '.join(AuthScheme.values)}."
        return
    if row.auth_secret_source not in SecretSource.values:
        errors["auth_secret_source"] = f"One of {', '.join(SecretSource.values)}."
        return
    if row.auth_scheme == AuthScheme.API_KEY_HEADER and not HEADER_NAME.match(row.auth_header_name or ""):
        errors["auth_header_name"] = "An HTTP header name (letters, digits and -, e.g. X-API-Key)."
    name = row.auth_secret_name
    if row.auth_scheme == AuthScheme.NONE:
        return
    if not name:
        errors["auth_secret_name"] = "Name the app's secret that the header carries."
    elif not isinstance(name, str) or not SECRET_NAME.match(name):
        errors["auth_secret_name"] = "Letters, digits and underscores, not starting with a digit, at most 128."
    elif row.auth_secret_source == SecretSource.ENV:
        if name not in allowed_env_names(app_name):
            errors["auth_secret_name"] = (
                f"The operator does not allow app {app_name!r} the environment variable {name!r} "
                f"(COGNIZES_ENV_SECRETS); store the secret in the app ({secrets_path(app_name, name)}) and set "
                "auth_secret_source 'app'."
            )
    elif not AppSecret.objects.filter(app_name=app_name, name=name).exists():
        errors["auth_secret_name"] = (
            f"App {app_name!r} has no secret named {name!r}: store it first ({secrets_path(app_name, name)}, "
            "or the admin's App secrets)."
        )


def load_secret_headers(rows: Sequence[SecretAuth]) -> None:
    """Set each row's ``secret_headers``: the header carrying its secret now, or none (said in the log).

    One query for the rows' stored secrets, each scoped to its own row's app. Call it on a database thread.
    """
    wanted = {
        (row.app_name, row.auth_secret_name)
        for row in rows
        if row.auth_scheme != AuthScheme.NONE and row.auth_secret_source == SecretSource.APP
    }
    stored: dict[tuple[str, str], str] = {}
    if wanted:
        scope = Q()
        for app_name, name in wanted:
            scope |= Q(app_name=app_name, name=name)
        stored = {(s.app_name, s.name): s.ciphertext for s in AppSecret.objects.filter(scope)}
    for row in rows:
        secret = _secret(row, stored)
        row.secret_headers = _headers(row, secret) if secret else {}


def _secret(row: SecretAuth, stored: dict[tuple[str, str], str]) -> str | None:
    app_name, name = row.app_name, row.auth_secret_name
    if row.auth_scheme == AuthScheme.NONE:
        return None
    if row.auth_secret_source == SecretSource.ENV:
        if name not in allowed_env_names(app_name):
            logger.warning(
                "tool secret %s of app %s is not an environment variable COGNIZES_ENV_SECRETS allows "
                "the app; not read, not sent",
                name,
                app_name,
            )
            return None
        secret = os.environ.get(name)
        if not secret:
            logger.warning("tool secret %s is not set in the environment", name)
        return secret or None
    token = stored.get((app_name, name))
    if token is None:
        logger.warning("tool secret %s: app %s has no such secret; nothing sent", name, app_name)
        return None
    try:
        return encryption.decrypt(token)
    except encryption.UnreadableSecret as error:
        logger.warning("tool secret %s of app %s cannot be read: %s", name, app_name, error)
        return None


def _headers(row: SecretAuth, secret: str) -> dict[str, str]:
    if row.auth_scheme == AuthScheme.BEARER:
        return {"Authorization": f"Bearer {secret}"}
    return {row.auth_header_name: secret}
