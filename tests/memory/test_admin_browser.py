"""Searching memories from the admin page's own controls, in a real headless browser.

The filter links send ``?app_name=…&user_id=…``; the search used to read only
``app_name__exact``, so a person's clicks gave a text-only search with 0 results.
"""

from __future__ import annotations

import pytest

from memory_app.services import Candidate, do_remember
from tests.browser import log_in_as_admin

pytestmark = pytest.mark.django_db(transaction=True)

APP = "admin_mem"


def test_clicking_the_filters_then_searching_ranks_the_users_memories_by_meaning(browser, live_server, admin_user):
    from selenium.webdriver.common.by import By
    from selenium.webdriver.common.keys import Keys
    from selenium.webdriver.support.expected_conditions import staleness_of
    from selenium.webdriver.support.ui import WebDriverWait

    texts = ("I prefer Celsius for temperatures.", "My car is a blue Fiat.", "I am allergic to peanuts.")
    do_remember(app_name=APP, user_id="ada", candidates=[Candidate(text=t) for t in texts], cause="test")
    do_remember(app_name=APP, user_id="bob", candidates=[Candidate(text="Bob likes Fahrenheit.")], cause="test")
    do_remember(app_name="other", user_id="ada", candidates=[Candidate(text="Elsewhere.")], cause="test")
    log_in_as_admin(browser, live_server.url)
    browser.get(f"{live_server.url}/admin/memory_app/memory/")

    def search(query: str) -> tuple[list[str], list[str]]:
        page = browser.find_element(By.TAG_NAME, "html")
        box = browser.find_element(By.ID, "searchbar")
        box.clear()
        box.send_keys(query, Keys.ENTER)
        # ENTER submits the form without waiting for the answer: read the new page, not the one leaving.
        WebDriverWait(browser, 30).until(staleness_of(page))
        WebDriverWait(browser, 30).until(lambda _: browser.execute_script("return document.readyState") == "complete")
        rows = [cell.text for cell in browser.find_elements(By.CSS_SELECTOR, "#result_list tbody .field-text")]
        return rows, [m.text for m in browser.find_elements(By.CSS_SELECTOR, ".messagelist li")]

    rows, notes = search("which temperature unit does she like")
    assert rows == [] and any(n.startswith("Text-only search: choose one app and one user") for n in notes)

    filters = browser.find_element(By.ID, "changelist-filter")
    filters.find_element(By.LINK_TEXT, APP).click()
    browser.find_element(By.ID, "changelist-filter").find_element(By.LINK_TEXT, "ada").click()
    assert "app_name=admin_mem" in browser.current_url and "user_id=ada" in browser.current_url

    rows, notes = search("which temperature unit does she like")
    assert rows[0] == "I prefer Celsius for temperatures." and set(rows) == set(texts)
    assert any(n.startswith("Hybrid search (meaning and keywords) of ada's memories in admin_mem") for n in notes)
