"""The session's admin page follows the session: events stored after it loaded appear without a reload.

The browser test needs Debian's chromium and chromium-driver and the ``selenium``
package; it is skipped when either is missing.
"""

from __future__ import annotations

import pytest
from asgiref.sync import async_to_sync

from cognizes.adk import PostgresSessionService
from sessions_app.models import Session
from tests.browser import log_in_as_admin
from tests.sessions.test_contract import text_event

pytestmark = pytest.mark.django_db(transaction=True)

APP = "admin_live"
HOSTILE = "<img src=x onerror=\"document.title='pwned'\">"


def _create(session_id: str, *texts: str):
    service = PostgresSessionService()

    async def build():
        session = await service.create_session(app_name=APP, user_id="ada", session_id=session_id)
        for text in texts:
            await service.append_event(session, text_event(text))
        return session

    return async_to_sync(build)()


def _change_url(session_id: str) -> str:
    pk = Session.objects.get(app_name=APP, user_id="ada", session_id=session_id).pk
    return f"/admin/sessions_app/session/{pk}/change/"


def test_the_change_page_follows_the_stream_from_the_version_it_shows(admin_client):
    _create("s1", "hello", "hi there")
    version = Session.objects.get(session_id="s1").version

    html = admin_client.get(_change_url("s1")).content.decode()

    assert version == 3  # created at 1, one per event
    assert 'id="live-events"' in html
    assert f'data-stream-url="/api/v1/apps/{APP}/users/ada/sessions/s1/events/stream/"' in html
    assert f'data-after-version="{version}"' in html


def test_a_session_id_without_an_api_url_gets_no_live_panel(admin_client):
    """A session stored before ids were checked (issue 30 refuses '/' at creation) still opens, without a panel."""
    _create("legacy", "hello")
    Session.objects.filter(app_name=APP, session_id="legacy").update(session_id="a/b")

    response = admin_client.get(_change_url("a/b"))

    assert response.status_code == 200
    assert 'id="live-events"' not in response.content.decode()


def test_new_events_appear_on_an_open_change_page_in_order(asgi_server, browser, admin_user):
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.ui import WebDriverWait

    session = _create("s1", "before the page loaded")
    log_in_as_admin(browser, asgi_server)
    browser.get(asgi_server + _change_url("s1"))
    panel = browser.find_element(By.ID, "live-events")
    status = panel.find_element(By.CSS_SELECTOR, ".cz-live-status")
    WebDriverWait(browser, 30).until(lambda _: status.text == "live: listening for new events")
    assert panel.find_elements(By.CSS_SELECTOR, ".cz-live-event") == []  # the inline shows what was there
    # Not an empty table: it says that it is listening (before: headers over nothing until a turn ran).
    assert "Listening" in panel.find_element(By.CSS_SELECTOR, ".cz-live-empty").text

    service = PostgresSessionService()
    async_to_sync(service.append_event)(session, text_event("first live"))
    async_to_sync(service.append_event)(session, text_event(HOSTILE, author="weather_agent"))

    WebDriverWait(browser, 30).until(lambda _: len(panel.find_elements(By.CSS_SELECTOR, ".cz-live-event")) == 2)
    rows = [
        [cell.text for cell in row.find_elements(By.TAG_NAME, "td")]
        for row in panel.find_elements(By.CSS_SELECTOR, ".cz-live-event")
    ]
    assert [(version, author, preview) for version, _, author, preview in rows] == [
        ("3", "user", "first live"),
        ("4", "weather_agent", HOSTILE),
    ]
    assert all(row[1].endswith("+00:00") for row in rows)
    assert panel.find_elements(By.TAG_NAME, "img") == [] and browser.title != "pwned"  # shown as text
    assert status.text == "live: listening for new events"
    assert panel.find_elements(By.CSS_SELECTOR, ".cz-live-empty") == []
