"""Stored tenant content (artifacts, documents) served inert, on every surface that hands it back.

A tenant chooses both the bytes and the mime type of what it stores: an artifact
of type text/html with a script, opened by the operator in the admin, would run
in the admin's origin with the operator's session (issue 41 D). So whatever
serves stored bytes answers them through ``inert_response``: as an attachment
(a browser saves it rather than rendering it as a page), ``nosniff`` (it never
guesses a more active type) and a sandboxing Content-Security-Policy (even opened
directly, it runs no script, is a unique origin, loads nothing).
"""

from __future__ import annotations

import re

from django.http import HttpResponse
from django.utils.http import content_disposition_header

SANDBOX_POLICY = "sandbox; default-src 'none'"
"""No script, no plugin, no form, a unique origin, nothing loaded: the page can only be looked at."""

_MIME_TYPE = re.compile(r"[!#$%&'*+.^_`|~0-9A-Za-z-]+/[!#$%&'*+.^_`|~0-9A-Za-z-]+")
"""type/subtype as RFC 9110 spells a token: a stored mime type with anything else (a CR, a parameter) is not sent."""


def inert_response(data: bytes, *, mime_type: str, filename: str) -> HttpResponse:
    """``data`` as a download named ``filename``: attachment, ``nosniff``, sandboxing CSP, no framing."""
    essence, _, parameters = mime_type.partition(";")
    essence = essence.strip().lower()
    if not (_MIME_TYPE.fullmatch(essence) and len(essence) <= 255):
        essence = "application/octet-stream"
    utf8 = parameters.replace(" ", "").lower() == "charset=utf-8"  # text saved as text (content_of) says so
    response = HttpResponse(data, content_type=essence + ("; charset=utf-8" if utf8 else ""))
    response["Content-Disposition"] = content_disposition_header(True, filename or "download")
    response["X-Content-Type-Options"] = "nosniff"
    response["Content-Security-Policy"] = SANDBOX_POLICY
    response["X-Frame-Options"] = "DENY"
    response["Cross-Origin-Resource-Policy"] = "same-origin"
    return response
