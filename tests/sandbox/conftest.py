"""The sandbox daemon, one per test module, and agentplatform's ``client.sandboxes`` pointed at Cognizes.

The daemon is the real one (``python -m tools_app.sandbox_daemon``) in a process of its own, with its socket and
workspaces under the module's temporary folder; the web server finds it by ``COGNIZES_SANDBOX_SOCKET``, read at
each call. It confines code with bubblewrap (the system's, or the one ``make test`` fetched into var/tools).
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import agentplatform
import pytest
from google.oauth2.credentials import Credentials

from cognizes.access.services import do_create_api_key
from cognizes.infra.local import VAR_DIR
from tools_app import sandbox_isolation
from tools_app.sandbox_client import SandboxUnavailable, call
from vertex_app.services import do_get_or_create_engine

APP = "sandbox_shop"
WALL_SECONDS = 4
MEMORY_BYTES = 512 << 20
FILE_BYTES = 64 << 20
CANARY = "canary-7f3a9c1e-секрет"


def uid_base() -> int:
    """Sandbox uids of this test process's own (another process's sandbox 1 is another sandbox)."""
    return 1_500_000_000 + (os.getpid() % 4000) * 100_000


@pytest.fixture(scope="module")
def sandbox_daemon(tmp_path_factory) -> dict:
    """The daemon for this module: {"socket", "root", "process"}; skipped with the reason when no bwrap is found."""
    if sandbox_isolation.bwrap_path(VAR_DIR) is None:
        pytest.skip(
            "no bubblewrap: `python -m tools_app.sandbox_bwrap` (make test runs it) or apt-get install bubblewrap"
        )
    # The workspaces' folder must be one each sandbox's uid can pass through (pytest's own is the user's alone).
    socket_path = tmp_path_factory.mktemp("sandboxes") / "d.sock"
    root = VAR_DIR / "test-sandboxes" / f"{os.getpid()}-{time.monotonic_ns()}"
    env = {
        **os.environ,
        "COGNIZES_SANDBOX_WALL_SECONDS": str(WALL_SECONDS),
        "COGNIZES_SANDBOX_MEMORY_BYTES": str(MEMORY_BYTES),
        "COGNIZES_SANDBOX_FILE_BYTES": str(FILE_BYTES),
        "COGNIZES_SANDBOX_EXECUTIONS_PER_APP": "2",
        "COGNIZES_SANDBOX_UID_BASE": str(uid_base()),
        "COGNIZES_TEST_CANARY": CANARY,  # the daemon's environment holds a secret sandboxes must not read
    }
    process = subprocess.Popen(
        [sys.executable, "-m", "tools_app.sandbox_daemon", "--socket", str(socket_path), "--root", str(root)],
        env=env,
        cwd=Path(__file__).resolve().parents[2],
    )
    saved = os.environ.get("COGNIZES_SANDBOX_SOCKET")
    os.environ["COGNIZES_SANDBOX_SOCKET"] = str(socket_path)
    deadline = time.monotonic() + 30
    while True:
        try:
            call("ping")
            break
        except SandboxUnavailable:
            assert process.poll() is None and time.monotonic() < deadline, "the sandbox daemon did not start"
            time.sleep(0.05)
    yield {"socket": socket_path, "root": root, "process": process}
    process.terminate()
    process.wait(30)
    shutil.rmtree(root, ignore_errors=True)
    if saved is None:
        os.environ.pop("COGNIZES_SANDBOX_SOCKET", None)
    else:
        os.environ["COGNIZES_SANDBOX_SOCKET"] = saved


class Box:
    """The server, an engine of APP, a key, and agentplatform's client on them (project mode, as ADK uses it)."""

    def __init__(self, base_url: str, app: str = APP) -> None:
        self.base_url = base_url
        self.app = app
        self.engine_id = do_get_or_create_engine(app_name=app).engine_id
        self.key = do_create_api_key(name="sandbox", app_name=app)[1]
        self.engine = f"projects/my-project/locations/us-central1/reasoningEngines/{self.engine_id}"

    def client(self, key: str | None = None) -> agentplatform.Client:
        return agentplatform.Client(
            project="my-project",
            location="us-central1",
            credentials=Credentials(token=key or self.key),
            http_options={"base_url": self.base_url + "/"},
        )

    @property
    def sandboxes(self):
        return self.client().sandboxes

    def create(self, **config) -> str:
        operation = self.sandboxes.create(
            name=self.engine, spec={"code_execution_environment": {}}, config={"display_name": "t", **config}
        )
        return operation.response.name

    def run(self, sandbox: str, code: str, files: list[dict] | None = None) -> tuple[str, str, dict[str, bytes]]:
        """(stdout, stderr, {file name: content}) of one ``:execute``."""
        import json

        response = self.sandboxes.execute_code(name=sandbox, input_data={"code": code, "files": files or []})
        first, *rest = response.outputs
        message = json.loads(first.data)
        return (
            message["msg_out"],
            message["msg_err"],
            {o.metadata.attributes["file_name"].decode(): o.data for o in rest},
        )


@pytest.fixture
def box(asgi_server, sandbox_daemon) -> Box:
    return Box(asgi_server)
