"""Where the embedded Redis keeps its socket: a data folder of any length works and leaves nothing behind."""

from __future__ import annotations

import shutil
import tempfile
from pathlib import Path

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
