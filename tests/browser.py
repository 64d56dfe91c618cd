"""Helpers for the Selenium tests (the ``browser`` fixture is in tests/conftest.py)."""

from __future__ import annotations

from typing import Any


def log_in_as_admin(browser: Any, base_url: str) -> None:
    """Log in as pytest-django's ``admin_user`` and wait until the admin has let us in."""
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.ui import WebDriverWait

    browser.get(base_url + "/admin/login/")
    browser.find_element(By.NAME, "username").send_keys("admin")
    browser.find_element(By.NAME, "password").send_keys("password")
    browser.find_element(By.CSS_SELECTOR, "input[type=submit]").click()
    # The click does not wait for the POST: a page opened at once could still get the login form.
    WebDriverWait(browser, 30).until(lambda _: "/login/" not in browser.current_url)
