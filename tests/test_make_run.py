"""`make run` on a fresh machine: everything starts, the admin answers, ordinary use prints no warning,
Ctrl-C leaves nothing behind."""

from __future__ import annotations

import json
import os
import re
import signal
import stat
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

import grpc
import psutil
import pytest
from google.cloud.aiplatform_v1beta1.services.session_service import SessionServiceClient
from google.cloud.aiplatform_v1beta1.services.session_service.transports import SessionServiceGrpcTransport

from tests.processes import ROOT, free_port


def _wait_for(url: str, launcher: subprocess.Popen, timeout: float = 120) -> int:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        assert launcher.poll() is None, "the launcher exited early"
        try:
            with urllib.request.urlopen(url, timeout=5) as response:
                return response.status
        except OSError:
            time.sleep(0.5)
    raise AssertionError(f"{url} did not answer within {timeout}s")


def _manage(env: dict[str, str], *command: str) -> str:
    """The last line a manage.py command prints (a key, an engine id)."""
    done = subprocess.run(
        [sys.executable, "manage.py", *command], cwd=ROOT, env=env, check=True, capture_output=True, text=True
    )
    return done.stdout.splitlines()[-1]


def _post(url: str, key: str, body: dict, **headers: str) -> bytes:
    headers = {"Authorization": f"Bearer {key}", "Content-Type": "application/json", **headers}
    request = urllib.request.Request(url, data=json.dumps(body).encode(), headers=headers)
    with urllib.request.urlopen(request, timeout=60) as response:
        return response.read()


def _get(url: str, key: str = "") -> bytes:
    request = urllib.request.Request(url, headers={"Authorization": f"Bearer {key}"} if key else {})
    with urllib.request.urlopen(request, timeout=60) as response:
        return response.read()


def _ordinary_use(port: int, key: str) -> None:
    """What a newcomer does in the first minutes: read the API reference, stream a turn, talk A2A."""
    base = f"http://127.0.0.1:{port}"
    docs = _get(f"{base}/api/docs/").decode()
    assets = re.findall(r'(?:src|href)="(/static/[^"]+)"', docs)
    assert len(assets) >= 2 and all(_get(base + asset) for asset in assets)  # as the browser loads them
    assert b"openapi" in _get(f"{base}/api/schema/?format=json")
    session = f"{base}/api/v1/apps/weather/users/alice/sessions/smoke/"
    assert b"event: done" in _post(session + "run/stream/", key, {"message": "And in Tokyo?"})
    card = json.loads(_get(f"{base}/a2a/weather/.well-known/agent-card.json"))
    assert card["name"] == "weather_assistant"
    message = {"kind": "message", "role": "user", "messageId": "m-1", "parts": [{"kind": "text", "text": "Hi there"}]}
    rpc = {"jsonrpc": "2.0", "id": 1, "method": "message/send", "params": {"message": message}}
    assert (
        json.loads(_post(f"{base}/a2a/weather/", key, rpc, **{"X-User-Id": "alice"}))["result"]["status"]["state"]
        == "completed"
    )


@pytest.mark.timeout(240)
def test_run_serves_the_admin_and_ctrl_c_stops_every_process(tmp_path):
    port, grpc_port = free_port(), free_port()
    temporary = set(Path(tempfile.gettempdir()).glob("tmp*/redis.config"))
    # A fresh machine: no key set (nor pytest's), none stored; `make run` generates one (issue 41 E).
    fresh = {"DATABASE_URL", "REDIS_URL", "DJANGO_SECRET_KEY", "PYTEST_VERSION"}
    env = {key: value for key, value in os.environ.items() if key not in fresh}
    env.update(
        PORT=str(port),
        COGNIZES_GRPC_PORT=str(grpc_port),
        COGNIZES_VAR_DIR=str(tmp_path / "var"),
        COGNIZES_ADMIN_PASSWORD="fresh-machine-pw",
    )
    launcher = subprocess.Popen(
        [sys.executable, "-m", "cognizes.run"],
        cwd=ROOT,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    try:
        assert _wait_for(f"http://127.0.0.1:{port}/admin/login/", launcher) == 200
        # The demo agent answers over HTTP, from the web server's connection pool, in the unit
        # alice told it in the demo conversation.
        stored = tmp_path / "var" / "secret_key"
        assert stat.S_IMODE(stored.stat().st_mode) == 0o600 and len(stored.read_text().strip()) >= 50
        key = _manage(env, "create_api_key", "weather")
        answer = json.loads(
            _post(
                f"http://127.0.0.1:{port}/api/v1/apps/weather/users/alice/sessions/smoke/run/",
                key,
                {"message": "What's the weather in Paris?"},
            )
        )
        assert answer["events"][-1]["content"]["parts"][0]["text"] == "[offline model] It's 64°F and clear in Paris."
        # The same session over Vertex AI's gRPC surface, as ADK for Go reads it.
        engine = f"reasoningEngines/{_manage(env, 'vertex_engine', 'weather')}"
        channel = grpc.insecure_channel(f"127.0.0.1:{grpc_port}")
        grpc.channel_ready_future(channel).result(timeout=60)
        client = SessionServiceClient(transport=SessionServiceGrpcTransport(channel=channel))
        assert (
            client.get_session(name=f"{engine}/sessions/smoke", metadata=[("x-goog-api-key", key)]).user_id == "alice"
        )
        _ordinary_use(port, key)
        time.sleep(3)  # let the worker and beat finish starting
        started = psutil.Process(launcher.pid).children(recursive=True)
        servers = [p for p in psutil.process_iter(["cmdline"]) if str(tmp_path) in " ".join(p.info["cmdline"] or [])]
        assert len(started) >= 4 and servers, "expected web, gRPC, worker, beat, PostgreSQL and Redis"

        launcher.send_signal(signal.SIGINT)
        output, _ = launcher.communicate(timeout=60)
    finally:
        if launcher.poll() is None:
            launcher.kill()

    assert launcher.returncode == 0
    summary = output.index(f"Cognizes is running at http://127.0.0.1:{port}/")
    assert output.index("Loaded demo sessions") < summary
    assert f"admin     http://127.0.0.1:{port}/admin/   Admin login (shown once): admin / fresh-machine-pw" in output
    assert "celery@" not in output and "Uvicorn running" not in output  # no banners burying the summary
    after = output[summary:].splitlines()
    assert [line for line in after if "warn" in line.lower() or "experimental" in line.lower()] == []
    _, alive = psutil.wait_procs(started + servers, timeout=15)
    assert [p for p in alive if p.status() != psutil.STATUS_ZOMBIE] == []
    # Redis's socket and files were under var/, not in a new /tmp folder left behind.
    assert set(Path(tempfile.gettempdir()).glob("tmp*/redis.config")) == temporary
