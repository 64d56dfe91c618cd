"""HTTP API for the tool registry (CRUD + OpenAPI import), external MCP servers, the app's secrets, the audit
(read-only) and approvals.

Tools belong to an app, so their URLs are app-wide; a key restricted to one
user may read the registry but not change it, and sees only its user's
executions and approvals. Writes call ``tools_app.services``, the same rules
as the admin's. Secrets and an MCP server's headers are write-only: no
response carries a value (issue 41 A), only names and times.
"""

from __future__ import annotations

from typing import Any

from django.db.models import QuerySet
from django.http import Http404
from django_filters import rest_framework as filters
from drf_spectacular.utils import extend_schema
from rest_framework import exceptions, serializers, status
from rest_framework.request import Request
from rest_framework.response import Response

from cognizes.access.api import BIGINT, Conflict, ScopedView, SinceFilter, filtered, page_of, paginated, valid
from cognizes.access.key_kinds import check_whole_app
from cognizes.access.schema import filter_parameters
from tools_app import mcp_servers, secrets, services
from tools_app.models import (
    AppSecret,
    AuthScheme,
    McpServer,
    McpTransport,
    SecretSource,
    Tool,
    ToolApproval,
    ToolExecution,
    ToolKind,
)
from tools_app.openapi import InvalidOpenApi

# ---- serializers -------------------------------------------------------------------------------


class ToolSerializer(serializers.ModelSerializer):
    class Meta:
        model = Tool
        fields = [
            "name",
            "description",
            "kind",
            "openapi_operation",
            "callable_path",
            "parameters_schema",
            "enabled",
            "requires_approval",
            "version",
            "base_url",
            "auth_scheme",
            "auth_secret_source",
            "auth_secret_name",
            "auth_header_name",
            "timeout_seconds",
            "created_at",
            "updated_at",
        ]


class ToolWriteSerializer(serializers.Serializer):
    name = serializers.CharField(max_length=64, help_text="Function name the model sees; unique in the app.")
    description = serializers.CharField(required=False, allow_blank=True, help_text="What the model is told.")
    kind = serializers.ChoiceField(choices=ToolKind.choices)
    openapi_operation = serializers.JSONField(required=False, help_text="OpenAPI 3 document with one operation.")
    callable_path = serializers.CharField(required=False, allow_blank=True, help_text="Allow-listed dotted path.")
    enabled = serializers.BooleanField(required=False)
    requires_approval = serializers.BooleanField(required=False)
    base_url = serializers.CharField(required=False, allow_blank=True)
    auth_scheme = serializers.ChoiceField(choices=AuthScheme.choices, required=False)
    auth_secret_source = serializers.ChoiceField(
        choices=SecretSource.choices,
        required=False,
        help_text=(
            "'app' (default): one of the app's secrets (secrets/); 'env': a variable COGNIZES_ENV_SECRETS allows."
        ),
    )
    auth_secret_name = serializers.CharField(
        required=False,
        allow_blank=True,
        help_text="Name of the secret the header carries (never its value).",
    )
    auth_header_name = serializers.CharField(required=False)
    timeout_seconds = serializers.FloatField(required=False, min_value=0.001)


class ToolPatchSerializer(ToolWriteSerializer):
    name = serializers.CharField(max_length=64, required=False)
    kind = serializers.ChoiceField(choices=ToolKind.choices, required=False)
    expected_version = serializers.IntegerField(
        required=False,
        min_value=1,
        max_value=BIGINT,
        help_text="The version you last read; 409 Conflict if the tool moved on.",
    )


class McpServerSerializer(serializers.ModelSerializer):
    header_names = serializers.SerializerMethodField(
        help_text="The names of the headers the row sends; their values are write-only (they may carry credentials)."
    )

    class Meta:
        model = McpServer
        fields = [
            "name",
            "description",
            "url",
            "transport",
            "header_names",
            "allowed_tools",
            "denied_tools",
            "tool_name_prefix",
            "enabled",
            "requires_approval",
            "auth_scheme",
            "auth_secret_source",
            "auth_secret_name",
            "auth_header_name",
            "timeout_seconds",
            "list_cache_seconds",
            "version",
            "discovered_tools",
            "discovered_at",
            "created_at",
            "updated_at",
        ]

    def get_header_names(self, server: McpServer) -> list[str]:
        return sorted(server.headers) if isinstance(server.headers, dict) else []


