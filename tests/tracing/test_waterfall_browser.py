"""The waterfall in a real headless browser: bars for every span, attributes on click.

Needs Debian's chromium and chromium-driver (``apt-get install chromium chromium-driver``)
and the ``selenium`` package; skipped when either is missing.
"""

from __future__ import annotations

import pytest

from tests.browser import log_in_as_admin
from tests.tracing.factories import record_trace

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.mark.parametrize("window_width", [1400, 1920])
def test_the_waterfall_renders_the_spans_of_a_trace(browser, live_server, admin_user, window_width):
    from selenium.webdriver.common.by import By

    trace_id = record_trace(session_id="s1", failing_tool=True)
    browser.set_window_size(window_width, 900)
    log_in_as_admin(browser, live_server.url)
    browser.get(f"{live_server.url}/admin/tracing_app/trace/{trace_id}/change/")

    rows = browser.find_elements(By.CSS_SELECTOR, ".cz-span")
    assert [row.find_element(By.CSS_SELECTOR, ".cz-name").text for row in rows] == [
        "invoke_agent weather_agent",
        "generate_content scripted-offline",
        "execute_tool remember_city",
    ]
    track = rows[0].find_element(By.CSS_SELECTOR, ".cz-track").rect
    assert track["width"] > window_width * 0.3  # the bars' column is a good part of the page (it was a 2 px sliver)
    bars = [row.find_element(By.CSS_SELECTOR, ".cz-bar").rect for row in rows]
    assert bars[0]["width"] == pytest.approx(track["width"], abs=2)  # the root spans the whole run
    assert bars[2]["x"] - track["x"] == pytest.approx(track["width"] * 0.4, abs=2)  # the tool starts at 40 ms
    assert bars[2]["width"] == pytest.approx(track["width"] * 0.2, abs=2)  # and lasts 20 ms
    indent = [row.find_element(By.CSS_SELECTOR, ".cz-name").value_of_css_property("padding-left") for row in rows]
    assert indent[1] == indent[2] != indent[0]  # children nested under the agent
    assert "cz-error" in rows[2].find_element(By.CSS_SELECTOR, ".cz-bar").get_attribute("class")

    attributes = rows[2].find_element(By.CSS_SELECTOR, ".cz-attributes")
    assert not attributes.is_displayed()
    rows[2].find_element(By.CSS_SELECTOR, "summary").click()
    assert attributes.is_displayed()
    assert '"gen_ai.tool.name": "remember_city"' in attributes.text
    assert '"status_message": "RuntimeError: boom"' in attributes.text
