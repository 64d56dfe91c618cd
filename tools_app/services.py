"""The rules of the tool registry and its audit: the admin, the API and the ADK classes all call these.

Every write to a tool bumps its version, snapshots it into ``ToolVersion`` and
bumps the app's ``ToolRegistryMarker`` in one transaction; ``DatabaseToolset``
compares that one row to decide whether its cached tools are still current.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any

from django.conf import settings
from django.db import IntegrityError, connection, transaction
from django.utils import timezone
from django.utils.module_loading import import_string

from tools_app.models import (
    MAX_NAME_LENGTH,
    ApprovalStatus,
    SandboxExecution,
    Tool,
    ToolApproval,
    ToolExecution,
    ToolKind,
    ToolVersion,
)
from tools_app.openapi import InvalidOpenApi, ParsedOperation, build_rest_api_tool, load_document, parse_operations
from tools_app.secret_headers import check_secret_auth

NAME_PATTERN = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")
EDITABLE_FIELDS = (
    "name",
    "description",
    "kind",
    "openapi_operation",
    "callable_path",
    "enabled",
    "requires_approval",
    "base_url",
    "auth_scheme",
    "auth_secret_source",
    "auth_secret_name",
    "auth_header_name",
    "timeout_seconds",
)


class ToolError(ValueError):
    """A tool change that breaks a registry rule; the message says which."""


class InvalidTool(ToolError):
    def __init__(self, errors: dict[str, str]):
        super().__init__("; ".join(f"{key}: {message}" for key, message in errors.items()))
        self.errors = errors


class ToolExists(ToolError):
    pass


class StaleTool(ToolError):
    pass


class ApprovalAlreadyDecided(ToolError):
    pass


class InvalidArguments(ToolError):
    """Arguments that do not match the tool's parameter schema; the message says where."""


# ---- the registry ------------------------------------------------------------------------------


def get_registry_version(*, app_name: str) -> int:
    """The app's change counter: the one cheap query an agent makes before reusing its tools."""
    with connection.cursor() as cursor:
        cursor.execute("SELECT version FROM tools_app_toolregistrymarker WHERE app_name = %s", [app_name])
        row = cursor.fetchone()
    return row[0] if row else 0


def get_enabled_tools(*, app_name: str) -> tuple[int, list[Tool]]:
    """The registry version and the app's enabled tools.

    The version is read first: a change landing in between makes the caller
    reload once more on its next check, never keep stale tools.
    """
    version = get_registry_version(app_name=app_name)
    return version, list(Tool.objects.enabled().filter(app_name=app_name))


def check_arguments(schema: dict[str, Any], arguments: Any) -> None:
    """Raise ``InvalidArguments`` unless ``arguments`` is an object valid under the tool's JSON ``schema``.

    A caller outside an agent run (MCP) gets this before anything runs; a model's
    calls are left to the tool, which answers the model so it can correct itself.
    """
    if not isinstance(arguments, dict):
        raise InvalidArguments("The arguments must be a JSON object.")
    import jsonschema  # here: loading the tools admin with Django need not load it (issue 43)

    try:
        validator = jsonschema.validators.validator_for(schema, default=jsonschema.Draft202012Validator)(schema)
        error = jsonschema.exceptions.best_match(validator.iter_errors(arguments))
    except jsonschema.exceptions.SchemaError:
        return  # a schema ADK derived that jsonschema cannot read: the tool checks its own arguments
    if error is not None:
        where = "/".join(str(part) for part in error.absolute_path)
        raise InvalidArguments(f"{where + ': ' if where else ''}{error.message}")


def resolve_callable(path: str) -> Callable[..., Any]:
    """The allow-listed function at ``path``; nothing else is ever imported from a row."""
    if path not in settings.COGNIZES_TOOL_CALLABLES:
        raise ToolError(f"{path!r} is not in COGNIZES_TOOL_CALLABLES.")
    try:
        function = import_string(path)
    except ImportError as e:
        raise ToolError(f"{path!r} cannot be imported: {e}") from e
    if not callable(function):
        raise ToolError(f"{path!r} is not callable.")
    return function