class McpServerWriteSerializer(serializers.Serializer):
    name = serializers.CharField(max_length=64, help_text="Unique in the app (letters, digits, underscores).")
    description = serializers.CharField(required=False, allow_blank=True)
    url = serializers.CharField(max_length=2048, help_text="The server's MCP endpoint (http or https).")
    transport = serializers.ChoiceField(choices=McpTransport.choices, required=False)
    headers = serializers.JSONField(
        required=False, help_text='Extra headers sent as they are: {"X-Tenant": "acme"}; write-only (names shown).'
    )
    allowed_tools = serializers.JSONField(required=False, help_text="The server's tool names agents get; [] all.")
    denied_tools = serializers.JSONField(required=False, help_text="The server's tool names agents never get.")
    tool_name_prefix = serializers.CharField(max_length=32, required=False, allow_blank=True)
    enabled = serializers.BooleanField(required=False)
    requires_approval = serializers.BooleanField(required=False)
    auth_scheme = serializers.ChoiceField(choices=AuthScheme.choices, required=False)
    auth_secret_source = serializers.ChoiceField(
        choices=SecretSource.choices,
        required=False,
        help_text=(
            "'app' (default): one of the app's secrets (secrets/); 'env': a variable COGNIZES_ENV_SECRETS allows."
        ),
    )
    auth_secret_name = serializers.CharField(
        required=False,
        allow_blank=True,
        help_text="Name of the secret the header carries (never its value).",
    )
    auth_header_name = serializers.CharField(required=False)
    timeout_seconds = serializers.FloatField(required=False, min_value=0.001)
    list_cache_seconds = serializers.FloatField(required=False, min_value=0)


class McpServerPatchSerializer(McpServerWriteSerializer):
    name = serializers.CharField(max_length=64, required=False)
    url = serializers.CharField(max_length=2048, required=False)
    expected_version = serializers.IntegerField(
        required=False,
        min_value=1,
        max_value=BIGINT,
        help_text="The version you last read; 409 Conflict if the server row moved on.",
    )


class AppSecretSerializer(serializers.ModelSerializer):
    class Meta:
        model = AppSecret
        fields = ["name", "created_at", "updated_at"]


class SecretWriteSerializer(serializers.Serializer):
    value = serializers.CharField(
        write_only=True,
        trim_whitespace=False,
        help_text=(
            "The secret (an API key, a token): stored encrypted, sent only by the app's rows naming it, never shown."
        ),
    )


class ImportSerializer(serializers.Serializer):
    document = serializers.JSONField(help_text="An OpenAPI 3 document, as JSON or as JSON/YAML text.")
    base_url = serializers.CharField(required=False, allow_blank=True, default="", help_text="Overrides 'servers'.")


class ImportReportSerializer(serializers.Serializer):
    created = serializers.ListField(child=serializers.CharField())
    changed = serializers.ListField(child=serializers.CharField())
    unchanged = serializers.ListField(child=serializers.CharField())
    rejected = serializers.DictField(child=serializers.CharField(), help_text="Tool name → why it was rejected.")


class ToolExecutionSerializer(serializers.ModelSerializer):
    class Meta:
        model = ToolExecution
        fields = [
            "id",
            "user_id",
            "session_id",
            "invocation_id",
            "function_call_id",
            "tool_name",
            "tool_version",
            "arguments",
            "result",
            "result_size",
            "result_truncated",
            "error",
            "status",
            "started_at",
            "duration_ms",
            "client",
            "mcp_server",
        ]


class ToolApprovalSerializer(serializers.ModelSerializer):
    class Meta:
        model = ToolApproval
        fields = [
            "id",
            "user_id",
            "session_id",
            "invocation_id",
            "function_call_id",
            "tool_name",
            "arguments",
            "status",
            "decided_by",
            "decided_at",
            "delivered_at",
            "created_at",
        ]


class DecisionSerializer(serializers.Serializer):
    approved = serializers.BooleanField(help_text="True runs the paused call, false rejects it.")


