"""Issue 41 J2: a document asking for more work than the limits allow ends ``failed`` at once, saying which limit
and the setting that moves it; a chunking no document can be cut with is a 400 naming the field.

Before, parsing ran without bounds: a small DOCX unpacked to tens of megabytes of paragraphs, a PDF of a few KB
declared thousands of pages, and ``chunk_size`` 1 cut a document into as many chunks as it has words, each then
embedded (16 minutes of one worker for a 4 KB PDF).
"""

from __future__ import annotations

import hashlib
import io
import time
import zipfile

import httpx
import pytest
from django.test import override_settings

from cognizes.access import limits
from knowledge_app import ingestion
from knowledge_app.chunking import chunk
from knowledge_app.models import Corpus, Document, DocumentStatus
from knowledge_app.parsing import parse
from knowledge_app.services import do_add_document, do_create_corpus
from tests.api.conftest import client_for
from tests.knowledge.files import docx_bytes, pdf_of
from tests.vertex.conftest import APP

pytestmark = pytest.mark.django_db(transaction=True)

WORDS = " ".join(f"badge{n}" for n in range(30_000))


def expanding_docx(paragraphs: int) -> bytes:
    """A real DOCX whose body is ``paragraphs`` short paragraphs: a few KB that unpack to 45 bytes each."""
    original = zipfile.ZipFile(io.BytesIO(docx_bytes("x")))
    xml = original.read("word/document.xml").decode()
    head, tail = xml.split("<w:body>")[0] + "<w:body>", "</w:body>" + xml.split("</w:body>")[1]
    body = (head + "<w:p><w:r><w:t>leave days badge</w:t></w:r></w:p>" * paragraphs + tail).encode()
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w", compression=zipfile.ZIP_DEFLATED) as archive:
        for entry in original.infolist():
            archive.writestr(entry.filename, body if entry.filename == "word/document.xml" else original.read(entry))
    return out.getvalue()


def many_pages_pdf(pages: int) -> bytes:
    """A PDF of a few KB whose page tree names one page ``pages`` times: a reader sees that many pages."""
    content = b"BT /F1 12 Tf 72 720 Td (Every employee keeps a badge.) Tj ET"
    objects = [
        b"<< /Type /Catalog /Pages 2 0 R >>",
        b"<< /Type /Pages /Kids [" + b"3 0 R " * pages + b"] /Count %d >>" % pages,
        b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Contents 4 0 R "
        b"/Resources << /Font << /F1 << /Type /Font /Subtype /Type1 /BaseFont /Helvetica >> >> >> >>",
        b"<< /Length %d >>\nstream\n" % len(content) + content + b"\nendstream",
    ]
    return pdf_of(objects)


def _indexed(data: bytes, filename: str, **chunking: int) -> tuple[Document, float]:
    corpus = Corpus.objects.create(app_name="shop", display_name="Files")
    document = do_add_document(corpus, data=data, filename=filename, **chunking).document
    started = time.monotonic()
    ingestion.do_ingest(document.id)
    document.refresh_from_db()
    return document, time.monotonic() - started


@override_settings(COGNIZES_KNOWLEDGE_MAX_EXPANDED_BYTES=5 * 1024 * 1024)
def test_a_small_docx_that_unpacks_past_the_limit_fails_at_once_with_the_reason():
    bomb = expanding_docx(200_000)  # 11 MB of paragraphs in about 90 KB
    assert len(bomb) < 200_000
    document, took = _indexed(bomb, "bomb.docx")
    assert document.status == DocumentStatus.FAILED
    assert "would unpack to 11 MB, more than the 5 MB allowed (COGNIZES_KNOWLEDGE_MAX_EXPANDED_BYTES)" in (
        document.error
    ), document.error
    assert took < 2.0 and not document.chunks.exists()


@override_settings(COGNIZES_KNOWLEDGE_MAX_MARKUP_BYTES=1024 * 1024)
def test_a_docx_of_more_xml_than_allowed_fails_before_it_is_parsed():
    """Its XML parsed into a tree takes some 20 times its size in memory: 50 MB of paragraphs peaked at 1 GB."""
    document, took = _indexed(expanding_docx(50_000), "paragraphs.docx")  # 2.3 MB of XML, within the 50 MB
    assert document.status == DocumentStatus.FAILED
    assert "the .docx holds 4 MB of XML, more than the 1 MB allowed (COGNIZES_KNOWLEDGE_MAX_MARKUP_BYTES)" in (
        document.error
    ), document.error
    assert took < 2.0


@override_settings(COGNIZES_KNOWLEDGE_PARSE_SECONDS=1)
def test_a_document_that_parses_past_its_time_fails_with_the_reason():
    document, took = _indexed(expanding_docx(150_000), "long.docx")
    assert document.status == DocumentStatus.FAILED
    assert "took longer than the 1 seconds a document may take (COGNIZES_KNOWLEDGE_PARSE_SECONDS)" in (
        document.error
    ), document.error
    assert took < 15  # the XML is read whole first (lxml); then the deadline stops it within a paragraph