def _parameters_schema(tool: Tool) -> dict[str, Any]:
    if tool.kind == ToolKind.OPENAPI:
        assert tool.openapi_operation is not None  # an OpenAPI row has its operation (check_tool)
        return build_rest_api_tool(tool.openapi_operation)._operation_parser.get_json_schema()
    from google.adk.tools.function_tool import FunctionTool

    declaration = FunctionTool(resolve_callable(tool.callable_path))._get_declaration()
    assert declaration is not None  # a FunctionTool always declares itself
    if declaration.parameters_json_schema is not None:
        return declaration.parameters_json_schema
    return declaration.parameters.model_dump(mode="json", exclude_none=True) if declaration.parameters else {}


def check_tool(tool: Tool) -> None:
    """Validate ``tool`` and derive its parameter schema; raise ``InvalidTool`` listing every problem."""
    errors: dict[str, str] = {}
    if not NAME_PATTERN.match(tool.name) or len(tool.name) > MAX_NAME_LENGTH:
        errors["name"] = f"Letters, digits and underscores, not starting with a digit, at most {MAX_NAME_LENGTH}."
    if tool.kind not in ToolKind.values:
        errors["kind"] = f"One of {', '.join(ToolKind.values)}."
    elif tool.kind == ToolKind.OPENAPI:
        if not isinstance(tool.openapi_operation, dict):
            errors["openapi_operation"] = "An OpenAPI 3 document with one operation is required."
        else:
            try:
                operations = parse_operations(tool.openapi_operation)
                if len(operations) != 1:
                    errors["openapi_operation"] = f"Expected one operation, found {len(operations)}."
            except InvalidOpenApi as e:
                errors["openapi_operation"] = str(e)
        document = tool.openapi_operation if isinstance(tool.openapi_operation, dict) else {}
        if not tool.base_url and not document.get("servers"):
            errors["base_url"] = "Set a base URL or a 'servers' entry in the document."
    else:
        try:
            resolve_callable(tool.callable_path)
        except ToolError as e:
            errors["callable_path"] = str(e)
    check_secret_auth(tool, errors, app_name=tool.app_name)
    if not tool.timeout_seconds or tool.timeout_seconds <= 0:
        errors["timeout_seconds"] = "Must be positive."
    if errors:
        raise InvalidTool(errors)
    tool.parameters_schema = _parameters_schema(tool)


def _snapshot(tool: Tool) -> dict[str, Any]:
    return {name: getattr(tool, name) for name in (*EDITABLE_FIELDS, "parameters_schema")}


def bump_marker(app_name: str) -> None:
    with connection.cursor() as cursor:
        cursor.execute(
            "INSERT INTO tools_app_toolregistrymarker (app_name, version) VALUES (%s, 1) "
            "ON CONFLICT (app_name) DO UPDATE SET version = tools_app_toolregistrymarker.version + 1",
            [app_name],
        )


def _record_version(tool: Tool, actor: str) -> None:
    ToolVersion.objects.create(tool=tool, version=tool.version, snapshot=_snapshot(tool), changed_by=actor)
    bump_marker(tool.app_name)


def do_create_tool(*, app_name: str, actor: str = "", **fields: Any) -> Tool:
    """Add a tool to the app's registry; agents of the app see it on their next model turn."""
    refuse_unknown_fields(fields, EDITABLE_FIELDS)
    tool = Tool(app_name=app_name, **fields)
    check_tool(tool)
    try:
        with transaction.atomic():
            tool.save()
            _record_version(tool, actor)
    except IntegrityError as e:
        raise ToolExists(f"App {app_name!r} already has a tool named {tool.name!r}.") from e
    return tool


def refuse_unknown_fields(fields: Iterable[str], editable: Iterable[str]) -> None:
    """``InvalidTool`` naming each field of a change that is not one of the row's ``editable`` ones."""
    unknown = set(fields) - set(editable)
    if unknown:
        raise InvalidTool(dict.fromkeys(sorted(unknown), "Unknown field."))


