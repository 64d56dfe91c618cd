"""The knowledge admin: a staff member searches a corpus and sees the ranked chunks with their scores."""

from __future__ import annotations

import re

import pytest

from tests.knowledge.test_agent import _indexed_handbook

pytestmark = pytest.mark.django_db(transaction=True)


def _rows(html: str) -> list[str]:
    body = html.split('<table id="hits">', 1)[1].split("<tbody>", 1)[1].split("</tbody>", 1)[0]
    return re.findall(r"<tr>(.*?)</tr>", body, re.S)


def test_a_corpus_is_searched_from_its_page_with_scores_ranks_and_where_each_chunk_lies(admin_client):
    corpus = _indexed_handbook("shop")
    _indexed_handbook("crm", "crm.md")  # another app's copy: never a result
    page = admin_client.get(f"/admin/knowledge_app/corpus/{corpus.id}/change/").content.decode()
    search = f"/admin/knowledge_app/corpus/{corpus.id}/search/"
    assert search in page and search in admin_client.get("/admin/knowledge_app/corpus/").content.decode()

    answer = admin_client.get(search, {"query": "How many days of paid leave?", "top_k": 3, "mode": "hybrid"})
    rows = _rows(answer.content.decode())
    assert answer.status_code == 200 and len(rows) == 3
    assert "25 days of paid leave" in rows[0] and "Employee handbook › Leave" in rows[0] and "handbook.md" in rows[0]
    assert "crm.md" not in answer.content.decode()
    scores = [float(re.findall(r"<td>(-?[0-9.]+)</td>", row)[1]) for row in rows]  # a fused score can be < 0
    assert scores == sorted(scores, reverse=True) and scores[0] > 0

    chinese = admin_client.get(search, {"query": "带薪假期有几天", "top_k": 1, "mode": "vector"})
    assert "二十五天带薪假期" in _rows(chinese.content.decode())[0]  # the handbook's Chinese section
    bad = admin_client.get(search, {"query": "leave", "top_k": 1000, "mode": "hybrid"}).content.decode()
    assert 'id="hits"' not in bad and "100" in bad  # the form says what is wrong; nothing searched


def test_the_search_page_is_for_staff_only(client, django_user_model):
    corpus = _indexed_handbook("shop")
    url = f"/admin/knowledge_app/corpus/{corpus.id}/search/?query=leave"
    assert client.get(url).status_code == 302  # to the login page
    client.force_login(django_user_model.objects.create_user("ada", password="x"))
    assert client.get(url).status_code == 302
