"""``manage.py serve_grpc``: Vertex AI's gRPC surface (vertex_app.grpc_server) until SIGTERM or Ctrl-C."""

from __future__ import annotations

import signal
import threading
from typing import Any

from django.core.exceptions import ImproperlyConfigured
from django.core.management.base import BaseCommand, CommandError

from cognizes.infra import secret_key
from vertex_app import grpc_server

GRACE_SECONDS = 5


class Command(BaseCommand):
    help = "Serve Vertex AI's SessionService, MemoryBankService and Operations over gRPC."

    def add_arguments(self, parser: Any) -> None:
        parser.add_argument("--host", default="127.0.0.1", help="Address to listen on (0.0.0.0: every interface).")
        parser.add_argument("--port", type=int, default=grpc_server.PORT, help="Default: COGNIZES_GRPC_PORT or 50051.")

    def handle(self, *args: Any, host: str, port: int, verbosity: int = 1, **options: Any) -> None:
        try:
            secret_key.require("The gRPC server")
        except ImproperlyConfigured as missing:
            raise CommandError(str(missing)) from missing
        tls = grpc_server.credentials()
        server, bound = grpc_server.build(host=host, port=port, tls=tls)
        if not bound:
            raise CommandError(f"Cannot listen on {host}:{port} (is it taken?).")
        stopped = threading.Event()
        for signum in (signal.SIGTERM, signal.SIGINT):
            signal.signal(signum, lambda *_: stopped.set())
        server.start()
        if verbosity:
            self.stdout.write(f"Vertex AI gRPC on {host}:{bound}{' (TLS)' if tls else ''}")
            self.stdout.flush()
        stopped.wait()
        server.stop(GRACE_SECONDS).wait()