def save_new_version(row: Any, *, what: str, expected_version: int | None, then: Callable[[], None]) -> None:
    """Save an edited registry row (a tool, an MCP server) as its next version, then ``then()``, in one transaction.

    With ``expected_version``, refuse (``StaleTool``) if someone saved another version first. Call it inside
    ``transaction.atomic()``; an ``IntegrityError`` (a name taken) is the caller's to word.
    """
    current = type(row).objects.select_for_update().filter(pk=row.pk).values_list("version", flat=True).first()
    if current is None:
        raise ToolError(f"The {what} no longer exists.")
    if expected_version is not None and current != expected_version:
        raise StaleTool(f"The {what} is at version {current}, not {expected_version}.")
    row.version = current + 1
    row.save()
    then()


def do_update_tool(
    tool: Tool, *, changes: dict[str, Any], actor: str = "", expected_version: int | None = None
) -> Tool:
    """Change a tool and bump its version; with ``expected_version``, refuse if someone changed it first."""
    refuse_unknown_fields(changes, EDITABLE_FIELDS)
    for name, value in changes.items():
        setattr(tool, name, value)
    check_tool(tool)
    try:
        with transaction.atomic():
            save_new_version(
                tool, what="tool", expected_version=expected_version, then=lambda: _record_version(tool, actor)
            )
    except IntegrityError as e:
        raise ToolExists(f"App {tool.app_name!r} already has a tool named {tool.name!r}.") from e
    return tool


def do_delete_tool(tool: Tool, *, actor: str = "") -> None:
    """Remove a tool (and its history); agents stop seeing it on their next model turn."""
    with transaction.atomic():
        tool.delete()
        bump_marker(tool.app_name)


def do_set_enabled(tools: Iterable[Tool], *, enabled: bool, actor: str = "") -> int:
    """Switch tools on or off; return how many changed."""
    changed = 0
    for tool in tools:
        if tool.enabled != enabled:
            do_update_tool(tool, changes={"enabled": enabled}, actor=actor)
            changed += 1
    return changed


@dataclass
class ImportReport:
    """What an OpenAPI import did, by tool name."""

    created: list[str] = field(default_factory=list)
    changed: list[str] = field(default_factory=list)
    unchanged: list[str] = field(default_factory=list)
    rejected: dict[str, str] = field(default_factory=dict)

    def as_dict(self) -> dict[str, Any]:
        return {
            "created": self.created,
            "changed": self.changed,
            "unchanged": self.unchanged,
            "rejected": self.rejected,
        }


def _import_operation(
    app_name: str,
    operation: ParsedOperation,
    base_url: str,
    actor: str,
    report: ImportReport,
    *,
    may_change: bool,
) -> None:
    existing = Tool.objects.filter(app_name=app_name, name=operation.name).first()
    fields = {"description": operation.description, "openapi_operation": operation.document}
    if base_url:
        fields["base_url"] = base_url
    try:
        if existing is None:
            do_create_tool(app_name=app_name, actor=actor, name=operation.name, kind=ToolKind.OPENAPI, **fields)
            report.created.append(operation.name)
        elif existing.kind != ToolKind.OPENAPI:
            report.rejected[operation.name] = "A Python tool of the app already has this name."
        elif all(getattr(existing, key) == value for key, value in fields.items()):
            report.unchanged.append(operation.name)
        elif not may_change:
            report.rejected[operation.name] = "The app already has this tool, and this import may not change tools."
        else:
            do_update_tool(existing, changes=fields, actor=actor)
            report.changed.append(operation.name)
    except InvalidTool as e:
        report.rejected[operation.name] = str(e)


def do_import_openapi(
    *,
    app_name: str,
    document: str | bytes | dict[str, Any],
    base_url: str = "",
    actor: str = "",
    may_change: bool = True,
) -> ImportReport:
    """Create or update one tool per operation of an OpenAPI 3 document.

    A document that is not usable as a whole raises ``InvalidOpenApi`` and
    changes nothing; operations that break a registry rule one by one are
    reported as rejected while the others are imported. ``may_change=False``
    (an admin user who may add tools but not change them) only adds: an
    operation that would change an existing tool is reported as rejected.
    """
    operations = parse_operations(load_document(document))
    names = [operation.name for operation in operations]
    duplicates = sorted({name for name in names if names.count(name) > 1})
    if duplicates:
        raise InvalidOpenApi(f"Several operations map to the same tool name: {', '.join(duplicates)}.")
    report = ImportReport()
    with transaction.atomic():
        for operation in operations:
            _import_operation(app_name, operation, base_url, actor, report, may_change=may_change)
    return report


