"""Agent Engine Code Execution: ``reasoningEngines/{e}/sandboxEnvironments`` as agentplatform and ADK send it.

What the clients send (shared/sandbox-wire.md §2, §4): a create whose top level is camelCase while ``spec`` is
snake_case (ADK: ``code_execution_environment``) — both spellings are read; ``:execute`` at ``{sandbox}/:execute``
(the slash included, and without it) with ``inputs`` chunks whose bytes are base64 (``mime_type`` or ``mimeType``;
a file's name in ``metadata.attributes.file_name``, itself base64; ADK sends every file's MIME type empty, so it is
guessed from the name). The answer is one JSON chunk ``{msg_out, msg_err}`` and a chunk per file the run created or
changed. Creation finishes at once (``done: true``); the operation can still be read.
"""

from __future__ import annotations

import base64
import binascii
import json
import mimetypes
from typing import Any, ClassVar

from rest_framework.parsers import BaseParser
from rest_framework.request import Request
from rest_framework.response import Response

from cognizes.access.parsers import LimitedJSONParser
from tools_app import sandbox_templates, sandboxes
from tools_app.models import SandboxEnvironment, SandboxSnapshot, SandboxTemplate
from tools_app.sandbox_client import SandboxUnavailable
from vertex_app import errors, wire
from vertex_app.base import EMPTY, VertexView, operation, page

HTTP_OF_STATUS = {
    "INVALID_ARGUMENT": 400,
    "FAILED_PRECONDITION": 400,
    "NOT_FOUND": 404,
    "ABORTED": 409,
    "RESOURCE_EXHAUSTED": 429,
    "UNAVAILABLE": 503,
}


class SandboxError(errors.GoogleError):
    """A refusal of the sandbox rules or the daemon, with its own Google status."""

    def __init__(self, status: str, message: str) -> None:
        super().__init__(message)
        self.status_code = HTTP_OF_STATUS.get(status, 500)
        self.google_status = status


def _field(body: dict[str, Any], camel: str) -> Any:
    """A field in either spelling (proto3 JSON parsers accept both; the clients mix them)."""
    return body[camel] if camel in body else body.get(wire.snake(camel))


class SandboxSurface(VertexView):
    """The engine's sandboxes, narrowed to the caller's user for a user-bound key."""

    rows_name: ClassVar[str] = "sandboxEnvironments"

    def handle_exception(self, exc: Exception) -> Response:
        if isinstance(exc, (sandboxes.SandboxRefused, SandboxUnavailable)):
            exc = SandboxError(exc.status, str(exc))
        response = super().handle_exception(exc)
        if isinstance(exc, SandboxError) and isinstance(response.data, dict) and "error" in response.data:
            response.data["error"]["status"] = exc.google_status
        return response

    def sandbox(self, sandbox_id: str) -> SandboxEnvironment:
        number = int(sandbox_id) if sandbox_id.isdigit() and len(sandbox_id) <= 18 else None
        found = None
        if number is not None:
            found = sandboxes.get_sandbox(
                app_name=self.app_name, engine_id=self.engine_id, number=number, owner=self.only_user
            )
        if found is None:
            raise errors.NotFound(f"{self.engine}/sandboxEnvironments/{sandbox_id} does not exist.")
        return found

    def snapshot(self, snapshot_id: str) -> SandboxSnapshot:
        found = None
        if snapshot_id.isdigit() and len(snapshot_id) <= 18:
            found = sandboxes.get_snapshot(
                app_name=self.app_name, engine_id=self.engine_id, number=int(snapshot_id), owner=self.only_user
            )
        if found is None:
            raise errors.NotFound(f"{self.engine}/sandboxEnvironmentSnapshots/{snapshot_id} does not exist.")
        return found

    def snapshot_resource(self, snapshot: SandboxSnapshot) -> dict[str, Any]:
        return {
            "name": f"{self.engine}/sandboxEnvironmentSnapshots/{snapshot.pk}",
            "displayName": snapshot.display_name,
            "sourceSandboxEnvironment": f"{self.engine}/sandboxEnvironments/{snapshot.source_sandbox}",
            "sizeBytes": str(snapshot.size_bytes),
            "createTime": wire.rfc3339(snapshot.created_at),
            "updateTime": wire.rfc3339(snapshot.created_at),
            "expireTime": wire.rfc3339(snapshot.expire_time),
            **({"owner": snapshot.owner} if snapshot.owner else {}),
        }

    def name(self, sandbox: SandboxEnvironment) -> str:
        return f"{self.engine}/sandboxEnvironments/{sandbox.pk}"

    def resource(self, sandbox: SandboxEnvironment) -> dict[str, Any]:
        return {
            "name": self.name(sandbox),
            "displayName": sandbox.display_name,
            "state": sandbox.state,
            "spec": {"codeExecutionEnvironment": {"codeLanguage": sandbox.language}},
            "createTime": wire.rfc3339(sandbox.created_at),
            "updateTime": wire.rfc3339(sandbox.updated_at),
            "expireTime": wire.rfc3339(sandbox.expire_time),
            **({"owner": sandbox.owner} if sandbox.owner else {}),
            **(
                {"sandboxEnvironmentTemplate": f"{self.engine}/sandboxEnvironmentTemplates/{sandbox.template}"}
                if sandbox.template is not None
                else {}
            ),
        }


