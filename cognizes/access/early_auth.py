"""Who may send a request body, decided from its headers before any byte of it is read (issue 41 J4).

Django reads a body before it dispatches, and the body limiter (``cognizes.access.body_limit``) read it before Django:
an unauthenticated POST declaring 50 MB was read whole before the view's 401. Here the same credentials the surfaces
accept are checked first: an API key (``Authorization: Bearer``, Google's ``x-goog-api-key`` or ``?key=``) must be
a usable one, or the request must carry a logged-in staff session (the browsable API). This only refuses early;
the view still authenticates and checks scope as before, so nothing is allowed here that a view would not check.
"""

from __future__ import annotations

from importlib import import_module
from typing import Any
from urllib.parse import parse_qs

from django.conf import settings
from django.contrib.auth import SESSION_KEY
from django.http.cookie import parse_cookie
from rest_framework.exceptions import APIException

from cognizes.access.outages import DATABASE_DOWN, as_unavailable
from cognizes.access.services import get_key
from cognizes.infra.db_threads import run_in_db_thread

NO_KEY = "Send a Cognizes API key: 'Authorization: Bearer <key>' (or x-goog-api-key)."
BAD_KEY = "Unknown or revoked API key."


async def refusal(scope: dict[str, Any]) -> tuple[int, str] | None:
    """None if the request's sender may send a body; else (401, why). Key and session lookups run off the loop.

    With the database down nothing can be checked, and the view would wait for it again: the outage's 503 is
    answered here (``cognizes.access.outages`` words it; the body limiter adds ``Retry-After``).
    """
    try:
        return await run_in_db_thread(check_sender, scope)
    except DATABASE_DOWN as down:
        unavailable = as_unavailable(down)  # an APIException, for any of DATABASE_DOWN
        return 503, str(unavailable.detail if isinstance(unavailable, APIException) else unavailable)


def check_sender(scope: dict[str, Any]) -> tuple[int, str] | None:
    headers = {name.decode("latin-1").lower(): value.decode("latin-1") for name, value in scope.get("headers", [])}
    raw = _key(headers, scope)
    if raw is not None:
        return None if raw and get_key(raw) is not None else (401, BAD_KEY)
    if _staff_session(headers.get("cookie", "")):
        return None
    return 401, NO_KEY


def _key(headers: dict[str, str], scope: dict[str, Any]) -> str | None:
    """The API key the request presents ("" for a malformed Bearer header), or None if it presents none."""
    words = headers.get("authorization", "").split()
    if words and words[0].lower() == "bearer":
        return words[1] if len(words) == 2 else ""
    if headers.get("x-goog-api-key"):
        return headers["x-goog-api-key"]
    given = parse_qs(scope.get("query_string", b"").decode("latin-1")).get("key")
    return given[0] if given else None


def _staff_session(cookie: str) -> bool:
    """A session of a logged-in user (SessionAuthentication's): whether it may write is the view's to say."""
    session_key = parse_cookie(cookie).get(settings.SESSION_COOKIE_NAME) if cookie else None
    if not session_key:
        return False
    store = import_module(settings.SESSION_ENGINE).SessionStore(session_key)
    return store.get(SESSION_KEY) is not None
