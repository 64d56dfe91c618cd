"""A Cognizes server on loopback and ADK's own Vertex AI clients pointed at it.

Both ways a Vertex client authenticates are exercised: express mode (the key as
``x-goog-api-key``, paths ``reasoningEngines/{id}/…``) and project mode (the key
as a bearer token, paths ``projects/{p}/locations/{l}/reasoningEngines/{id}/…``).
"""

from __future__ import annotations

from dataclasses import dataclass, replace

import agentplatform
import grpc
import pytest
from google.oauth2.credentials import Credentials

from cognizes.access.services import do_create_api_key
from cognizes.vertex import VertexAiMemoryBankService, VertexAiSessionService
from tests.runtime.conftest import weather_app as weather_app  # the demo app, served by the agent registry tests
from vertex_app.services import do_get_or_create_engine

APP = "vertex_shop"
MODES = {"express": {}, "project": {"project": "my-project", "location": "us-central1"}}


@dataclass(frozen=True)
class Endpoint:
    base_url: str
    engine_id: int
    key: str
    mode: dict

    def sessions(self, **overrides) -> VertexAiSessionService:
        return VertexAiSessionService(**{**self.options(), **overrides})

    def memory(self, **overrides) -> VertexAiMemoryBankService:
        return VertexAiMemoryBankService(**{**self.options(), **overrides})

    def options(self) -> dict:
        return {"base_url": self.base_url, "engine_id": self.engine_id, "api_key": self.key, **self.mode}

    def project_client(self, key: str | None = None) -> agentplatform.Client:
        """agentplatform in project mode (the key as a bearer token), as ADK's Vertex classes build it."""
        return agentplatform.Client(
            project="my-project",
            location="us-central1",
            credentials=Credentials(token=key or self.key),
            http_options={"base_url": self.base_url},
        )

    def key_for(self, *, app_name: str = APP, user_id: str = "", read_only: bool = False) -> str:
        return do_create_api_key(name="test", app_name=app_name, user_id=user_id, read_only=read_only)[1]


@pytest.fixture
def server(asgi_server) -> Endpoint:
    """The server, the app's engine and a key of the app (express mode)."""
    engine = do_get_or_create_engine(app_name=APP)
    _, key = do_create_api_key(name="vertex", app_name=APP)
    return Endpoint(base_url=asgi_server + "/", engine_id=engine.engine_id, key=key, mode={})


@pytest.fixture(params=["express", "project"])
def rag(request, server):
    """agentplatform's rag, in express mode (an API key) or project mode (a Bearer token and a location)."""
    if request.param == "express":
        client = agentplatform.Client(api_key=server.key, http_options={"base_url": server.base_url})
    else:
        client = server.project_client()
    return client.rag


@pytest.fixture(params=sorted(MODES))
def vertex(request, server) -> Endpoint:
    """``server``, reached in express and in project mode."""
    return replace(server, mode=MODES[request.param])


@dataclass(frozen=True)
class GrpcEndpoint:
    target: str
    """host:port of Cognizes' gRPC server."""
    engine_id: int
    key: str

    @property
    def engine(self) -> str:
        return f"projects/p/locations/us-central1/reasoningEngines/{self.engine_id}"

    def metadata(self, key: str | None = None) -> list[tuple[str, str]]:
        return [("x-goog-api-key", self.key if key is None else key)] if key != "" else []

    def channel(self, key: str | None = None):
        """A channel that sends the key with every call, as a client configured with it does (polls included)."""
        return grpc.intercept_channel(grpc.insecure_channel(self.target), _WithKey(self.metadata(key)))

    def sessions(self, channel=None):
        """Google's GAPIC SessionServiceClient over gRPC to Cognizes."""
        from google.cloud.aiplatform_v1beta1.services.session_service import SessionServiceClient
        from google.cloud.aiplatform_v1beta1.services.session_service.transports import SessionServiceGrpcTransport

        return SessionServiceClient(transport=SessionServiceGrpcTransport(channel=channel or self.channel()))

    def memories(self, channel=None):
        from google.cloud.aiplatform_v1beta1.services.memory_bank_service import MemoryBankServiceClient
        from google.cloud.aiplatform_v1beta1.services.memory_bank_service.transports import (
            MemoryBankServiceGrpcTransport,
        )

        return MemoryBankServiceClient(transport=MemoryBankServiceGrpcTransport(channel=channel or self.channel()))


class _WithKey(grpc.UnaryUnaryClientInterceptor):
    """Adds the API key to each call that carries none of its own."""

    def __init__(self, metadata: list[tuple[str, str]]) -> None:
        self.extra = metadata

    def intercept_unary_unary(self, continuation, details, request):
        own = list(details.metadata or [])
        if not any(key in ("x-goog-api-key", "authorization") for key, _ in own):
            details = details._replace(metadata=[*own, *self.extra])
        return continuation(details, request)


@pytest.fixture
def grpc_server(transactional_db):
    """Cognizes' gRPC server (vertex_app.grpc_server) in this process on a free port, with the app's engine and a
    key."""
    from vertex_app import grpc_server as grpc_module

    server, port = grpc_module.build(port=0)
    server.start()
    engine = do_get_or_create_engine(app_name=APP)
    _, key = do_create_api_key(name="grpc", app_name=APP)
    yield GrpcEndpoint(target=f"127.0.0.1:{port}", engine_id=engine.engine_id, key=key)
    server.stop(0).wait()


def self_signed_certificate(directory, name: str = "localhost", *, ip: str | None = "127.0.0.1") -> tuple[str, str]:
    """(certificate, key) PEM files naming ``name`` (and ``ip``, unless None: a client that checks the certificate
    against the address it connected to then fails), valid for a day."""
    import datetime
    import ipaddress

    from cryptography import x509
    from cryptography.hazmat.primitives import hashes, serialization
    from cryptography.hazmat.primitives.asymmetric import ec
    from cryptography.x509.oid import NameOID

    key = ec.generate_private_key(ec.SECP256R1())
    subject = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, name)])
    names = [x509.DNSName(name), *([x509.IPAddress(ipaddress.ip_address(ip))] if ip else [])]
    now = datetime.datetime.now(datetime.UTC)
    certificate = (
        x509.CertificateBuilder()
        .subject_name(subject)
        .issuer_name(subject)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - datetime.timedelta(minutes=1))
        .not_valid_after(now + datetime.timedelta(days=1))
        .add_extension(x509.SubjectAlternativeName(names), critical=False)
        .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
        .sign(key, hashes.SHA256())
    )
    cert_path, key_path = directory / "cert.pem", directory / "key.pem"
    cert_path.write_bytes(certificate.public_bytes(serialization.Encoding.PEM))
    key_path.write_bytes(
        key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption())
    )
    return str(cert_path), str(key_path)


@pytest.fixture
def grpc_tls_server(transactional_db, tmp_path, monkeypatch):
    """The gRPC server with COGNIZES_GRPC_TLS_CERT / _KEY set: (endpoint, certificate path)."""
    from vertex_app import grpc_server as grpc_module

    cert, key_file = self_signed_certificate(tmp_path)
    monkeypatch.setenv("COGNIZES_GRPC_TLS_CERT", cert)
    monkeypatch.setenv("COGNIZES_GRPC_TLS_KEY", key_file)
    server, port = grpc_module.build(port=0, tls=grpc_module.credentials())
    server.start()
    engine = do_get_or_create_engine(app_name=APP)
    _, key = do_create_api_key(name="grpc", app_name=APP)
    yield GrpcEndpoint(target=f"localhost:{port}", engine_id=engine.engine_id, key=key), cert
    server.stop(0).wait()