def test_the_parse_deadline_stops_parsing_and_cutting_within_its_seconds():
    text = "\n\n".join(["Every employee keeps a badge."] * 400_000).encode()
    started = time.monotonic()
    with pytest.raises(limits.LimitExceeded, match=r"longer than the 0\.5 seconds"), limits.parse_deadline(0.5):
        chunk(parse(text, filename="long.md"), size=8, overlap=0)
    assert time.monotonic() - started < 5


def test_a_pdf_of_more_pages_than_allowed_fails_at_once_naming_the_limit():
    pdf = many_pages_pdf(5_000)
    assert len(pdf) < 40_000
    document, took = _indexed(pdf, "pages.pdf")
    assert document.status == DocumentStatus.FAILED
    assert "the PDF has 5000 pages, more than the 2000 a document may have (COGNIZES_KNOWLEDGE_MAX_PAGES)" in (
        document.error
    ), document.error
    assert took < 5


@override_settings(COGNIZES_KNOWLEDGE_MAX_CHUNKS=50)
def test_chunk_size_1_on_a_long_document_fails_naming_the_chunk_limit_before_embedding_anything():
    document, took = _indexed(WORDS[:3000].encode(), "words.txt", chunk_size=1)
    assert document.status == DocumentStatus.FAILED
    assert (
        "cut into chunks of 1 tokens it would make more than 50 chunks, the most a document may have "
        "(COGNIZES_KNOWLEDGE_MAX_CHUNKS): index it with a larger chunk size"
    ) in document.error, document.error
    assert took < 5 and not document.chunks.exists()


def test_the_chunk_limit_stops_cutting_as_soon_as_it_is_certain():
    """30,000 words at chunk_size 1 would be 30,000 chunks: refused after the first 10,001 tokens are read."""
    started = time.monotonic()
    with pytest.raises(limits.LimitExceeded, match="more than 10000 chunks"):
        chunk(parse(WORDS.encode(), filename="words.txt"), size=1, overlap=0, max_chunks=limits.max_chunks())
    assert time.monotonic() - started < 5


def test_a_chunking_out_of_range_or_not_finite_is_a_400_naming_the_field(server):
    api = client_for("shop")
    huge = api.post(
        "/api/v1/apps/shop/corpora/", '{"display_name": "x", "chunk_size": 1e400}', content_type="application/json"
    )
    # Refused as it is parsed (cognizes.access.parsers), before any field is read: JSON's 1e400 is no number one can
    # store.
    assert huge.status_code == 400 and "must be finite" in huge.json()["error"]["message"], huge.json()
    corpus_id = api.post("/api/v1/apps/shop/corpora/", {"display_name": "x"}, format="json").json()["id"]
    url = f"/api/v1/apps/shop/corpora/{corpus_id}/documents/?filename=a.txt&chunk_size=2000000"
    too_big = api.generic("POST", url, b"some text", content_type="text/plain")
    assert too_big.status_code == 400 and "chunk_size" in str(too_big.json()), too_big.json()

    corpus = do_create_corpus(app_name=APP, display_name="Handbook")
    rag = httpx.Client(base_url=server.base_url, headers={"x-goog-api-key": server.key}, timeout=30)
    refused = rag.post(
        f"v1beta1/projects/p/locations/l/ragCorpora/{corpus.id}/ragFiles:import",
        content=(
            '{"importRagFilesConfig": {"ragFileTransformationConfig": {"ragFileChunkingConfig": '
            '{"fixedLengthChunking": {"chunkSize": 1e400}}}}}'
        ),
        headers={"Content-Type": "application/json"},
    )
    assert refused.status_code == 400 and "must be finite" in refused.json()["error"]["message"], refused.text
    for size in ("-1", "2000000", '"NaN"'):
        body = (
            '{"importRagFilesConfig": {"gcsSource": {"uris": ["gs://b/a.txt"]}, "ragFileTransformationConfig": '
            '{"ragFileChunkingConfig": {"fixedLengthChunking": {"chunkSize": ' + size + "}}}}}"
        )
        answer = rag.post(
            f"v1beta1/projects/p/locations/l/ragCorpora/{corpus.id}/ragFiles:import",
            content=body,
            headers={"Content-Type": "application/json"},
        )
        assert answer.status_code == 400 and "chunk_size" in answer.json()["error"]["message"], (size, answer.text)
    assert not Document.objects.exists()


def test_within_the_limits_a_document_is_indexed_as_before():
    document, _ = _indexed(expanding_docx(200), "small.docx")
    assert document.status == DocumentStatus.ACTIVE and document.chunk_count >= 1
    assert hashlib.sha256(bytes(document.content)).hexdigest() == document.content_hash
