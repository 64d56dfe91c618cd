"""Where the embedded Redis keeps its socket: a data folder of any length works and leaves nothing behind."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import psutil

from cognizes.infra import local


def test_a_data_folder_too_deep_for_a_socket_gets_one_short_folder_of_its_own(tmp_path, monkeypatch):
    deep = tmp_path / ("データ-" + "x" * 120)
    monkeypatch.setattr(local, "VAR_DIR", deep)

    first, second = local._redis_run_dir(), local._redis_run_dir()
    near = Path(tempfile.mkdtemp(prefix="cz-"))  # pytest's tmp_path may itself be too deep
    monkeypatch.setattr(local, "VAR_DIR", near)
    short = local._redis_run_dir()

    try:
        assert first == second and first is not None and first.parent == Path(tempfile.gettempdir())
        assert len(str(first / "redis.socket").encode()) < 100 and first.stat().st_mode & 0o077 == 0
        assert short == near / "redis" / "server"  # a short one stays in the data folder
    finally:
        first.rmdir()
        shutil.rmtree(near)


STOPS_ONCE = """
import redis.retry
from cognizes.infra import local

slept = []
redis.retry.sleep = slept.append  # what redis-py's retries wait between attempts
local.start_redis()
server = local._redis.pid
local._leave_redis()
print(slept, server)
"""


def test_the_last_user_stops_redis_with_one_shutdown_not_a_round_of_retries():
    """SHUTDOWN closes the connection it came on; redis-py took that for a failure and retried with back-off (~4 s
    of sleeping at the end of every command run without `cognizes run` up)."""
    data = Path(tempfile.mkdtemp(prefix="cz-"))
    try:
        done = subprocess.run(
            [sys.executable, "-c", STOPS_ONCE],
            env={**os.environ, "COGNIZES_VAR_DIR": str(data)},
            capture_output=True,
            text=True,
            timeout=60,
            check=True,
        )
        slept, server = done.stdout.split(maxsplit=1)[0], int(done.stdout.split()[-1])
        assert slept == "[]", done.stdout
        assert not psutil.pid_exists(server) or psutil.Process(server).status() == psutil.STATUS_ZOMBIE
    finally:
        shutil.rmtree(data)
