"""RAG Engine's upload URLs: issued to a key, checked at every chunk, spent by the upload they finish (issue 41 E, F).

Google's resumable protocol sends the bytes with no key: the ``x-goog-upload-url`` is the capability. Such a URL
was a signed dict, valid a day whatever became of the key that asked for it, and any number of times. Now it names
an ``UploadGrant`` row (signed, so a made-up URL is refused before its body is read, ``check_token``; and with the
row's random nonce, so knowing the secret key alone forges nothing). Each chunk re-checks the grant and its key in
the transaction that stores the file, which also spends it: a failed chunk leaves the URL usable, a finished upload
leaves it spent. State lives in PostgreSQL rather than Redis for that one transaction (Redis cannot join it), and
so that an upload needs nothing but the database.
"""

from __future__ import annotations

import re
import secrets
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import timedelta
from typing import Any
from urllib.parse import parse_qs

from django.conf import settings
from django.core import signing
from django.db import transaction
from django.utils import timezone

from cognizes.access.models import ApiKey
from cognizes.access.outages import REDIS_DOWN
from knowledge_app import services
from knowledge_app.models import Corpus
from vertex_app.models import UploadGrant

SALT = "cognizes.vertex.rag-upload.grant"
"""Not the old URLs' salt: a URL of the former kind (a signed dict) is refused as unknown."""
UPLOAD_PATH = re.compile(r"^/upload/v1(beta1)?/.*ragFiles:upload$")
"""RAG Engine's upload path (``vertex_app.urls``): with ``?upload_id=`` it takes an upload URL's bytes."""


class GrantRefused(Exception):
    """An upload URL that may not take bytes, with the reason the client is told."""


@dataclass(frozen=True)
class Declared:
    """What the resumable start declared about the file."""

    file_name: str
    display_name: str
    description: str
    mime_type: str
    chunking: Mapping[str, Any]


def do_issue_grant(*, key: ApiKey, corpus: Corpus, declared: Declared) -> str:
    """Record a grant for ``key`` to upload one file into ``corpus``; the token its URL carries.

    Grants expired a day ago are deleted on the way (a few at a time, by the expiry index): their URLs are refused
    either way, and the table stays the size of a day's uploads without a task of its own.
    """
    stale = list(
        UploadGrant.objects.filter(expires_at__lt=timezone.now() - timedelta(days=1)).values_list("id", flat=True)[:100]
    )
    if stale:
        UploadGrant.objects.filter(id__in=stale).delete()
    grant = UploadGrant.objects.create(
        key=key,
        app_name=corpus.app_name,
        corpus_id=corpus.id,
        nonce=secrets.token_urlsafe(24),
        file_name=declared.file_name,
        display_name=declared.display_name,
        description=declared.description,
        mime_type=declared.mime_type,
        chunking=declared.chunking,
        expires_at=timezone.now() + timedelta(hours=settings.COGNIZES_RAG_UPLOAD_URL_HOURS),
    )
    return signing.dumps({"grant": grant.id, "key": key.id, "nonce": grant.nonce}, salt=SALT)


def check_token(token: str) -> dict[str, Any]:
    """The grant a token names, by its signature only (no database): what may be refused before any byte is read."""
    try:
        claims = signing.loads(token, salt=SALT)
    except signing.BadSignature as bad:
        raise GrantRefused("This upload URL is not valid: start a new upload.") from bad
    if not isinstance(claims, dict) or not all(
        isinstance(claims.get(k), t) for k, t in (("grant", int), ("key", int), ("nonce", str))
    ):
        raise GrantRefused("This upload URL is not valid: start a new upload.")
    return claims


def token_in(scope: dict[str, Any]) -> str | None:
    """The upload URL token of an ASGI request for an upload's bytes, or None if it is not one."""
    if scope.get("type") != "http" or not UPLOAD_PATH.match(scope.get("path", "")):
        return None
    given = parse_qs(scope.get("query_string", b"").decode("latin-1"), keep_blank_values=True).get("upload_id")
    return given[0] if given else None


def token_refusal(token: str) -> tuple[int, str] | None:
    """None if ``token`` is a URL this server signed; else (403, why): said before any of the bytes is read."""
    try:
        check_token(token)
    except GrantRefused as refused:
        return 403, str(refused)
    return None


def do_upload(token: str, *, data: bytes) -> services.Added:
    """Store the file an upload URL was issued for, spending the URL, if its grant and key still allow it."""
    claims = check_token(token)
    try:
        return _store(claims, data)
    except REDIS_DOWN:
        # The file is stored (kept, and indexed once a worker's recovery sends it) but its indexing could not be
        # sent: the client gets a 503 (cognizes.access.outages). Its URL stays usable, so the retry after Retry-After
        # finds these bytes in the corpus and finishes, rather than being refused as used.
        UploadGrant.objects.filter(id=claims["grant"]).update(used_at=None, document_id=None)
        raise


def _store(claims: dict[str, Any], data: bytes) -> services.Added:
    with transaction.atomic():  # the outermost: the indexing is sent once it commits, or raises from here
        grant = (
            UploadGrant.objects.select_for_update()
            .filter(id=claims["grant"], key_id=claims["key"], nonce=claims["nonce"])
            .first()
        )
        if grant is None:
            raise GrantRefused("This upload URL is not valid: start a new upload.")
        if grant.used_at is not None:
            raise GrantRefused("This upload URL was used already (its upload finished): start a new upload.")
        now = timezone.now()
        if grant.expires_at <= now:
            raise GrantRefused("This upload URL has expired: start a new upload.")
        key = ApiKey.objects.usable().filter(id=grant.key_id, app_name=grant.app_name, read_only=False).first()
        if key is None:
            raise GrantRefused(
                "The API key that started this upload was revoked or changed: start a new upload with a valid key."
            )
        corpus = services.get_corpus(grant.app_name, grant.corpus_id)
        if corpus is None:
            raise GrantRefused("The corpus this upload was for no longer exists.")
        added = services.do_add_document(
            corpus,
            data=data,
            filename=grant.file_name,
            mime_type=grant.mime_type,
            display_name=grant.display_name,
            description=grant.description,
            user_id=key.user_id,
            **grant.chunking,
        )  # a user's key: that user's file
        UploadGrant.objects.filter(id=grant.id).update(used_at=now, document_id=added.document.id)
    return added
