"""The sandbox daemon as the API shows it: refused without bubblewrap (with what to install, never unconfined),
unavailable without a daemon, and an idle interpreter evicted and reported as Vertex does (issue 46 item 3)."""

from __future__ import annotations

import os
import shutil
import threading

import pytest
from google.genai import errors as genai_errors

from cognizes.infra.local import VAR_DIR
from tests.sandbox.conftest import Box, uid_base
from tools_app import sandbox_daemon, sandbox_isolation

pytestmark = pytest.mark.django_db(transaction=True)


def test_a_host_without_bubblewrap_refuses_sandboxes_and_names_what_to_install(asgi_server, tmp_path, monkeypatch):
    monkeypatch.setenv("PATH", str(tmp_path))  # no bwrap on it, and none fetched into this var folder
    monkeypatch.delenv("COGNIZES_BWRAP", raising=False)
    monkeypatch.delenv("COGNIZES_SANDBOX_UNSAFE_LOCAL", raising=False)
    server = sandbox_daemon.make_server(tmp_path / "d.sock", tmp_path / "root", tmp_path)
    monkeypatch.setenv("COGNIZES_SANDBOX_SOCKET", str(tmp_path / "d.sock"))
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        box = Box(asgi_server)
        with pytest.raises(genai_errors.ClientError) as refused:
            box.create()
        assert refused.value.code == 400 and refused.value.status == "FAILED_PRECONDITION"
        assert "bubblewrap" in refused.value.message and "apt-get install bubblewrap" in refused.value.message
    finally:
        server.shutdown()
        server.server_close()


def test_without_the_daemon_sandboxes_are_unavailable_with_how_to_start_it(asgi_server, tmp_path, monkeypatch):
    monkeypatch.setenv("COGNIZES_SANDBOX_SOCKET", str(tmp_path / "none.sock"))
    with pytest.raises(genai_errors.ServerError) as refused:
        Box(asgi_server).create()
    assert refused.value.code == 503 and "tools_app.sandbox_daemon" in refused.value.message


def test_an_idle_sandbox_is_evicted_reads_terminated_and_adk_would_replace_it(asgi_server, tmp_path, monkeypatch):
    if sandbox_isolation.bwrap_path(VAR_DIR) is None:
        pytest.skip("no bubblewrap: `python -m tools_app.sandbox_bwrap` (make test runs it)")
    monkeypatch.setenv("COGNIZES_SANDBOX_UID_BASE", str(uid_base()))
    root = VAR_DIR / "test-sandboxes" / f"evict-{os.getpid()}"
    server = sandbox_daemon.make_server(tmp_path / "d.sock", root, VAR_DIR)
    monkeypatch.setenv("COGNIZES_SANDBOX_SOCKET", str(tmp_path / "d.sock"))
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        box = Box(asgi_server)
        name = box.create()
        assert box.run(name, "x = 1\nprint(x)")[0] == "1\n"
        server.daemon.idle_seconds = 0  # what COGNIZES_SANDBOX_IDLE_SECONDS sets; the daemon checks every 30 s
        server.daemon.evict_idle()
        assert box.sandboxes.get(name=name).state.value == "STATE_TERMINATED"  # ADK's executor then makes another
        with pytest.raises(genai_errors.ClientError) as refused:
            box.run(name, "print(x)")
        assert refused.value.code == 400 and "terminated" in refused.value.message
    finally:
        server.shutdown()
        server.server_close()
        server.daemon.stop_all()
        shutil.rmtree(root, ignore_errors=True)
