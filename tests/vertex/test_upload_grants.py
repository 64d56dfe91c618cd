"""RAG Engine's upload URLs (issue 41 E, F, K): unforgeable, spent once, void once their key is revoked or they expire;
a malformed offset is a 400 that says so."""

from __future__ import annotations

from datetime import timedelta
from urllib.parse import urlsplit

import pytest
from django.core import signing
from django.test import Client
from django.utils import timezone

from cognizes.access.services import do_create_api_key, do_revoke_api_key
from knowledge_app import services
from knowledge_app.models import Document
from vertex_app.models import UploadGrant

pytestmark = pytest.mark.django_db

APP = "uploads_app"
OLD_BUILT_IN_KEY = "cognizes-insecure-local-key-set-DJANGO_SECRET_KEY"
"""The literal settings fell back to before issue 41: anyone could read it in the repository."""


@pytest.fixture
def corpus():
    return services.do_create_corpus(app_name=APP, display_name="Handbook")


@pytest.fixture
def key():
    return do_create_api_key(name="uploads", app_name=APP)


def _start(client: Client, corpus, raw_key: str) -> str:
    """A resumable start as agentplatform sends it; the upload URL's path and query."""
    answer = client.post(
        f"/upload/v1beta1/ragCorpora/{corpus.id}/ragFiles:upload",
        {"ragFile": {"display_name": "notes"}},
        content_type="application/json",
        headers={
            "x-goog-api-key": raw_key,
            "X-Goog-Upload-Protocol": "resumable",
            "X-Goog-Upload-Command": "start",
            "X-Goog-Upload-Header-Content-Type": "text/plain",
            "X-Goog-Upload-File-Name": "notes.txt",
        },
    )
    assert answer.status_code == 200, answer.content
    url = urlsplit(answer["X-Goog-Upload-URL"])
    return f"{url.path}?{url.query}"


def _send(client: Client, url: str, data: bytes, offset: str = "0"):
    return client.post(
        url,
        data,
        content_type="application/octet-stream",
        headers={"X-Goog-Upload-Command": "upload, finalize", "X-Goog-Upload-Offset": offset},
    )


def test_an_upload_url_takes_its_file_once(corpus, key):
    client = Client()
    url = _start(client, corpus, key[1])
    done = _send(client, url, b"The office opens at nine.")
    assert done.status_code == 200 and done["X-Goog-Upload-Status"] == "final"
    again = _send(client, url, b"Something else entirely.")
    assert again.status_code == 403 and "used already" in again.json()["error"]["message"]
    assert Document.objects.filter(corpus=corpus).count() == 1
    assert UploadGrant.objects.get().key_id == key[0].id  # the grant names the key that issued it


def test_an_upload_url_signed_with_the_old_built_in_key_is_refused(corpus):
    forged = signing.dumps(
        {"app": APP, "corpus": corpus.id, "file": "x.txt", "name": "x", "type": "text/plain", "chunking": {}},
        key=OLD_BUILT_IN_KEY,
        salt="cognizes.vertex.rag-upload",
    )
    answer = _send(Client(), f"/upload/v1beta1/ragCorpora/{corpus.id}/ragFiles:upload?upload_id={forged}", b"pwned")
    assert answer.status_code == 403 and "not valid" in answer.json()["error"]["message"]
    assert not Document.objects.exists()


def test_an_upload_url_issued_before_its_key_was_revoked_takes_no_bytes(corpus, key):
    client = Client()
    url = _start(client, corpus, key[1])
    do_revoke_api_key(key[0])
    answer = _send(client, url, b"Written after the key was revoked.")
    assert answer.status_code == 403 and "revoked" in answer.json()["error"]["message"]
    assert not Document.objects.exists()


def test_an_upload_url_whose_key_moved_to_another_app_takes_no_bytes(corpus, key):
    client = Client()
    url = _start(client, corpus, key[1])
    type(key[0]).objects.filter(id=key[0].id).update(app_name="another_app")
    assert _send(client, url, b"Into whose corpus?").status_code == 403
    assert not Document.objects.exists()


def test_an_expired_upload_url_takes_no_bytes(corpus, key, settings):
    client = Client()
    url = _start(client, corpus, key[1])
    grant = UploadGrant.objects.get()
    assert (
        timedelta(hours=settings.COGNIZES_RAG_UPLOAD_URL_HOURS - 0.1)
        < grant.expires_at - timezone.now()
        <= timedelta(hours=settings.COGNIZES_RAG_UPLOAD_URL_HOURS)
    )
    UploadGrant.objects.update(expires_at=timezone.now() - timedelta(seconds=1))
    answer = _send(client, url, b"Too late.")
    assert answer.status_code == 403 and "expired" in answer.json()["error"]["message"]
    assert not Document.objects.exists()


def test_a_refused_file_leaves_the_url_usable(corpus, key):
    client = Client()
    url = _start(client, corpus, key[1])
    assert _send(client, url, b"").status_code == 400  # empty: nothing to index
    assert _send(client, url, b"Now with words.").status_code == 200


@pytest.mark.parametrize("offset", ["²", "1e3", "0x0"])
def test_an_offset_that_is_not_ascii_digits_is_a_400_naming_the_header(corpus, key, offset):
    client = Client()
    url = _start(client, corpus, key[1])
    answer = _send(client, url, b"Some words.", offset=offset)
    assert answer.status_code == 400 and "X-Goog-Upload-Offset" in answer.json()["error"]["message"]
    assert not Document.objects.exists()
    assert _send(client, url, b"Some words.").status_code == 200  # the URL is still good


def test_grants_expired_a_day_ago_are_deleted_as_new_ones_are_issued(corpus, key):
    client = Client()
    _start(client, corpus, key[1])
    UploadGrant.objects.update(expires_at=timezone.now() - timedelta(days=2))
    _start(client, corpus, key[1])
    assert UploadGrant.objects.count() == 1
