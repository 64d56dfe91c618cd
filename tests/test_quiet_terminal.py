"""Issue 43 item 7: normal use prints no traceback and no third-party warning flood.

Before: indexing one damaged-but-readable PDF printed a pypdf warning line per damaged object (4,236 for
one file), each through the root logger to the terminal of ``cognizes run``. (PDFs are read with PDFium since issue 44,
which reads past such damage silently; the test stays, for whatever reader comes next.)
"""

from __future__ import annotations

import io
import logging
import logging.config
from collections.abc import Iterator

import httpx
import pytest
from django.conf import settings

from cognizes.access.services import do_create_api_key
from knowledge_app import ingestion
from knowledge_app.models import Document, DocumentStatus
from knowledge_app.services import do_add_document, do_create_corpus
from tests.knowledge.files import pdf_bytes
from vertex_app.services import do_get_or_create_engine

pytestmark = pytest.mark.django_db(transaction=True)

PAGES = 60


@pytest.fixture
def terminal() -> Iterator[io.StringIO]:
    """What settings.LOGGING's console handler prints (the terminal of ``cognizes run``), for this test.

    Not ``caplog``: pytest hangs its handler on every logger, printed or not. The configuration is set again, as a
    server process starts with it: an earlier test's in-process Celery worker sets its own levels.
    """
    logging.config.dictConfig(settings.LOGGING)
    [console] = [h for h in logging.getLogger().handlers if type(h) is logging.StreamHandler]
    printed = io.StringIO()
    before = console.setStream(printed)
    yield printed
    console.setStream(before)  # type: ignore[arg-type]


def _damaged_pdf() -> bytes:
    """A PDF every reader opens, whose every page dictionary names a key twice: pypdf warned once a page."""
    data = pdf_bytes([[f"Page {n}: the quarterly report."] for n in range(PAGES)])
    return data.replace(b"/Type /Page /Parent", b"/Type /Page /Rotate 0 /Rotate 0 /Parent")


def test_indexing_a_damaged_but_readable_pdf_prints_a_line_or_two_not_one_a_problem(terminal):
    corpus = do_create_corpus(app_name="shop", display_name="Reports")
    document = do_add_document(corpus, data=_damaged_pdf(), filename="report.pdf").document

    ingestion.do_ingest(document.id)

    assert Document.objects.get(pk=document.pk).status == DocumentStatus.ACTIVE
    lines = terminal.getvalue().splitlines()
    assert len(lines) <= 2, lines  # the ingestion's own line or two: the PDF reader (PDFium, issue 44) prints nothing


def test_a_missing_session_is_a_404_without_a_traceback(asgi_server, terminal):
    engine = do_get_or_create_engine(app_name="shop")
    _, key = do_create_api_key(name="test", app_name="shop")
    headers = {"Authorization": f"Bearer {key}", "x-goog-api-key": key}

    for path in (
        "/api/v1/apps/shop/users/ada/sessions/missing/",
        "/api/v1/apps/shop/users/ada/sessions/missing/events/",
        f"/v1beta1/reasoningEngines/{engine.engine_id}/sessions/404404",
        f"/v1beta1/reasoningEngines/{engine.engine_id}/sessions/404404/events",
    ):
        assert httpx.get(asgi_server + path, headers=headers, timeout=30).status_code == 404

    assert "Traceback" not in terminal.getvalue() and "SessionNotFound" not in terminal.getvalue()
