"""Swagger UI at /api/docs/ works without internet: every file it loads is served by Cognizes.

Before: the page loaded Swagger UI from a CDN ("latest", unpinned) and was blank offline.
"""

from __future__ import annotations

from urllib.parse import urlsplit

import pytest

pytestmark = pytest.mark.django_db(transaction=True)


def test_swagger_ui_shows_the_operations_from_its_own_files(browser, live_server):
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.ui import WebDriverWait

    browser.get(f"{live_server.url}/api/docs/")
    WebDriverWait(browser, 30).until(lambda b: len(b.find_elements(By.CSS_SELECTOR, ".opblock")) >= 20)

    summaries = [e.text for e in browser.find_elements(By.CSS_SELECTOR, ".opblock-summary-path")]
    assert "/api/v1/apps/{app_name}/users/{user_id}/memories/search/" in [s.replace("\u200b", "") for s in summaries]
    loaded = browser.execute_script("return performance.getEntriesByType('resource').map(e => e.name)")
    hosts = {urlsplit(url).netloc for url in [browser.current_url, *loaded]}
    assert hosts == {urlsplit(live_server.url).netloc}, loaded
