"""Run code in another process against the test database (what a second web or worker process does)."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
from pathlib import Path
from urllib.parse import quote

from django.conf import settings

ROOT = Path(__file__).resolve().parents[1]


_URL_VARIABLES = {"default": "DATABASE_URL", "listen": "DATABASE_LISTEN_URL", "replica": "DATABASE_REPLICA_URL"}


def database_env() -> dict[str, str]:
    """This process's environment, pointed at the test database (on every server it is reached by) and the same
    Redis."""
    urls = {_URL_VARIABLES[alias]: database_url(db) for alias, db in settings.DATABASES.items()}
    return {**os.environ, **urls, "REDIS_URL": settings.REDIS_URL}


def database_url(db: dict) -> str:
    auth = quote(db["USER"]) + (f":{quote(db['PASSWORD'])}" if db.get("PASSWORD") else "")
    return f"postgresql://{auth}@{quote(db['HOST'], safe='')}:{db['PORT']}/{db['NAME']}"


def run_python(script: str, *, timeout: float = 120) -> subprocess.CompletedProcess[str]:
    """Run ``script`` with the project's Python in the project root; fails the test if it fails."""
    return subprocess.run(
        [sys.executable, "-c", script],
        cwd=ROOT,
        env=database_env(),
        check=True,
        timeout=timeout,
        capture_output=True,
        text=True,
    )


def free_port() -> int:
    """A loopback port nobody listens on (for a server a test starts)."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]
