"""The header a row's secret travels in, read from the environment when it is used (``models.SecretAuth``).

Registry tools and external MCP servers name their secret the same way, so
it is read here once: a secret never lands in the database, the API or the
admin, and one that is not set is said in the log instead of sent empty.
"""

from __future__ import annotations

import logging
import os

from tools_app.models import AuthScheme, SecretAuth

logger = logging.getLogger(__name__)


def secret_headers(row: SecretAuth) -> dict[str, str]:
    """The header carrying ``row``'s secret now; empty without a scheme or when the variable is not set."""
    if row.auth_scheme == AuthScheme.NONE:
        return {}
    secret = os.environ.get(row.auth_secret_name)
    if not secret:
        logger.warning("tool secret %s is not set in the environment", row.auth_secret_name)
        return {}
    if row.auth_scheme == AuthScheme.BEARER:
        return {"Authorization": f"Bearer {secret}"}
    return {row.auth_header_name: secret}


def check_secret_auth(row: SecretAuth, errors: dict[str, str]) -> None:
    """Add to ``errors`` what is wrong with how ``row`` names its secret."""
    if row.auth_scheme not in AuthScheme.values:
        errors["auth_scheme"] = f"One of {', '.join(AuthScheme.values)}."
    elif row.auth_scheme != AuthScheme.NONE and not row.auth_secret_name:
        errors["auth_secret_name"] = "Name the environment variable that holds the secret."