# ---- helpers -----------------------------------------------------------------------------------


def _actor(request: Request) -> str:
    return f"api:{request.user}"


def _check_can_manage(view: ScopedView) -> None:
    check_whole_app(view.scope.only_user, view.scope.app_name, "change the app's tools")


def _raise_for(error: services.ToolError) -> None:
    if isinstance(error, services.InvalidTool):
        raise exceptions.ValidationError(error.errors) from error
    if isinstance(
        error, (services.StaleTool, services.ToolExists, services.ApprovalAlreadyDecided, secrets.SecretInUse)
    ):
        raise Conflict(str(error)) from error
    raise exceptions.ValidationError(str(error)) from error


def _tool(app_name: str, name: str) -> Tool:
    tool = Tool.objects.filter(app_name=app_name, name=name).first()
    if tool is None:
        raise Http404
    return tool


def _for_caller(view: ScopedView, queryset: QuerySet) -> QuerySet:
    queryset = queryset.filter(app_name=view.scope.app_name)
    return queryset.filter(user_id=view.scope.only_user) if view.scope.only_user else queryset


class ToolFilter(filters.FilterSet):
    class Meta:
        model = Tool
        fields = ["kind", "enabled", "requires_approval"]


class ToolExecutionFilter(filters.FilterSet):
    started_since = SinceFilter("started_at")

    class Meta:
        model = ToolExecution
        fields = ["user_id", "session_id", "invocation_id", "tool_name", "mcp_server", "status", "started_since"]


class ToolApprovalFilter(filters.FilterSet):
    class Meta:
        model = ToolApproval
        fields = ["user_id", "session_id", "status"]


# ---- views -------------------------------------------------------------------------------------


class ToolsView(ScopedView):
    """The app's tool registry."""

    @extend_schema(
        operation_id="list_tools", parameters=filter_parameters(ToolFilter), responses=paginated(ToolSerializer)
    )
    def get(self, request: Request, app_name: str) -> Response:
        """The app's tools, by name (``?kind=``, ``?enabled=``, ``?requires_approval=``)."""
        queryset = filtered(ToolFilter, request.query_params, Tool.objects.filter(app_name=app_name))
        return page_of(self, request, queryset.order_by("name"), ToolSerializer)

    @extend_schema(operation_id="create_tool", request=ToolWriteSerializer, responses={201: ToolSerializer})
    def post(self, request: Request, app_name: str) -> Response:
        """Register a tool: a Python callable or an OpenAPI operation, which the app's agents get on their next turn."""
        _check_can_manage(self)
        data = valid(ToolWriteSerializer, request.data)
        try:
            tool = services.do_create_tool(app_name=app_name, actor=_actor(request), **data)
        except services.ToolError as error:
            _raise_for(error)
        return Response(ToolSerializer(tool).data, status=status.HTTP_201_CREATED)


class ToolView(ScopedView):
    @extend_schema(operation_id="get_tool", responses=ToolSerializer)
    def get(self, request: Request, app_name: str, name: str) -> Response:
        """One tool of the registry."""
        return Response(ToolSerializer(_tool(app_name, name)).data)

    @extend_schema(operation_id="update_tool", request=ToolPatchSerializer, responses=ToolSerializer)
    def patch(self, request: Request, app_name: str, name: str) -> Response:
        """Change a tool (a new version; running agents see it on their next model call)."""
        _check_can_manage(self)
        data: dict[str, Any] = dict(valid(ToolPatchSerializer, request.data))
        expected_version = data.pop("expected_version", None)
        try:
            tool = services.do_update_tool(
                _tool(app_name, name), changes=data, actor=_actor(request), expected_version=expected_version
            )
        except services.ToolError as error:
            _raise_for(error)
        return Response(ToolSerializer(tool).data)

    @extend_schema(operation_id="delete_tool", responses={204: None})
    def delete(self, request: Request, app_name: str, name: str) -> Response:
        """Remove a tool from the registry."""
        _check_can_manage(self)
        services.do_delete_tool(_tool(app_name, name), actor=_actor(request))
        return Response(status=status.HTTP_204_NO_CONTENT)


