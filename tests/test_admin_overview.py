"""The admin opens on an overview of what is happening (issue 30, item 7): per app the sessions, today's
events and memories; jobs by state with the last failures; whether workers and beat are alive (their
heartbeats, written by real processes here); runs that failed; links into each list. Counts stay cheap on a
big table: exact up to a bound, then PostgreSQL's estimate.

Before: the admin opened on Django's list of models, and nothing said a worker was down.
"""

from __future__ import annotations

import re
import signal
import subprocess
import sys
import time
from datetime import timedelta

import pytest
from django.utils import timezone

from cognizes import overview
from cognizes.infra import heartbeat
from knowledge_app.models import Corpus, Document
from memory_app.models import ConsolidationJob, JobStatus, Memory
from sessions_app.models import Event, Session
from tests.processes import ROOT, database_env
from tracing_app.models import Trace

pytestmark = pytest.mark.django_db(transaction=True)


def _session(app: str, user: str, session_id: str, events: int = 0) -> Session:
    now = timezone.now()
    session = Session.objects.create(
        app_name=app,
        user_id=user,
        session_id=session_id,
        update_time=now,
        create_time=now,
        last_update_time=now.timestamp(),
        version=events + 1,
    )
    for n in range(events):
        Event.objects.create(
            session=session, event_id=f"e{n}", version=n + 2, author="user", timestamp=now.timestamp(), data={}
        )
    return session


def _memory(app: str, text: str, status: str = "active") -> None:
    Memory.objects.create(app_name=app, user_id="ada", text=text, search_text=text, status=status)


def _cell(html: str, app: str) -> str:
    """The app's row of the overview."""
    start = html.index(f'data-app="{app}"')
    return html[start : html.index("</tr>", start)]


@pytest.fixture
def clean_heartbeats():
    heartbeat._redis().delete(heartbeat.KEY)
    yield
    heartbeat._redis().delete(heartbeat.KEY)


def test_the_first_page_says_per_app_what_is_stored_and_what_failed(admin_client, clean_heartbeats):
    _session("shop", "ada", "s1", events=3)
    _session("shop", "bob", "s2", events=1)
    old = _session("shop", "ada", "yesterday", events=2)
    Event.objects.filter(session=old).update(timestamp=time.time() - 3 * 86400)
    _session("crm", "ada", "s3")
    for app, text, status in (
        ("shop", "Ada prefers tea.", "active"),
        ("shop", "Ada moved.", "forgotten"),
        ("crm", "Likes jazz.", "active"),
    ):
        _memory(app, text, status)
    ConsolidationJob.objects.create(
        app_name="shop",
        user_id="ada",
        session_id="s1",
        status=JobStatus.FAILED,
        error="RuntimeError: the model refused",
        finished_at=timezone.now(),
    )
    ConsolidationJob.objects.create(app_name="shop", user_id="bob", session_id="s2", status=JobStatus.QUEUED)
    corpus = Corpus.objects.create(app_name="shop", display_name="Handbook")
    Document.objects.create(
        corpus=corpus,
        app_name="shop",
        display_name="notes.txt",
        content_hash="0" * 64,
        content=b"\x00",
        status="failed",
        error="Could not read notes.txt: a binary file, not text",
    )
    trace = Trace.objects.create(
        trace_id="f" * 32,
        name="invoke_agent shop_agent",
        app_name="shop",
        user_id="ada",
        session_id="s1",
        start_time=timezone.now(),
        end_time=timezone.now(),
        status="error",
    )
    Trace.objects.create(
        trace_id="a" * 32,
        name="invoke_agent fine",
        app_name="shop",
        start_time=timezone.now(),
        end_time=timezone.now(),
        status="ok",
    )
    Trace.objects.create(
        trace_id="b" * 32,
        name="invoke_agent long ago",
        app_name="shop",
        status="error",
        start_time=timezone.now() - timedelta(days=30),
        end_time=timezone.now() - timedelta(days=30),
    )

    html = admin_client.get("/admin/").content.decode()

    shop, crm = _cell(html, "shop"), _cell(html, "crm")
    assert '<a href="/admin/sessions_app/session/?app_name=shop">3</a>' in shop
    assert '<td class="num">4</td>' in shop  # today's events: 3 + 1, not the old session's two
    assert '/admin/memory_app/memory/?app_name=shop&amp;status__exact=active">1</a>' in shop  # the forgotten one not
    assert '?app_name=crm">1</a>' in crm and '<td class="num">0</td>' in crm
    assert "weather" in html  # a registered agent is an app before it has a session
    jobs = html[html.index('id="overview-jobs"') :]
    assert 'data-state="failed"' in jobs and "RuntimeError: the model refused" in jobs
    assert "/admin/memory_app/consolidationjob/?status__exact=queued" in jobs
    traces = html[html.index('id="overview-traces"') : html.index('id="overview-processes"')]
    assert f"/admin/tracing_app/trace/{trace.pk}/change/" in traces
    assert "invoke_agent fine" not in traces and "long ago" not in traces
    assert "No worker is running" in html and "no beat is running" in html  # no heartbeat at all
    documents = html[html.index('id="overview-documents"') :]
    assert "Could not read notes.txt: a binary file" in documents
    assert '/admin/knowledge_app/corpus/?app_name=shop">1</a>' in shop  # one corpus
    assert '/admin/knowledge_app/document/?app_name=shop">1</a>' in shop  # with one document
    assert "Django administration" not in html and "Sessions, memories, tools and traces" in html  # the lists too


