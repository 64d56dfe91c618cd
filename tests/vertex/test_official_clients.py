"""ADK for Go and ADK for Java, the published libraries, against Cognizes: the session contract on their wire.

The programs live in tests/clients/ (go: ADK-Go's ``session/vertexai`` over gRPC
and the aiplatform ``MemoryBankClient``; java: ADK-Java's ``VertexAiSessionService``
over REST). Each prints a line per check and exits non-zero if one failed; here
they are built (once; later builds are incremental) and run against a server
this test starts. Without Go, or Java and Maven, they skip and say so.
"""

from __future__ import annotations

import asyncio
import datetime
import os
import shutil
import subprocess
import threading
from pathlib import Path

import pytest
from google.cloud.aiplatform_v1beta1.types import SessionEvent
from google.protobuf import struct_pb2

from cognizes.adk import PostgresSessionService
from tests.processes import ROOT
from tests.vertex.conftest import APP
from tests.vertex.test_grpc_sessions import create

pytestmark = pytest.mark.django_db(transaction=True)

CLIENTS = ROOT / "tests" / "clients"
GO_BINARY = CLIENTS / "go" / "cognizes-go-client"
JAVA_JAR = CLIENTS / "java" / "target" / "session-contract.jar"
BUILD_TIMEOUT = 280


def _go(package: str = ".", binary: Path = GO_BINARY) -> Path:
    """A Go client of tests/clients/go (its main package by default), built (a no-op when nothing changed)."""
    if shutil.which("go") is None:
        pytest.skip("Go is not installed: the ADK for Go client test needs the go command (https://go.dev/dl/)")
    subprocess.run(["go", "build", "-o", str(binary), package], cwd=CLIENTS / "go", check=True, timeout=BUILD_TIMEOUT)
    return binary


def _java() -> Path:
    """The Java client's jar, built with Maven when its sources are newer than it."""
    if shutil.which("java") is None or shutil.which("mvn") is None:
        pytest.skip(
            "Java 17 and Maven are needed for the ADK for Java client test (apt-get install openjdk-17-jdk maven)"
        )
    sources = [CLIENTS / "java" / "pom.xml", *(CLIENTS / "java" / "src").rglob("*.java")]
    if not JAVA_JAR.exists() or max(p.stat().st_mtime for p in sources) > JAVA_JAR.stat().st_mtime:
        subprocess.run(
            ["mvn", "-q", "-B", "-f", str(CLIENTS / "java" / "pom.xml"), "package"], check=True, timeout=BUILD_TIMEOUT
        )
    return JAVA_JAR


def _run(command: list[str], env: dict[str, str], *, checks: int = 5) -> str:
    """Run a client; its output, asserted free of failed checks (and with at least ``checks`` passed)."""
    done = subprocess.run(command, env={**os.environ, **env}, capture_output=True, text=True, timeout=240)
    output = done.stdout + done.stderr
    assert done.returncode == 0 and "FAIL" not in output, output
    assert output.count("ok: ") >= checks, output
    return output


def _go_env(grpc_server) -> dict[str, str]:
    return {
        "COGNIZES_GRPC": grpc_server.target,
        "COGNIZES_KEY": grpc_server.key,
        "COGNIZES_ENGINE_ID": str(grpc_server.engine_id),
    }


def test_adk_for_go_keeps_the_session_contract_over_grpc(grpc_server):
    output = _run([str(_go())], _go_env(grpc_server))
    assert "temp:" in output  # the check that temp: keys are not stored ran


def test_adk_for_go_over_tls_sends_the_key_with_option_with_api_key(grpc_tls_server):
    endpoint, certificate = grpc_tls_server
    _run([str(_go())], {**_go_env(endpoint), "COGNIZES_GRPC_CA": certificate})


def test_the_go_memory_bank_client_reaches_every_memory_method(grpc_server, celery_worker):
    _run([str(_go()), "-memory"], _go_env(grpc_server))


def test_concurrent_appends_from_go_and_python_lose_no_state_key(grpc_server):
    binary = _go()
    client, meta = grpc_server.sessions(), grpc_server.metadata()
    create(client, grpc_server, "mixed", "shared")
    name = f"{grpc_server.engine}/sessions/shared"

    def python_appends(worker: int) -> None:
        for i in range(10):
            delta = struct_pb2.Struct()
            delta.update({f"py-{worker}-{i}": i})
            client.append_event(
                name=name,
                metadata=meta,
                event=SessionEvent(
                    author="py-agent",
                    invocation_id=f"py-{worker}",
                    timestamp=datetime.datetime.now(datetime.UTC),
                    content={"role": "model", "parts": [{"text": f"py {worker} {i}"}]},
                    actions={"state_delta": delta},
                ),
            )

    threads = [threading.Thread(target=python_appends, args=(w,)) for w in range(4)]
    for thread in threads:
        thread.start()
    _run([str(binary), "-concurrent", "40", "-session", "shared", "-user", "mixed"], _go_env(grpc_server), checks=3)
    for thread in threads:
        thread.join()

    session = asyncio.run(PostgresSessionService().get_session(app_name=APP, user_id="mixed", session_id="shared"))
    assert len(session.events) == 80
    assert {key for key in session.state if key.startswith("go-")} == {f"go-{i}" for i in range(40)}
    assert {key for key in session.state if key.startswith("py-")} == {
        f"py-{w}-{i}" for w in range(4) for i in range(10)
    }


def test_adk_for_java_keeps_the_session_contract_over_rest(server):
    jar = _java()
    _run(
        ["java", "-jar", str(jar)],
        {
            "COGNIZES_URL": server.base_url.rstrip("/"),
            "COGNIZES_KEY": server.key,
            "COGNIZES_ENGINE_ID": str(server.engine_id),
        },
    )
