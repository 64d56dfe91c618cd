"""The travel handbook the weather agent searches: the Markdown files of ``handbook/``, one corpus of the app.

Shipped as files, not strings in code, so they read as documents in the repository
and go through an upload's path (stored, parsed by their headings, chunked, embedded).
"""

from __future__ import annotations

from pathlib import Path

from demo_agents.weather.tools import APP_NAME
from knowledge_app import services
from knowledge_app.models import Document, DocumentStatus

CORPUS = "Travel handbook"
"""The corpus's display name: what the agent's runner names in ``knowledge=[…]`` (looked up when searched)."""
FILES = Path(__file__).with_name("handbook")


def add_handbook() -> list[Document]:
    """Create the handbook corpus and add its files, unless there; the corpus's documents still to be indexed.

    Idempotent as ``register`` is: the same bytes are the document already there
    (``do_add_document``). Pending documents are returned, not indexed, so that the
    caller indexes them in its own process rather than waiting for a worker.
    """
    corpus = services.corpora(APP_NAME).filter(display_name=CORPUS).first() or services.do_create_corpus(
        app_name=APP_NAME,
        display_name=CORPUS,
        description="What to pack per climate, how to read a forecast, and when to visit four cities.",
    )
    for path in sorted(FILES.glob("*.md")):
        services.do_add_document(corpus, data=path.read_bytes(), filename=path.name, mime_type="text/markdown")
    return list(
        services.documents(APP_NAME, corpus.id, user_id=None).filter(status=DocumentStatus.PENDING).order_by("id")
    )
