"""Issue 44 item 4 on RAG Engine's wire: agentplatform's ``upload_file`` of a file no parser reads raises at once.

Before: the resumable upload of a PNG, or of random bytes named ``.pdf``, answered with a RagFile that went ``ERROR``
later. Now a type not taken is refused at the resumable start (415, before any byte is sent), bytes that are not the
type declared when they arrive (400); both in Google's error shape, so the SDK raises ``ClientError`` with the
reason, and nothing is stored (the upload URL stays unspent). python-aiplatform's multipart upload likewise.
"""

from __future__ import annotations

import os

import httpx
import pytest
from google.genai.errors import ClientError

from knowledge_app.models import Document
from vertex_app.models import UploadGrant

pytestmark = pytest.mark.django_db(transaction=True)

PNG = b"\x89PNG\r\n\x1a\n" + bytes(64)


def test_a_type_not_taken_is_refused_at_the_start_and_wrong_bytes_when_they_come(rag, tmp_path):
    corpus = rag.create_corpus(rag_corpus={"display_name": "Handbook"})
    image = tmp_path / "scan.png"
    image.write_bytes(PNG)
    with pytest.raises(ClientError) as refused:
        rag.upload_file(corpus_name=corpus.name, path=str(image))
    assert refused.value.code == 415 and refused.value.status == "INVALID_ARGUMENT"
    assert ".pdf" in refused.value.message and "COGNIZES_KNOWLEDGE_OCR" in refused.value.message
    assert not UploadGrant.objects.exists()  # refused at the start: no upload URL was issued

    fake = tmp_path / "report.pdf"
    fake.write_bytes(os.urandom(4096).replace(b"%PDF-", b"xxxxx"))
    with pytest.raises(ClientError) as refused:
        rag.upload_file(corpus_name=corpus.name, path=str(fake))
    assert refused.value.code == 400 and refused.value.status == "INVALID_ARGUMENT"
    assert "report.pdf is declared as a PDF but its content is not a PDF" in refused.value.message
    assert not Document.objects.exists() and UploadGrant.objects.get().used_at is None


def test_the_older_sdks_multipart_upload_is_refused_in_googles_shape(server):
    from knowledge_app import services

    corpus = services.do_create_corpus(app_name="vertex_shop", display_name="Handbook")
    url = f"{server.base_url}upload/v1/ragCorpora/{corpus.id}/ragFiles:upload"
    headers = {"x-goog-api-key": server.key, "X-Goog-Upload-Protocol": "multipart"}
    metadata = (None, "{'rag_file': {'display_name': 'x'}}")

    image = httpx.post(url, headers=headers, files={"metadata": metadata, "file": ("scan.png", PNG, "image/png")})
    assert image.status_code == 415
    assert image.json()["error"]["status"] == "INVALID_ARGUMENT" and ".docx" in image.json()["error"]["message"]
    fake = httpx.post(url, headers=headers, files={"metadata": metadata, "file": ("a.docx", PNG, "application/zip")})
    assert fake.status_code == 400 and "its content is an image" in fake.json()["error"]["message"]
    assert not Document.objects.exists()
