"""The caller of a protocol endpoint served outside DRF (A2A, MCP): its key, its user, the one scope check.

Both surfaces read ``Authorization: Bearer <key>`` from Starlette's headers and
answer in their own shapes; the rules (which key, which app, read-only or not,
whose user) are these, once.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from django.http import Http404
from rest_framework import exceptions

from cognizes.access import key_kinds
from cognizes.access.api import check_key_scope
from cognizes.access.authentication import BearerKeyAuthentication
from cognizes.access.models import MAX_KEY_LENGTH, ApiKey

USER_HEADER = key_kinds.USER_HEADER.lower()  # as the headers mapping has it


class Refused(Exception):
    """A call refused before the protocol sees it: an HTTP status and the message to answer with.

    ``wrong_kind``: the key authenticated but is of the wrong kind for the call (``cognizes.access.key_kinds`` words
    the message); a protocol whose clients read no body of a 4xx answers it as the protocol's own error (A2A).
    """

    def __init__(self, status: int, message: str, *, wrong_kind: bool = False) -> None:
        super().__init__(message)
        self.status = status
        self.wrong_kind = wrong_kind


@dataclass(frozen=True)
class Caller:
    key: ApiKey
    user_id: str
    """The key's user, or for an app-wide key the ``X-User-Id`` header's; empty when the call needs none."""


def authenticate_caller(
    headers: Mapping[str, str],
    app_name: str,
    *,
    write: bool,
    needs_user: bool = True,
    what: str = "agent",
) -> Caller:
    """The key and user of a call to ``app_name``, after ``check_key_scope``; ``Refused`` otherwise.

    ``what`` names the thing at the URL in the 404 (an agent, a tool registry).
    """
    try:
        header = headers.get("authorization", "").encode("latin-1")  # as Starlette decoded it
        found = BearerKeyAuthentication().authenticate_header_value(header)
    except exceptions.AuthenticationFailed as failed:
        raise Refused(401, str(failed.detail)) from failed
    if found is None:
        raise Refused(401, "Send a Cognizes API key as 'Authorization: Bearer <key>'.")
    _, key = found
    try:
        check_key_scope(key, app_name, None, write=write)
    except Http404 as not_found:
        raise Refused(404, f"No {what} {app_name!r} for this key.") from not_found
    except exceptions.PermissionDenied as denied:
        raise Refused(403, str(denied.detail), wrong_kind=isinstance(denied, key_kinds.WrongKeyKind)) from denied
    user_id = key.user_id or headers.get(USER_HEADER, "").strip()
    if not user_id and needs_user:
        raise Refused(400, key_kinds.needs_user(app_name), wrong_kind=True)
    if len(user_id) > MAX_KEY_LENGTH or "\x00" in user_id:
        raise Refused(400, f"X-User-Id: at most {MAX_KEY_LENGTH} characters, no NUL.")
    return Caller(key=key, user_id=user_id)
