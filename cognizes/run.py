"""``make run``: everything a newcomer needs, started together and stopped together.

Starts (or reuses) PostgreSQL and Redis, migrates, creates the admin user and the
demo data, then runs the web server, a Celery worker and Celery beat until Ctrl-C.
The children get ``DATABASE_URL`` / ``REDIS_URL`` so they share this process's
servers; on exit every child's process group is stopped, then the servers.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time

from cognizes import local

STOP_TIMEOUT_SECONDS = 15


def main() -> int:
    port = os.environ.get("PORT", "8000")
    env = {
        **os.environ,
        "DJANGO_SETTINGS_MODULE": os.environ.get("DJANGO_SETTINGS_MODULE", "cognizes.settings"),
        "DATABASE_URL": local.database_url(),
        "REDIS_URL": local.redis_url(),
    }
    python = sys.executable
    children: list[subprocess.Popen] = []

    def stop(*_: object) -> None:
        raise KeyboardInterrupt

    # Explicitly: a shell that starts us in the background leaves SIGINT ignored.
    signal.signal(signal.SIGINT, stop)
    signal.signal(signal.SIGTERM, stop)
    try:
        for command in (["migrate", "--noinput"], ["ensure_admin"], ["load_demo"]):
            subprocess.run([python, "manage.py", *command], env=env, check=True)
        # Under ASGI each request runs on a thread of its own, so a persistent
        # connection would never be reused: the web server takes its connections
        # from a pool instead (bench/api.py measures both).
        web_env = {**env, "DATABASE_POOL_SIZE": env.get("DATABASE_POOL_SIZE", "20")}
        for command, command_env in (
            (
                [python, "-m", "uvicorn", "cognizes.asgi:application", "--host", "127.0.0.1", "--port", port,
                 "--lifespan", "off"],
                web_env,
            ),
            ([python, "-m", "celery", "-A", "cognizes", "worker", "--loglevel", "INFO", "--concurrency", "2"], env),
            ([python, "-m", "celery", "-A", "cognizes", "beat", "--loglevel", "INFO"], env),
        ):
            children.append(subprocess.Popen(command, env=command_env, start_new_session=True))
        print(f"\nCognizes is running: http://127.0.0.1:{port}/admin/  (Ctrl-C stops everything)\n", flush=True)
        while all(child.poll() is None for child in children):
            time.sleep(0.5)
        print("A process exited; stopping the others.", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        print("\nStopping…", flush=True)
        return 0
    except subprocess.CalledProcessError as error:
        print(f"Setup step failed: {error}", file=sys.stderr)
        return 1
    finally:
        _stop_children(children)
        local.stop()


def _stop_children(children: list[subprocess.Popen]) -> None:
    """SIGTERM each child's process group (Celery's pool included), then SIGKILL stragglers."""
    for child in children:
        if child.poll() is None:
            os.killpg(child.pid, signal.SIGTERM)
    deadline = time.monotonic() + STOP_TIMEOUT_SECONDS
    for child in children:
        try:
            child.wait(timeout=max(0.1, deadline - time.monotonic()))
        except subprocess.TimeoutExpired:
            pass
        try:
            os.killpg(child.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass


if __name__ == "__main__":
    sys.exit(main())