def test_big_tables_show_an_estimate_not_a_full_count(admin_client, monkeypatch):
    monkeypatch.setattr(overview, "EXACT_UP_TO", 5)
    for n in range(8):
        _session("big", f"user{n}", "s")
    small = overview.bounded_count(Session.objects.filter(app_name="big", user_id="user1"))

    html = admin_client.get("/admin/").content.decode()

    assert (small.value, small.exact, str(small)) == (1, True, "1")
    assert '?app_name=big">≈' in _cell(html, "big")
    assert str(overview.Count(1_234_567, exact=False)) == "≈1.2M"


def _start(command: list[str], log) -> subprocess.Popen:
    env = {**database_env(), "COGNIZES_HEARTBEAT_SECONDS": "1"}
    return subprocess.Popen(
        [sys.executable, "-m", "celery", "-A", "cognizes", *command],
        cwd=ROOT,
        env=env,
        stdout=log,
        stderr=subprocess.STDOUT,
        start_new_session=True,
    )


def _processes(admin_client) -> tuple[list[tuple[str, str]], str]:
    """The (role, state) of each process the overview lists, and the problem it states."""
    html = admin_client.get("/admin/").content.decode()
    part = html[html.index('id="overview-processes"') : html.index('id="overview-jobs"')]
    problem = re.search(r'<p class="cz-bad">(.*?)</p>', part)
    return re.findall(r'data-role="(\w+)" data-state="(\w+)"', part), problem.group(1) if problem else ""


def _eventually(check, timeout: float = 60) -> None:
    deadline = time.monotonic() + timeout
    while not check():
        assert time.monotonic() < deadline, "not within the time"
        time.sleep(0.5)


@pytest.mark.timeout(180)
def test_a_killed_worker_goes_silent_and_a_stopped_beat_leaves(admin_client, clean_heartbeats, monkeypatch, tmp_path):
    monkeypatch.setattr(heartbeat, "INTERVAL_SECONDS", 1)
    log = (tmp_path / "celery.log").open("w")
    worker = _start(["worker", "--pool", "solo", "-n", "overview@%h", "--without-mingle", "--without-gossip"], log)
    beat = _start(["beat", "--schedule", str(tmp_path / "beat-schedule")], log)
    try:
        _eventually(lambda: _processes(admin_client) == ([("beat", "alive"), ("worker", "alive")], ""))
        assert f"pid {worker.pid}" in admin_client.get("/admin/").content.decode()

        worker.send_signal(signal.SIGKILL)  # the OOM kill: no chance to say goodbye
        _eventually(lambda: _processes(admin_client)[0] == [("beat", "alive"), ("worker", "silent")])
        assert _processes(admin_client)[1].startswith("No worker is running: consolidation jobs wait")
        beat.send_signal(signal.SIGTERM)  # stopped by a person: it leaves the list
        beat.wait(timeout=30)
        _eventually(lambda: _processes(admin_client)[0] == [("worker", "silent")])
        assert "no beat is running" in _processes(admin_client)[1]
    finally:
        for process in (worker, beat):
            if process.poll() is None:
                process.kill()
            process.wait(timeout=30)
        log.close()


def test_the_overview_fits_the_screen_and_its_counts_lead_to_the_lists(browser, live_server, admin_user):
    from selenium.webdriver.common.by import By

    from tests.browser import log_in_as_admin

    _session("shop", "ada", "s1", events=2)
    log_in_as_admin(browser, live_server.url)
    browser.get(live_server.url + "/admin/")
    width, room = browser.execute_script("return [document.body.scrollWidth, window.innerWidth]")
    assert width <= room  # 1400 px

    browser.find_element(By.CSS_SELECTOR, 'tr[data-app="shop"] td a').click()
    assert "/admin/sessions_app/session/?app_name=shop" in browser.current_url
    assert [a.text for a in browser.find_elements(By.CSS_SELECTOR, "#result_list tbody th a")] != []