class ToolImportView(ScopedView):
    """Create or update one tool per operation of an OpenAPI 3 document."""

    @extend_schema(operation_id="import_tools", request=ImportSerializer, responses=ImportReportSerializer)
    def post(self, request: Request, app_name: str) -> Response:
        _check_can_manage(self)
        data = valid(ImportSerializer, request.data)
        try:
            report = services.do_import_openapi(
                app_name=app_name, document=data["document"], base_url=data["base_url"], actor=_actor(request)
            )
        except InvalidOpenApi as error:
            raise exceptions.ValidationError({"document": [str(error)]}) from error
        return Response(report.as_dict())


def _mcp_server(app_name: str, name: str) -> McpServer:
    server = McpServer.objects.filter(app_name=app_name, name=name).first()
    if server is None:
        raise Http404
    return server


class McpServerFilter(filters.FilterSet):
    class Meta:
        model = McpServer
        fields = ["transport", "enabled", "requires_approval"]


class McpServersView(ScopedView):
    """The app's external MCP servers: their tools are offered to the app's agents beside the registry's."""

    @extend_schema(
        operation_id="list_mcp_servers",
        parameters=filter_parameters(McpServerFilter),
        responses=paginated(McpServerSerializer),
    )
    def get(self, request: Request, app_name: str) -> Response:
        """The app's MCP servers, by name (``?transport=``, ``?enabled=``, ``?requires_approval=``)."""
        queryset = filtered(McpServerFilter, request.query_params, McpServer.objects.filter(app_name=app_name))
        return page_of(self, request, queryset.order_by("name"), McpServerSerializer)

    @extend_schema(
        operation_id="create_mcp_server", request=McpServerWriteSerializer, responses={201: McpServerSerializer}
    )
    def post(self, request: Request, app_name: str) -> Response:
        """Register an MCP server; the app's agents get its tools on their next model turn."""
        _check_can_manage(self)
        data = valid(McpServerWriteSerializer, request.data)
        try:
            server = mcp_servers.do_create_mcp_server(app_name=app_name, actor=_actor(request), **data)
        except services.ToolError as error:
            _raise_for(error)
        return Response(McpServerSerializer(server).data, status=status.HTTP_201_CREATED)


class McpServerView(ScopedView):
    @extend_schema(operation_id="get_mcp_server", responses=McpServerSerializer)
    def get(self, request: Request, app_name: str, name: str) -> Response:
        """One MCP server of the app, with the tools it listed last."""
        return Response(McpServerSerializer(_mcp_server(app_name, name)).data)

    @extend_schema(operation_id="update_mcp_server", request=McpServerPatchSerializer, responses=McpServerSerializer)
    def patch(self, request: Request, app_name: str, name: str) -> Response:
        """Change an MCP server row (a new version; running agents see it on their next model call)."""
        _check_can_manage(self)
        data: dict[str, Any] = dict(valid(McpServerPatchSerializer, request.data))
        expected_version = data.pop("expected_version", None)
        try:
            server = mcp_servers.do_update_mcp_server(
                _mcp_server(app_name, name), changes=data, actor=_actor(request), expected_version=expected_version
            )
        except services.ToolError as error:
            _raise_for(error)
        return Response(McpServerSerializer(server).data)

    @extend_schema(operation_id="delete_mcp_server", responses={204: None})
    def delete(self, request: Request, app_name: str, name: str) -> Response:
        """Remove an MCP server; agents stop getting its tools."""
        _check_can_manage(self)
        mcp_servers.do_delete_mcp_server(_mcp_server(app_name, name), actor=_actor(request))
        return Response(status=status.HTTP_204_NO_CONTENT)


def _check_whole_app(view: ScopedView) -> None:
    """Secrets are the app's: only a key of the whole app (not read-only, which ``ScopedView`` refuses) sets them."""
    check_whole_app(view.scope.only_user, view.scope.app_name, "change the app's secrets")


def _secret(app_name: str, name: str) -> AppSecret:
    secret = secrets.get_secret(app_name=app_name, name=name)
    if secret is None:
        raise Http404
    return secret


