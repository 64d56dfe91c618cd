"""Without bubblewrap, sandboxes are refused with what to install, never run unconfined (issue 46 item 3)."""

from __future__ import annotations

import threading

import pytest
from google.genai import errors as genai_errors

from tests.sandbox.conftest import Box
from tools_app import sandbox_daemon

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