class SandboxesView(SandboxSurface):
    """``POST`` creates a sandbox (an operation, done at once); ``GET`` lists the engine's."""

    def post(self, request: Request, **kwargs: Any) -> Response:
        """Create a sandbox: a persistent interpreter with its own workspace (the operation is done at once)."""
        owner = self.scope(self.only_user, write=True).only_user or ""
        body = wire.mapping(request.data, "body")
        spec = wire.mapping(body.get("spec"), "spec")
        environment = wire.mapping(_field(spec, "codeExecutionEnvironment"), "spec.codeExecutionEnvironment")
        if _field(spec, "computerUseEnvironment") or _field(spec, "shellEnvironment"):
            raise errors.InvalidArgument("Only code execution environments are offered by this server.")
        template = self.named_template(
            wire.string(_field(body, "sandboxEnvironmentTemplate"), "sandboxEnvironmentTemplate")
        )
        snapshot = None
        snapshot_name = wire.string(_field(body, "sandboxEnvironmentSnapshot"), "sandboxEnvironmentSnapshot")
        if snapshot_name:
            snapshot = self.snapshot(snapshot_name.rsplit("/", 1)[-1])
        language = wire.string(_field(environment, "codeLanguage"), "codeLanguage") or "LANGUAGE_PYTHON"
        if language.upper() == "LANGUAGE_UNSPECIFIED":
            language = "LANGUAGE_PYTHON"
        expiry = wire.expiry({"ttl": body.get("ttl"), "expire_time": _field(body, "expireTime")})
        created = sandboxes.do_create_sandbox(
            app_name=self.app_name,
            engine_id=self.engine_id,
            language=language.upper(),
            spec=spec,
            display_name=wire.string(_field(body, "displayName"), "displayName")[:512],
            expire_time=expiry,
            owner=owner or wire.string(body.get("owner"), "owner")[:128],
            snapshot=snapshot,
            memory_bytes=None if template is None else template.memory_bytes,
            template=None if template is None else template.pk,
        )
        return Response(self.operation(created))

    def named_template(self, template_name: str) -> SandboxTemplate | None:
        """The template named (None: none named); 404 for one not the engine's."""
        if not template_name:
            return None
        number = template_name.rsplit("/", 1)[-1]
        found = None
        if number.isdigit() and len(number) <= 18:
            found = sandbox_templates.get_template(app_name=self.app_name, engine_id=self.engine_id, number=int(number))
        if found is None:
            raise errors.NotFound(f"{self.engine}/sandboxEnvironmentTemplates/{number} does not exist.")
        return found

    def operation(self, sandbox: SandboxEnvironment) -> dict[str, Any]:
        return operation(f"{self.name(sandbox)}/operations/{sandbox.pk}", self.resource(sandbox))

    def get(self, request: Request, **kwargs: Any) -> Response:
        """List the engine's sandboxes (a key of one user: its own)."""
        rows = sandboxes.list_sandboxes(app_name=self.app_name, engine_id=self.engine_id, owner=self.only_user)
        return Response(page(request, rows.order_by("-id"), self.rows_name, self.resource))


class SandboxView(SandboxSurface):
    """A sandbox: read or deleted."""

    def get(self, request: Request, sandbox_id: str, **kwargs: Any) -> Response:
        """Read a sandbox: its state, language and expiry."""
        return Response(self.resource(self.sandbox(sandbox_id)))

    def delete(self, request: Request, sandbox_id: str, **kwargs: Any) -> Response:
        """Delete a sandbox: its interpreter ends and its workspace goes."""
        sandbox = self.sandbox(sandbox_id)
        self.scope(sandbox.owner or self.only_user, write=True)
        name = self.name(sandbox)
        sandboxes.do_delete_sandbox(sandbox)
        return Response(operation(f"{name}/operations/delete", kind=EMPTY))


class SandboxOperationView(SandboxSurface):
    """The create operation (already done): its response is the sandbox as it is now."""

    def get(self, request: Request, sandbox_id: str, operation_id: str, **kwargs: Any) -> Response:
        """Read a sandbox's create operation: done, with the sandbox as it is now."""
        sandbox = self.sandbox(sandbox_id)
        if operation_id != str(sandbox.pk):
            raise errors.NotFound(f"{self.name(sandbox)}/operations/{operation_id} does not exist.")
        return Response(operation(f"{self.name(sandbox)}/operations/{operation_id}", self.resource(sandbox)))


