"""Issue 44 item 4: an upload no parser can read is refused at once, and nothing is stored.

Before: a PNG (no OCR), or random bytes named ``.pdf``, answered 201 ``pending``; the document went ``failed`` on a
worker later. Now a type not taken answers 415 listing the types taken, and bytes that are not the type their name
declares answer 400, over the raw body and the multipart form alike.
"""

from __future__ import annotations

import io
import os
import zipfile

import pytest
from django.test import override_settings

from knowledge_app.models import Document
from tests.api.conftest import client_for
from tests.knowledge.files import docx_bytes, epub_bytes, pdf_bytes, pptx_bytes, xlsx_bytes

pytestmark = pytest.mark.django_db(transaction=True)

BASE = "/api/v1/apps/shop/corpora/"
PNG = b"\x89PNG\r\n\x1a\n" + bytes(64)


def _plain_zip() -> bytes:
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w") as archive:
        archive.writestr("notes.txt", "a zip, but not a Word document")
    return out.getvalue()


@pytest.fixture
def upload():
    api = client_for("shop")
    corpus_id = api.post(BASE, {"display_name": "Handbook"}, format="json").json()["id"]

    def send(data: bytes, filename: str, content_type: str = "application/octet-stream", *, form: bool = False):
        if form:
            return api.post(
                f"{BASE}{corpus_id}/documents/",
                {"file": _named(data, filename, content_type)},
                format="multipart",
            )
        return api.generic("POST", f"{BASE}{corpus_id}/documents/?filename={filename}", data, content_type=content_type)

    return send


def _named(data: bytes, filename: str, content_type: str):
    from django.core.files.uploadedfile import SimpleUploadedFile

    return SimpleUploadedFile(filename, data, content_type=content_type)


@pytest.mark.parametrize("form", [False, True], ids=["raw body", "multipart"])
@pytest.mark.parametrize(
    ("data", "filename", "content_type"),
    [
        (PNG, "scan.png", "image/png"),
        (b"\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1 Word 97", "old.doc", "application/msword"),
        (os.urandom(256), "blob.bin", "application/octet-stream"),
        (os.urandom(256), "", "application/octet-stream"),
    ],
)
def test_a_type_not_taken_is_refused_at_once_with_the_types_taken(upload, data, filename, content_type, form):
    refused = upload(data, filename or "blob", content_type, form=form)
    assert refused.status_code == 415, refused.content
    message = refused.json()["error"]["message"]
    for taken in (".txt", ".md", ".pdf", ".docx", ".pptx", ".xlsx", ".epub", ".html", ".csv"):
        assert taken in message, message
    if filename == "scan.png":
        assert "COGNIZES_KNOWLEDGE_OCR" in message
    assert not Document.objects.exists()


@pytest.mark.parametrize("form", [False, True], ids=["raw body", "multipart"])
@pytest.mark.parametrize(
    ("data", "filename", "looks_like"),
    [
        (os.urandom(2048).replace(b"%PDF-", b"xxxxx"), "report.pdf", "not a PDF: binary data of no format taken"),
        (PNG, "report.pdf", "an image"),
        (_plain_zip(), "report.docx", "a zip archive of another kind"),
        (docx_bytes("Hello."), "deck.pptx", "a Word document"),
        (pdf_bytes([["Hello."]]), "sheet.xlsx", "a PDF"),
        (b"\x00\x01\x02 not text \x00", "notes.txt", "not text in UTF-8"),
        ("Grüße".encode("latin-1"), "notes.md", "save it as UTF-8"),
    ],
)
def test_bytes_that_are_not_their_declared_type_are_refused_and_say_what_they_are(
    upload, data, filename, looks_like, form
):
    refused = upload(data, filename, form=form)
    assert refused.status_code == 400, refused.content
    assert looks_like in str(refused.json()["error"]["details"])
    assert not Document.objects.exists()


@pytest.mark.parametrize(
    ("data", "filename"),
    [
        (pptx_bytes([("Plan", ["Ship it."])]), "deck.pptx"),
        (xlsx_bytes({"Sheet": [["a"], ["b"]]}), "book.xlsx"),
        (epub_bytes(["<p>Once.</p>"]), "novel.epub"),
        (pdf_bytes([["Hello."]]), "report.pdf"),
        (b"\xef\xbb\xbfplain text with a BOM", "notes.txt"),
    ],
)
def test_files_of_the_types_taken_are_taken(upload, data, filename):
    assert upload(data, filename).status_code == 201


@override_settings(COGNIZES_KNOWLEDGE_OCR=True)
def test_with_ocr_on_an_image_is_taken(upload):
    pytest.importorskip("rapidocr_onnxruntime")
    assert upload(PNG, "scan.png", "image/png").status_code == 201
    assert upload(PNG, "", "image/png").status_code == 200  # the same bytes: its MIME type names it without a name
