"""No secret key ships in the code (issue 41 E): one is generated per installation and kept private, and the servers
refuse to start without one, saying which variable to set; commands that sign nothing still run."""

from __future__ import annotations

import os
import stat
import subprocess
import sys
import time
from pathlib import Path

import pytest

from cognizes.infra import secret_key
from tests.processes import ROOT, database_env, free_port

pytestmark = pytest.mark.django_db


def _keyless_env(var_dir: Path) -> dict[str, str]:
    """The test database's environment as a fresh installation has it: no key set, none stored, not under pytest."""
    env = {name: value for name, value in database_env().items() if name not in ("DJANGO_SECRET_KEY", "PYTEST_VERSION")}
    return {**env, "COGNIZES_VAR_DIR": str(var_dir)}


def test_the_installations_key_is_generated_once_private_and_reused(tmp_path):
    first = secret_key.ensure(tmp_path)
    kept = tmp_path / "secret_key"
    assert len(first) >= 50 and stat.S_IMODE(kept.stat().st_mode) == 0o600
    assert secret_key.ensure(tmp_path) == first  # the next start reuses it
    assert secret_key.ensure(tmp_path / "elsewhere") != first  # another installation has its own
    assert "cognizes-insecure" not in (ROOT / "cognizes" / "settings.py").read_text()


def test_a_key_file_others_can_read_is_refused(tmp_path):
    secret_key.ensure(tmp_path)
    os.chmod(tmp_path / "secret_key", 0o644)
    with pytest.raises(Exception, match="chmod 600"):
        secret_key.stored(tmp_path)


@pytest.mark.parametrize(
    "command",
    [
        ["-c", "import cognizes.asgi"],
        ["-c", "import cognizes.wsgi"],
        ["manage.py", "serve_grpc", "--port", "0"],
        ["-m", "celery", "-A", "cognizes", "worker", "--pool", "solo", "--concurrency", "1"],
    ],
    ids=["asgi", "wsgi", "grpc", "celery"],
)
def test_a_server_without_a_key_refuses_to_start_naming_the_variable(tmp_path, command):
    done = subprocess.run(
        [sys.executable, *command], cwd=ROOT, env=_keyless_env(tmp_path), capture_output=True, text=True, timeout=120
    )
    assert done.returncode != 0 and "DJANGO_SECRET_KEY" in done.stderr, done.stderr[-2000:]


def test_commands_that_sign_nothing_run_without_a_key_and_a_stored_key_is_used(tmp_path):
    env = _keyless_env(tmp_path)
    made = subprocess.run(
        [sys.executable, "manage.py", "create_api_key", "keyless_app"],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert made.returncode == 0, made.stderr[-2000:]
    stored = secret_key.ensure(tmp_path)  # what `make run` does at its first start
    read = subprocess.run(
        [sys.executable, "-c", "import cognizes.asgi; from django.conf import settings; print(settings.SECRET_KEY)"],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert read.returncode == 0 and read.stdout.strip().splitlines()[-1] == stored, read.stderr[-2000:]


def test_the_development_server_makes_the_installations_key_as_make_run_does(tmp_path):
    port = free_port()
    server = subprocess.Popen(
        [sys.executable, "manage.py", "runserver", "--noreload", f"127.0.0.1:{port}"],
        cwd=ROOT,
        env=_keyless_env(tmp_path),
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        deadline = time.monotonic() + 60
        while not (tmp_path / "secret_key").exists():
            assert server.poll() is None and time.monotonic() < deadline, "runserver made no key"
            time.sleep(0.2)
        assert stat.S_IMODE((tmp_path / "secret_key").stat().st_mode) == 0o600
    finally:
        server.terminate()
        server.wait(30)
