"""Documents and corpora refuse what PostgreSQL cannot keep with a 400 that says what is wrong (issue 41 K).

Each case was a 500: a name or media type longer than its column (DataError), metadata holding an
infinite number or NUL (jsonb refuses both), given in the upload's query as JSON that Python's parser
reads without the API body's checks.
"""

from __future__ import annotations

import json
from urllib.parse import quote

import pytest

from knowledge_app import services
from knowledge_app.models import Corpus, Document
from tests.api.conftest import client_for

pytestmark = pytest.mark.django_db

APP = "shop"


@pytest.fixture
def corpus() -> Corpus:
    return services.do_create_corpus(app_name=APP, display_name="handbook")


@pytest.mark.parametrize(
    ("query", "content_type", "says"),
    [
        (f"filename={'f' * 3000}.txt", "text/plain", "at most 512 characters"),
        (f"filename=a.txt&display_name={'d' * 600}", "text/plain", "at most 512 characters"),
        ("filename=a.txt", "text/" + "p" * 300, "at most 255 characters"),
        ("filename=a.txt&metadata=" + quote('{"year": 1e400}'), "text/plain", "finite"),
        ("filename=a.txt&metadata=" + quote('{"year": -1e400}'), "text/plain", "finite"),
        ("filename=a.txt&metadata=" + quote('{"team": "a\\u0000b"}'), "text/plain", "NUL"),
        ("filename=a.txt&metadata=" + quote('{"tags": ["x", "\\u0000"]}'), "text/plain", "NUL"),
    ],
)
def test_an_upload_postgresql_cannot_keep_is_a_400_that_says_why_and_stores_nothing(corpus, query, content_type, says):
    api = client_for(APP)

    response = api.post(
        f"/api/v1/apps/{APP}/corpora/{corpus.id}/documents/?{query}",
        b"Leave is 25 days a year.",
        content_type=content_type,
    )

    assert response.status_code == 400, response.content[:300]
    assert says in json.dumps(response.json()["error"]["details"])
    assert Document.objects.count() == 0


def test_metadata_set_later_and_search_conditions_refuse_an_infinite_number_too(corpus):
    """The store checks metadata itself: they arrive by ways the API body's parser never sees (a query, a form part)."""
    added = services.do_add_document(
        corpus, data=b"Leave is 25 days a year.", filename="a.txt", metadata={"year": 2025}
    )

    with pytest.raises(services.KnowledgeError, match="finite"):
        services.do_set_metadata(added.document, {"year": float("inf")})
    with pytest.raises(services.KnowledgeError, match="NUL"):
        services.do_set_metadata(added.document, {"team": "a\x00b"})
    assert Document.objects.get(id=added.document.id).metadata == {"year": 2025}
    from knowledge_app.metadata import InvalidMetadata, matching

    with pytest.raises(InvalidMetadata, match="finite"):
        matching([("year", ">", float("nan"))])


def test_a_corpus_named_longer_than_is_kept_is_refused_naming_the_limit():
    with pytest.raises(services.KnowledgeError, match="at most 512 characters"):
        services.do_create_corpus(app_name=APP, display_name="d" * 600)
    assert Corpus.objects.count() == 0
