"""The kinds of API key, and the one wording of a refusal caused by a key's kind (issue 43 item 2).

A key is of the whole app or of one user (``--user``), and either may be read-only (DESIGN.md, trust boundaries).
Some paths need one kind: a write needs a read-write key, what every user of the app shares (its tools, secrets,
corpora, app state, memory settings) needs a key of the whole app, and a call that acts for someone (an agent's
turn over A2A, a tool call over MCP) needs a user — the key's, or the ``X-User-Id`` header's with a key of the whole
app. A caller refused for its key's kind cannot guess that from a bare 400 or 403 (a new user could not: issue 43),
so every such refusal, on every surface (the HTTP API, Vertex's REST and gRPC, MCP and A2A), says which kind the
path needs and the command that makes one. The words are here, once; the surfaces only carry them.
"""

from __future__ import annotations

import shlex

from rest_framework import exceptions

USER_HEADER = "X-User-Id"
"""The header that names the user a call of a key of the whole app acts for (A2A, MCP)."""


class WrongKeyKind(exceptions.PermissionDenied):
    """403: the key authenticates, but this path needs a key of another kind (the message says which, and how)."""


def _command(app_name: str, *options: str) -> str:
    """The command that makes a key of ``app_name``, written so that a shell reads the app name as one word."""
    return " ".join(["cognizes create_api_key", shlex.quote(app_name), *options])


def needs_read_write(app_name: str) -> str:
    """A read-only key on a path that writes."""
    return (
        "This API key is read-only, and this call changes data: it needs a read-write key "
        f"(`{_command(app_name)}`, with `--user USER_ID` for a key of one user)."
    )


def needs_whole_app(app_name: str, doing: str) -> str:
    """A key of one user on a path that changes what every user of the app shares; ``doing`` says what it tried."""
    return (
        f"A key of one user cannot {doing}: every user of the app shares it, so this needs a key of the whole app "
        f"(`{_command(app_name)}`)."
    )


def needs_user(app_name: str) -> str:
    """A key of the whole app, without ``X-User-Id``, on a path that acts for one user."""
    return (
        "This key is for the whole app, and this call acts for one user: name the user in the "
        f"{USER_HEADER} header, or use a key of one user (`{_command(app_name, '--user USER_ID')}`)."
    )


def check_read_write(read_only: bool, app_name: str) -> None:
    """Refuse a read-only key on a path that writes."""
    if read_only:
        raise WrongKeyKind(needs_read_write(app_name))


def check_whole_app(only_user: str | None, app_name: str, doing: str) -> None:
    """Refuse a key of one user (``only_user``, as ``cognizes.access.api.Scope`` has it) on an app-wide change."""
    if only_user:
        raise WrongKeyKind(needs_whole_app(app_name, doing))