# Computed in the page: each status word's text colour and the colour it is drawn on (the nearest ancestor with a
# background), and every word of a header or cell that the layout broke across lines or that sticks out of its cell
# (but for a host name: one long word, it may break).
_STATUS_COLOURS = """
const opaque = (element) => {
  for (let e = element; e; e = e.parentElement) {
    const background = getComputedStyle(e).backgroundColor;
    if (!/^rgba\\(.*, 0\\)$/.test(background) && background !== 'transparent') return background;
  }
  return 'rgb(255, 255, 255)';
};
return [...document.querySelectorAll('.cz-overview .cz-good, .cz-overview .cz-bad')].map(
  (e) => [e.textContent.trim(), getComputedStyle(e).color, opaque(e)]);
"""
_BROKEN_HEADER_WORDS = """
const broken = [];
for (const th of document.querySelectorAll('.cz-overview th, .cz-overview td:not(.cz-host)')) {
  const cell = th.getBoundingClientRect();
  const walker = document.createTreeWalker(th, NodeFilter.SHOW_TEXT);
  for (let node = walker.nextNode(); node; node = walker.nextNode()) {
    for (const match of node.textContent.matchAll(/\\S+/g)) {
      const range = document.createRange();
      range.setStart(node, match.index);
      range.setEnd(node, match.index + match[0].length);
      const lines = new Set([...range.getClientRects()].map((r) => Math.round(r.top)));
      const word = range.getBoundingClientRect();
      if (lines.size > 1 || word.left < cell.left - 0.5 || word.right > cell.right + 0.5) broken.push(match[0]);
    }
  }
}
return broken;
"""


def _rgb(css: str) -> tuple[float, float, float]:
    return tuple(float(part) for part in re.findall(r"[\d.]+", css)[:3])  # type: ignore[return-value]


def _contrast(foreground: str, background: str) -> float:
    """WCAG 2's contrast ratio of two sRGB colours."""

    def luminance(css: str) -> float:
        linear = [c / 255 / 12.92 if c / 255 <= 0.04045 else ((c / 255 + 0.055) / 1.055) ** 2.4 for c in _rgb(css)]
        return 0.2126 * linear[0] + 0.7152 * linear[1] + 0.0722 * linear[2]

    light, dark = sorted((luminance(foreground), luminance(background)), reverse=True)
    return (light + 0.05) / (dark + 0.05)


@pytest.mark.parametrize("theme", ["light", "dark"])
@pytest.mark.parametrize("window_width", [1280, 800])
def test_status_words_and_headers_read_at_common_widths(
    browser, live_server, admin_user, clean_heartbeats, tmp_path, window_width, theme
):
    """Issue 43, item 4: "alive" was drawn in the success message's background colour (#dfd on white: invisible),
    and Django's dashboard CSS gives every header cell the whole width and breaks words anywhere, so the other
    headers stood one letter a line. Each status word reads at WCAG AA (4.5:1) and no word of a header or cell
    is broken or sticks out of it, at 1280 and 800 pixels, in the light and the dark theme."""
    from tests.browser import log_in_as_admin

    heartbeat._redis().hset(heartbeat.KEY, "worker a-host-with-a-long-name 123", repr(time.time()))
    heartbeat._redis().hset(heartbeat.KEY, "beat a-host-with-a-long-name 124", repr(time.time() - 3600))
    _session("shop", "ada", "s1", events=2)
    browser.set_window_size(window_width, 900)
    log_in_as_admin(browser, live_server.url)
    browser.get(live_server.url + "/admin/")
    browser.execute_script("document.documentElement.dataset.theme = arguments[0]", theme)
    browser.save_screenshot(str(tmp_path / f"overview-{window_width}-{theme}.png"))  # for a person, on failure

    statuses = browser.execute_script(_STATUS_COLOURS)
    words = {text.split(",")[0] for text, _, _ in statuses}
    assert {"alive", "silent", "None: every run this week ended without an error."} <= words
    for text, colour, background in statuses:
        assert _contrast(colour, background) >= 4.5, f"{text!r}: {colour} on {background}"
    assert browser.execute_script(_BROKEN_HEADER_WORDS) == []
    width, room = browser.execute_script("return [document.body.scrollWidth, window.innerWidth]")
    assert width <= room  # nothing sticks out sideways (the process table did at 800 px)