# ---- the audit ---------------------------------------------------------------------------------


def result_for_audit(result: Any) -> tuple[Any, int, bool]:
    """The result as stored (cut past ``COGNIZES_TOOL_RESULT_MAX_BYTES``), its full size, and whether it was cut."""
    text = json.dumps(result, default=str, ensure_ascii=False)
    size = len(text.encode())
    limit = settings.COGNIZES_TOOL_RESULT_MAX_BYTES
    if size <= limit:
        return json.loads(text), size, False
    return {"truncated": text.encode()[:limit].decode(errors="ignore")}, size, True


def do_record_execution(**fields: Any) -> ToolExecution:
    """Store one audited tool call (called off the event loop by ``AuditPlugin``)."""
    result, size, truncated = result_for_audit(fields.pop("result", None))
    fields["arguments"] = json.loads(json.dumps(fields.get("arguments") or {}, default=str))
    return ToolExecution.objects.create(result=result, result_size=size, result_truncated=truncated, **fields)


def do_record_sandbox_execution(**fields: Any) -> SandboxExecution:
    return SandboxExecution.objects.create(**fields)


def do_record_approval_request(**fields: Any) -> ToolApproval:
    """Store a paused call waiting for a decision (idempotent on ADK's request id)."""
    approval, _ = ToolApproval.objects.get_or_create(request_id=fields.pop("request_id"), defaults=fields)
    return approval


def do_decide_approval(approval: ToolApproval, *, approved: bool, actor: str = "") -> ToolApproval:
    """Approve or reject a paused call, once; the agent gets the decision when it resumes."""
    status = ApprovalStatus.APPROVED if approved else ApprovalStatus.REJECTED
    now = timezone.now()
    updated = ToolApproval.objects.filter(pk=approval.pk, status=ApprovalStatus.PENDING).update(
        status=status, decided_by=actor, decided_at=now
    )
    if not updated:
        raise ApprovalAlreadyDecided("This call was already approved or rejected.")
    approval.status, approval.decided_by, approval.decided_at = status, actor, now
    return approval


def do_take_approval_of_call(
    *,
    app_name: str,
    user_id: str,
    session_id: str,
    tool_name: str,
    arguments: dict[str, Any],
) -> ToolApproval | None:
    """The paused call with these very arguments not yet handed back: a decided one is marked handed over.

    For callers that repeat a call instead of resuming a run (MCP): the first call
    paused it, a person decided, and the same call again runs (or is rejected) once.
    A pending one is returned as it is, so repeating a call does not ask twice.
    """
    with transaction.atomic():
        approval = (
            ToolApproval.objects.select_for_update()
            .filter(
                app_name=app_name,
                user_id=user_id,
                session_id=session_id,
                tool_name=tool_name,
                arguments=arguments,
                delivered_at__isnull=True,
            )
            .order_by("created_at", "id")
            .first()
        )
        if approval is not None and approval.status != ApprovalStatus.PENDING:
            approval.delivered_at = timezone.now()
            approval.save(update_fields=["delivered_at"])
    return approval


def do_take_decided_approvals(*, app_name: str, user_id: str, session_id: str) -> list[ToolApproval]:
    """The session's decisions not yet handed to the agent, marked as handed over."""
    with transaction.atomic():
        approvals = list(
            ToolApproval.objects.select_for_update(skip_locked=True)
            .filter(app_name=app_name, user_id=user_id, session_id=session_id, delivered_at__isnull=True)
            .exclude(status=ApprovalStatus.PENDING)
            .order_by("created_at", "id")
        )
        ToolApproval.objects.filter(pk__in=[a.pk for a in approvals]).update(delivered_at=timezone.now())
    return approvals