class _LargerJSONParser(LimitedJSONParser):
    limit_setting = "COGNIZES_SANDBOX_MAX_BODY_BYTES"


class _ExecuteBodyParser(BaseParser):
    """JSON up to COGNIZES_SANDBOX_MAX_BODY_BYTES, read from the request's stream: DRF hands a ``JSONParser`` the
    whole body through Django's ``request.body``, which refuses more than DATA_UPLOAD_MAX_MEMORY_SIZE (2.5 MB) as a
    400, so this parser is not one; it runs LimitedJSONParser's checks on what it reads."""

    media_type = "application/json"

    def parse(self, stream: Any, media_type: str | None = None, parser_context: Any = None) -> Any:
        return _LargerJSONParser().parse(stream, media_type, parser_context)


class ExecuteView(SandboxSurface):
    """``:execute``: the code chunk and file chunks in; ``{msg_out, msg_err}`` and the changed files out."""

    parser_classes = [_ExecuteBodyParser]

    def post(self, request: Request, sandbox_id: str, **kwargs: Any) -> Response:
        """Run code (or a bash command) in the sandbox's interpreter, with files in; its output and files out."""
        sandbox = self.sandbox(sandbox_id)
        self.scope(sandbox.owner or self.only_user, write=True)
        body = wire.mapping(request.data, "body")
        bash = _bash(body)
        if bash is not None:
            result = sandboxes.do_execute(
                sandbox, code="", files=[], user_id=self.only_user or "", command=bash[0], cwd=bash[1]
            )
            return Response({"outputs": [{"mimeType": "application/json", "data": _b64(result.stdout)}]})
        code, files = _inputs(body)
        result = sandboxes.do_execute(sandbox, code=code, files=files, user_id=self.only_user or "")
        outputs: list[dict[str, Any]] = [
            {
                "mimeType": "application/json",
                "data": _b64(json.dumps({"msg_out": result.stdout, "msg_err": result.stderr})),
            }
        ]
        for item in result.files:
            outputs.append(
                {
                    "mimeType": mimetypes.guess_type(item.name)[0] or "application/octet-stream",
                    "data": base64.b64encode(item.content).decode(),
                    "metadata": {"attributes": {"file_name": _b64(item.name)}},
                }
            )
        return Response({"outputs": outputs})


class PauseView(SandboxSurface):
    """``:pause`` and ``:resume`` (an operation, done at once): the interpreter is stopped, not ended, so its
    variables are there again after ``:resume``."""

    paused: ClassVar[bool] = True

    def post(self, request: Request, sandbox_id: str, **kwargs: Any) -> Response:
        """Pause the sandbox's interpreter: stopped, its variables kept for resume."""
        sandbox = self.sandbox(sandbox_id)
        self.scope(sandbox.owner or self.only_user, write=True)
        sandboxes.do_pause(sandbox, paused=self.paused)
        verb = "pause" if self.paused else "resume"
        return Response(operation(f"{self.name(sandbox)}/operations/{verb}", self.resource(sandbox)))


class ResumeView(PauseView):
    paused = False

    def post(self, request: Request, sandbox_id: str, **kwargs: Any) -> Response:
        """Resume a paused sandbox's interpreter, with the variables it had."""
        return super().post(request, sandbox_id, **kwargs)


class SnapshotView(SandboxSurface):
    """``{sandbox}:snapshot`` (an operation, done at once) keeps its workspace and picklable variables."""

    def post(self, request: Request, sandbox_id: str, **kwargs: Any) -> Response:
        """Snapshot a sandbox: its workspace and picklable variables, to restore into a new one."""
        sandbox = self.sandbox(sandbox_id)
        self.scope(sandbox.owner or self.only_user, write=True)
        body = wire.mapping(request.data, "body")
        display_name = wire.string(_field(body, "displayName"), "displayName")[:512]
        snapshot = sandboxes.do_snapshot(sandbox, display_name=display_name)
        resource = self.snapshot_resource(snapshot)
        return Response(operation(f"{resource['name']}/operations/{snapshot.pk}", resource))


class SnapshotsView(SandboxSurface):
    """The engine's sandbox snapshots."""

    def get(self, request: Request, **kwargs: Any) -> Response:
        """List the engine's sandbox snapshots."""
        rows = sandboxes.list_snapshots(app_name=self.app_name, engine_id=self.engine_id, owner=self.only_user)
        return Response(page(request, rows.order_by("-id"), "sandboxEnvironmentSnapshots", self.snapshot_resource))


