"""``cognizes run`` (and ``make run``): everything a newcomer needs, started together and stopped together.

Starts (or reuses) PostgreSQL and Redis under ``COGNIZES_VAR_DIR``, migrates, creates the admin user and, in a
checkout, the demo data, then runs the web server, Vertex AI's gRPC server, a Celery worker,
Celery beat and the sandbox daemon until Ctrl-C;
once the web server answers, the lines that matter (URL, admin login, what to
try) are printed last, below a quiet start (no banners, warnings only). The
children get ``DATABASE_URL`` / ``REDIS_URL`` so they share this process's
servers; on exit every child's process group is stopped, then the servers.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import signal
import subprocess
import sys
import time
import urllib.request

from cognizes.infra import local, secret_key
from cognizes.infra.command import typed

STOP_TIMEOUT_SECONDS = 15
START_TIMEOUT_SECONDS = 120
LOG_LEVEL = os.environ.get("COGNIZES_RUN_LOG_LEVEL", "WARNING")
"""What the children log here (the servers' banners are off): warnings, unless asked for more."""
WEB_WORKERS = int(os.environ.get("COGNIZES_WEB_WORKERS", str(os.cpu_count() or 1)))
"""Web server processes: one per core by default (each has its own database pool and event loop)."""


def main(argv: list[str] | None = None) -> int:
    _arguments().parse_args(sys.argv[1:] if argv is None else argv)  # none yet: it answers --help, refuses typos
    port = os.environ.get("PORT", "8000")
    grpc_port = os.environ.get("COGNIZES_GRPC_PORT", "50051")
    env = {
        **os.environ,
        "DJANGO_SETTINGS_MODULE": os.environ.get("DJANGO_SETTINGS_MODULE", "cognizes.settings"),
        "DATABASE_URL": local.database_url(),
        "REDIS_URL": local.redis_url(),
        "LOG_LEVEL": LOG_LEVEL,  # Django's logging (settings.LOGGING): ADK logs each plugin of each runner at INFO
        # One key per installation, generated at the first start and kept (issue 41 E): no key ships in the code.
        "DJANGO_SECRET_KEY": os.environ.get("DJANGO_SECRET_KEY") or secret_key.ensure(),
    }
    python = sys.executable
    cognizes = [python, "-m", "cognizes"]
    demo = local.demo_installed()
    children: list[subprocess.Popen] = []

    def stop(*_: object) -> None:
        raise KeyboardInterrupt

    # Explicitly: a shell that starts us in the background leaves SIGINT ignored.
    signal.signal(signal.SIGINT, stop)
    signal.signal(signal.SIGTERM, stop)
    try:
        print(f"Data: {local.VAR_DIR}  (COGNIZES_VAR_DIR)", flush=True)
        # migrate runs Django's system checks (a broken setting or URL stops here, said plainly); the next steps
        # would only repeat them, importing every URL's views again (~4 s of CPU each).
        subprocess.run([*cognizes, "migrate", "--noinput"], env=env, check=True)
        admin = subprocess.run(
            [*cognizes, "ensure_admin", "--skip-checks"], env=env, check=True, capture_output=True, text=True
        ).stdout.strip()
        print(admin, flush=True)
        if demo:
            subprocess.run([*cognizes, "load_demo", "--skip-checks"], env=env, check=True)
        # The web server runs requests on many threads (cognizes.infra.asgi_handler), and
        # streams on threads of their own: it takes its connections from a pool rather
        # than keeping one per thread (bench/api.py measures both).
        web_env = {**env, "DATABASE_POOL_SIZE": env.get("DATABASE_POOL_SIZE", "20")}
        for command, command_env in (
            (
                [
                    python,
                    "-m",
                    "uvicorn",
                    "cognizes.asgi:application",
                    "--host",
                    "127.0.0.1",
                    "--port",
                    port,
                    "--workers",
                    str(WEB_WORKERS),
                    "--http",
                    "httptools",
                    "--loop",
                    "uvloop",
                    "--lifespan",
                    "off",
                    "--log-level",
                    LOG_LEVEL.lower(),
                ],
                web_env,
            ),
            ([*cognizes, "serve_grpc", "--port", grpc_port, "--verbosity", "0"], web_env),
            (
                [
                    python,
                    "-m",
                    "celery",
                    "-A",
                    "cognizes",
                    "--quiet",
                    "worker",
                    "--loglevel",
                    LOG_LEVEL,
                    "--concurrency",
                    "2",
                ],
                env,
            ),
            ([python, "-m", "celery", "-A", "cognizes", "--quiet", "beat", "--loglevel", LOG_LEVEL], env),
            # The one owner of the sandboxes' interpreters on this host (the web workers forward to it).
            ([python, "-m", "tools_app.sandbox_daemon"], env),
        ):
            children.append(subprocess.Popen(command, env=command_env, start_new_session=True))
        if _answers(f"http://127.0.0.1:{port}/admin/login/", children):
            print(_summary(port, grpc_port, admin, demo), flush=True)
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


def _arguments() -> argparse.ArgumentParser:
    """``cognizes run``'s command line: no options, its settings are environment variables (as its children's are)."""
    return argparse.ArgumentParser(
        prog="cognizes run",
        description="Start PostgreSQL and Redis (embedded, unless DATABASE_URL / REDIS_URL name servers), migrate, "
        "create the admin user, then run the web server, Vertex AI's gRPC server, a Celery worker and beat until "
        "Ctrl-C, which stops them all.",
        epilog="environment: PORT (web, 8000), COGNIZES_GRPC_PORT (50051), COGNIZES_VAR_DIR (the data folder), "
        "COGNIZES_WEB_WORKERS (one per core), COGNIZES_RUN_LOG_LEVEL (WARNING), COGNIZES_ADMIN_PASSWORD (else "
        "generated and shown once), DJANGO_SECRET_KEY (else generated into the data folder).",
    )


def _answers(url: str, children: list[subprocess.Popen]) -> bool:
    """Wait until the web server answers ``url`` (False if a child exits first, or it never does)."""
    deadline = time.monotonic() + START_TIMEOUT_SECONDS
    while time.monotonic() < deadline and all(child.poll() is None for child in children):
        try:
            with urllib.request.urlopen(url, timeout=5):  # nosec B310: our own http://127.0.0.1 URL
                return True
        except OSError:
            time.sleep(0.3)
    return False


def _summary(port: str, grpc_port: str, admin: str, demo: bool) -> str:
    """The lines that matter, printed last: where to go, how to log in, what to try."""
    base = f"http://127.0.0.1:{port}"
    command = typed()
    app = "weather" if demo else "my_app"
    lines = [
        "",
        f"Cognizes is running at {base}/  (Ctrl-C stops everything)",
        f"  admin     {base}/admin/   {admin}",
        f"  API docs  {base}/api/docs/   (a key: {command} create_api_key {app})",
    ]
    if demo:
        lines += [
            f"  chat      {command} chat weather --user alice",
            f"  A2A       {base}/a2a/weather/   (its card: {base}/a2a/weather/.well-known/agent-card.json)",
        ]
    lines += [
        f"  Vertex AI {base}/v1beta1/…  and gRPC on 127.0.0.1:{grpc_port}   (engine id: {command} vertex_engine {app})",
        "",
    ]
    return "\n".join(lines)


def _stop_children(children: list[subprocess.Popen]) -> None:
    """SIGTERM each child's process group (Celery's pool included), then SIGKILL stragglers."""
    for child in children:
        if child.poll() is None:
            os.killpg(child.pid, signal.SIGTERM)
    deadline = time.monotonic() + STOP_TIMEOUT_SECONDS
    for child in children:
        with contextlib.suppress(subprocess.TimeoutExpired):
            child.wait(timeout=max(0.1, deadline - time.monotonic()))
        with contextlib.suppress(ProcessLookupError):
            os.killpg(child.pid, signal.SIGKILL)


if __name__ == "__main__":
    sys.exit(main())