class SecretsView(ScopedView):
    """The app's secrets, by name: what its tools and MCP servers send (``auth_secret_name``). Values are write-only."""

    @extend_schema(operation_id="list_secrets", responses=paginated(AppSecretSerializer))
    def get(self, request: Request, app_name: str) -> Response:
        """The names of the app's secrets and when each was set; never a value."""
        return page_of(self, request, secrets.get_secrets(app_name=app_name), AppSecretSerializer)


class SecretView(ScopedView):
    @extend_schema(operation_id="get_secret", responses=AppSecretSerializer)
    def get(self, request: Request, app_name: str, name: str) -> Response:
        """When the secret was set (its value is never shown)."""
        return Response(AppSecretSerializer(_secret(app_name, name)).data)

    @extend_schema(
        operation_id="set_secret",
        request=SecretWriteSerializer,
        responses={200: AppSecretSerializer, 201: AppSecretSerializer},
    )
    def put(self, request: Request, app_name: str, name: str) -> Response:
        """Store or replace the secret (201 when new); rows naming it send the new value from their next turn."""
        _check_whole_app(self)
        data = valid(SecretWriteSerializer, request.data)
        try:
            secret, created = secrets.do_set_secret(
                app_name=app_name, name=name, value=data["value"], actor=_actor(request)
            )
        except services.ToolError as error:
            _raise_for(error)
        return Response(
            AppSecretSerializer(secret).data, status=status.HTTP_201_CREATED if created else status.HTTP_200_OK
        )

    @extend_schema(operation_id="delete_secret", responses={204: None})
    def delete(self, request: Request, app_name: str, name: str) -> Response:
        """Remove the secret; 409 while a tool or MCP server of the app sends it."""
        _check_whole_app(self)
        try:
            secrets.do_delete_secret(_secret(app_name, name), actor=_actor(request))
        except services.ToolError as error:
            _raise_for(error)
        return Response(status=status.HTTP_204_NO_CONTENT)


class ToolExecutionsView(ScopedView):
    """Every audited tool call of the app (a user-restricted key sees only its user's)."""

    @extend_schema(
        operation_id="list_tool_executions",
        parameters=filter_parameters(ToolExecutionFilter),
        responses=paginated(ToolExecutionSerializer),
    )
    def get(self, request: Request, app_name: str) -> Response:
        queryset = filtered(ToolExecutionFilter, request.query_params, _for_caller(self, ToolExecution.objects.all()))
        return page_of(self, request, queryset.order_by("-started_at", "-id"), ToolExecutionSerializer)


class ToolApprovalsView(ScopedView):
    """Calls waiting for (or given) a person's decision."""

    @extend_schema(
        operation_id="list_tool_approvals",
        parameters=filter_parameters(ToolApprovalFilter),
        responses=paginated(ToolApprovalSerializer),
    )
    def get(self, request: Request, app_name: str) -> Response:
        queryset = filtered(ToolApprovalFilter, request.query_params, _for_caller(self, ToolApproval.objects.all()))
        return page_of(self, request, queryset.order_by("-created_at", "-id"), ToolApprovalSerializer)


class ToolApprovalView(ScopedView):
    @extend_schema(operation_id="get_tool_approval", responses=ToolApprovalSerializer)
    def get(self, request: Request, app_name: str, approval_id: int) -> Response:
        """One call waiting for (or given) a person's decision."""
        return Response(ToolApprovalSerializer(self._approval(approval_id)).data)

    @extend_schema(operation_id="decide_tool_approval", request=DecisionSerializer, responses=ToolApprovalSerializer)
    def post(self, request: Request, app_name: str, approval_id: int) -> Response:
        """Approve or reject the call; the agent resumes with the decision."""
        data = valid(DecisionSerializer, request.data)
        try:
            approval = services.do_decide_approval(
                self._approval(approval_id), approved=data["approved"], actor=_actor(request)
            )
        except services.ToolError as error:
            _raise_for(error)
        return Response(ToolApprovalSerializer(approval).data)

    def _approval(self, approval_id: int) -> ToolApproval:
        approval = _for_caller(self, ToolApproval.objects.filter(pk=approval_id)).first()
        if approval is None:
            raise Http404
        return approval