class SnapshotResourceView(SandboxSurface):
    """A sandbox snapshot: read or deleted."""

    def get(self, request: Request, snapshot_id: str, **kwargs: Any) -> Response:
        """Read a sandbox snapshot."""
        return Response(self.snapshot_resource(self.snapshot(snapshot_id)))

    def delete(self, request: Request, snapshot_id: str, **kwargs: Any) -> Response:
        """Delete a sandbox snapshot."""
        snapshot = self.snapshot(snapshot_id)
        self.scope(snapshot.owner or self.only_user, write=True)
        name = self.snapshot_resource(snapshot)["name"]
        sandboxes.do_delete_snapshot(snapshot)
        return Response(operation(f"{name}/operations/delete", kind=EMPTY))


class SnapshotOperationView(SandboxSurface):
    """A snapshot's operation (already done)."""

    def get(self, request: Request, snapshot_id: str, operation_id: str, **kwargs: Any) -> Response:
        """Read a snapshot's operation: done, with the snapshot."""
        resource = self.snapshot_resource(self.snapshot(snapshot_id))
        if operation_id != snapshot_id:
            raise errors.NotFound(f"{resource['name']}/operations/{operation_id} does not exist.")
        return Response(operation(f"{resource['name']}/operations/{operation_id}", resource))


def _bash(body: dict[str, Any]) -> tuple[str, str | None] | None:
    """``execute_bash``'s request (chunks naming the URI ``/exec``, then JSON ``{command, cwd?, timeout?}``)."""
    chunks = body.get("inputs")
    if not isinstance(chunks, list) or not any(
        isinstance(chunk, dict) and _field(chunk, "mimeType") == "application/x.sandbox-request-uri" for chunk in chunks
    ):
        return None
    for index, chunk in enumerate(chunks):
        if isinstance(chunk, dict) and _field(chunk, "mimeType") == "application/json":
            try:
                request = json.loads(_bytes(chunk.get("data"), f"inputs[{index}].data"))
            except (ValueError, UnicodeDecodeError):
                raise errors.InvalidArgument(f"'inputs[{index}]' is not JSON.") from None
            if not isinstance(request, dict) or not isinstance(request.get("command"), str):
                raise errors.InvalidArgument('The command chunk must be JSON {"command": …}.')
            cwd = request.get("cwd")
            return request["command"], cwd if isinstance(cwd, str) else None
    raise errors.InvalidArgument("'inputs' has no command chunk (application/json {\"command\": …}).")


def _b64(text: str) -> str:
    return base64.b64encode(text.encode()).decode()


def _bytes(value: Any, name: str) -> bytes:
    if value is None:
        return b""
    if not isinstance(value, str):
        raise errors.InvalidArgument(f"'{name}' must be base64 bytes.")
    try:
        return base64.b64decode(
            value + "=" * (-len(value) % 4), altchars=b"-_" if "-" in value or "_" in value else None
        )
    except (binascii.Error, ValueError):
        raise errors.InvalidArgument(f"'{name}' is not base64.") from None


def _inputs(body: dict[str, Any]) -> tuple[str, list[tuple[str, bytes]]]:
    """The code (the JSON chunk without a file name) and the files of an ``:execute`` body."""
    chunks = body.get("inputs")
    if not isinstance(chunks, list):
        raise errors.InvalidArgument("'inputs' must be a list of chunks.")
    code: str | None = None
    files: list[tuple[str, bytes]] = []
    for index, chunk in enumerate(chunks):
        where = f"inputs[{index}]"
        chunk = wire.mapping(chunk, where)
        data = _bytes(chunk.get("data"), f"{where}.data")
        attributes = wire.mapping(
            wire.mapping(chunk.get("metadata"), f"{where}.metadata").get("attributes"), "attributes"
        )
        if attributes.get("file_name") is not None or attributes.get("fileName") is not None:
            raw = _bytes(_field(attributes, "fileName"), f"{where}.metadata.attributes.file_name")
            name = raw.decode("utf-8", "replace").strip()
            if not name or "\x00" in name:
                raise errors.InvalidArgument(f"'{where}' has no file name.")
            files.append((name, data))
            continue
        mime = wire.string(_field(chunk, "mimeType"), f"{where}.mimeType")
        if mime not in ("application/json", ""):
            raise errors.InvalidArgument(f"'{where}': this server runs code chunks (application/json) and files.")
        try:
            payload = json.loads(data)
        except (ValueError, UnicodeDecodeError):
            raise errors.InvalidArgument(f"'{where}' is not JSON with the code.") from None
        if not isinstance(payload, dict) or not isinstance(payload.get("code"), str):
            raise errors.InvalidArgument(f"'{where}' must be JSON {{\"code\": …}}.")
        code = (code + "\n" if code else "") + payload["code"]
    if code is None:
        raise errors.InvalidArgument("'inputs' has no code chunk (application/json {\"code\": …}).")
    return code, files
