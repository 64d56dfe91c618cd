"""Admin for the tool registry, the apps' secrets and the audit: every edit goes through services, so agents see
it at once. Secret values and MCP server headers are write-only here too: inputs that never render a value."""

from __future__ import annotations

import json
from typing import Any

from django import forms
from django.contrib import admin, messages
from django.core.exceptions import PermissionDenied
from django.db.models import QuerySet
from django.http import HttpRequest, HttpResponse, HttpResponseRedirect
from django.shortcuts import render
from django.urls import path, reverse
from django.utils.decorators import method_decorator
from django.utils.html import format_html
from django.views.decorators.debug import sensitive_post_parameters

from cognizes.access.admin_views import ChangedByActions
from cognizes.infra.replica import ListsFromReplica
from tools_app import mcp_servers, secrets, services
from tools_app import skill_admin as skill_admin  # the Agent Registry's skills: upload a zip and its metadata
from tools_app.models import (
    AppSecret,
    McpServer,
    SandboxEnvironment,
    SandboxExecution,
    SandboxSnapshot,
    SandboxTemplate,
    Tool,
    ToolApproval,
    ToolExecution,
    ToolVersion,
)
from tools_app.openapi import InvalidOpenApi


def _actor(request: HttpRequest) -> str:
    return f"admin:{request.user.get_username()}"


def _pretty(value: Any) -> str:
    return format_html("<pre style='white-space: pre-wrap'>{}</pre>", json.dumps(value, indent=2, ensure_ascii=False))


class _SecretFieldsBeforeTimeout(admin.ModelAdmin):
    """Show the secret's fields (``models.SecretAuth``, inherited, so first in the model) beside the timeout."""

    def get_fields(self, request: HttpRequest, obj: Any = None) -> list[Any]:
        fields: list[Any] = list(super().get_fields(request, obj))
        secret = [
            name
            for name in ("auth_scheme", "auth_secret_source", "auth_secret_name", "auth_header_name")
            if name in fields
        ]
        rest = [name for name in fields if name not in secret]
        at = rest.index("timeout_seconds") if "timeout_seconds" in rest else len(rest)
        return [*rest[:at], *secret, *rest[at:]]


class ToolVersionInline(admin.TabularInline):
    model = ToolVersion
    fields = ("version", "created_at", "changed_by", "pretty_snapshot")
    readonly_fields = fields
    extra = 0
    can_delete = False
    classes = ("collapse",)

    def has_add_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False

    @admin.display(description="snapshot")
    def pretty_snapshot(self, version: ToolVersion) -> str:
        return _pretty(version.snapshot)


class _RegistryRowAdmin(_SecretFieldsBeforeTimeout, admin.ModelAdmin):
    """A registry row (a tool, an MCP server) edited only through its services: each edit is a new version and
    moves the app's registry marker, so running agents see it on their next model turn."""

    editable_fields: tuple[str, ...] = ()
    create: Any = None
    update: Any = None
    remove: Any = None
    set_enabled: Any = None
    actions = ["enable", "disable"]

    def save_model(self, request: HttpRequest, obj: Any, form: forms.ModelForm, change: bool) -> None:
        fields = {name: form.cleaned_data[name] for name in self.editable_fields if name in form.cleaned_data}
        if change:
            changed = {name: value for name, value in fields.items() if name in form.changed_data}
            self.update(obj, changes=changed, actor=_actor(request))
        else:
            created = self.create(app_name=obj.app_name, actor=_actor(request), **fields)
            obj.pk = created.pk

    def delete_model(self, request: HttpRequest, obj: Any) -> None:
        self.remove(obj, actor=_actor(request))

    def delete_queryset(self, request: HttpRequest, queryset: QuerySet) -> None:
        for row in queryset:
            self.remove(row, actor=_actor(request))

    @admin.action(description="Enable selected %(verbose_name_plural)s", permissions=["change"])
    def enable(self, request: HttpRequest, queryset: QuerySet) -> None:
        self._set_enabled(request, queryset, enabled=True)

    @admin.action(description="Disable selected %(verbose_name_plural)s", permissions=["change"])
    def disable(self, request: HttpRequest, queryset: QuerySet) -> None:
        self._set_enabled(request, queryset, enabled=False)

    def _set_enabled(self, request: HttpRequest, queryset: QuerySet, *, enabled: bool) -> None:
        """Switch each row on its own: one that breaks a rule now (say, a secret the operator no longer allows
        its app, issue 41 A) is said, not a server error, and the others still switch."""
        count, plural = 0, self.model._meta.verbose_name_plural
        for row in queryset:
            try:
                count += self.set_enabled([row], enabled=enabled, actor=_actor(request))
            except services.ToolError as error:
                self.message_user(request, f"{row} was left as it is: {error}", messages.ERROR)
        self.message_user(request, f"{'Enabled' if enabled else 'Disabled'} {count} {plural}.", messages.SUCCESS)


class ToolForm(forms.ModelForm):
    """Run the registry's rules on the edited tool, so a bad edit is a form error, not a crash."""

    class Meta:
        model = Tool
        exclude = ("version", "parameters_schema")  # noqa: DJ006  (staff edit every field but the derived ones)
        # A dotted path is long: the admin's default box (20em) cut it ("…get_weathe").
        widgets = {"callable_path": forms.TextInput(attrs={"class": "vTextField", "style": "width: 60ch"})}

    def _post_clean(self) -> None:
        super()._post_clean()  # type: ignore[misc]  # BaseModelForm's, which django-stubs leaves out
        try:
            services.check_tool(self.instance)
        except services.InvalidTool as error:
            for field, message in error.errors.items():
                self.add_error(field if field in self.fields else None, message)


class ImportForm(forms.Form):
    app_name = forms.CharField(max_length=128)
    document = forms.FileField(help_text="An OpenAPI 3 document, JSON or YAML.")
    base_url = forms.CharField(required=False, help_text="Overrides the document's servers.")


@admin.register(Tool)
class ToolAdmin(_RegistryRowAdmin):
    form = ToolForm
    editable_fields = services.EDITABLE_FIELDS
    create, update, remove, set_enabled = (
        staticmethod(services.do_create_tool),
        staticmethod(services.do_update_tool),
        staticmethod(services.do_delete_tool),
        staticmethod(services.do_set_enabled),
    )
    list_display = ("name", "app_name", "kind", "enabled", "requires_approval", "version", "updated_at")
    list_filter = ("app_name", "kind", "enabled", "requires_approval")
    search_fields = ("name", "description")
    readonly_fields = ("version", "pretty_parameters_schema", "created_at", "updated_at")
    inlines = [ToolVersionInline]
    change_list_template = "admin/tools_app/tool/change_list.html"

    @admin.display(description="parameters schema")
    def pretty_parameters_schema(self, tool: Tool) -> str:
        return _pretty(tool.parameters_schema)

    def get_exclude(self, request: HttpRequest, obj: Tool | None = None) -> list[str]:
        """A tool's page shows the fields of its kind: no empty "OpenAPI operation: null" box on a Python tool."""
        hidden = {"python": ["openapi_operation"], "openapi": ["callable_path"]}.get(obj.kind if obj else "", [])
        return [*ToolForm.Meta.exclude, *hidden]

    def get_urls(self) -> list:
        custom = [path("import/", self.admin_site.admin_view(self.import_view), name="tools_app_tool_import")]
        return custom + super().get_urls()

    def import_view(self, request: HttpRequest) -> HttpResponse:
        """Upload an OpenAPI document: one tool per operation, and a report of what happened.

        ``admin_view`` only checks staff status, so the view checks the model permissions itself (issue 41 I):
        adding tools needs ``add_tool``; an operation that would change an existing tool needs ``change_tool``
        too, and is reported rejected without it.
        """
        if not self.has_add_permission(request):
            raise PermissionDenied
        form = ImportForm(request.POST or None, request.FILES or None)
        if request.method == "POST" and form.is_valid():
            try:
                report = services.do_import_openapi(
                    app_name=form.cleaned_data["app_name"],
                    document=form.cleaned_data["document"].read(),
                    base_url=form.cleaned_data["base_url"],
                    actor=_actor(request),
                    may_change=self.has_change_permission(request),
                )
            except InvalidOpenApi as error:
                form.add_error("document", str(error))
            else:
                self.message_user(
                    request,
                    f"Created {len(report.created)}, changed {len(report.changed)}, "
                    f"unchanged {len(report.unchanged)}, rejected {len(report.rejected)}.",
                    messages.SUCCESS,
                )
                for name, reason in report.rejected.items():
                    self.message_user(request, f"Rejected {name}: {reason}", messages.WARNING)
                return HttpResponseRedirect(reverse("admin:tools_app_tool_changelist"))
        context = {
            **self.admin_site.each_context(request),
            "form": form,
            "title": "Import an OpenAPI document",
            "opts": self.model._meta,
        }
        return render(request, "admin/tools_app/tool/import.html", context)


MASK = "••••••••"
"""What stands for a stored value: always the same, so it tells nothing of the value (not even its length)."""


class _NeverRendered(forms.Textarea):
    """A text box that never shows a value: neither the stored one nor one just typed (a form with errors)."""

    def format_value(self, value: Any) -> str:
        return ""


class _WriteOnlyJSONField(forms.JSONField):
    """JSON typed in to replace the stored value; left empty, the stored value stays (it is never shown)."""

    widget = _NeverRendered

    def has_changed(self, initial: Any, data: Any) -> bool:
        return data not in (None, "") and super().has_changed(initial, data)


class McpServerForm(forms.ModelForm):
    """Run the rules of MCP server rows on the edited one, so a bad edit is a form error, not a crash.

    Its headers are write-only (they may carry a tenant's credentials): typed in whole to replace them.
    """

    headers = _WriteOnlyJSONField(
        required=False,
        help_text='Write-only: type all the headers to replace them, e.g. {"X-Tenant": "acme"} ({} removes them); '
        "left empty, the stored ones stay. A credential belongs in the auth fields.",
    )

    class Meta:
        model = McpServer
        exclude = ("version", "discovered_tools", "discovered_at")  # noqa: DJ006  (all but what discovery writes)
        widgets = {"url": forms.TextInput(attrs={"class": "vTextField", "style": "width: 60ch"})}

    def clean_headers(self) -> Any:
        headers = self.cleaned_data.get("headers")
        if headers is None:
            return self.instance.headers if self.instance.pk else {}
        return headers

    def _post_clean(self) -> None:
        super()._post_clean()  # type: ignore[misc]  # BaseModelForm's, which django-stubs leaves out
        try:
            mcp_servers.check_mcp_server(self.instance)
        except services.InvalidTool as error:
            for field, message in error.errors.items():
                self.add_error(field if field in self.fields else None, message)


@admin.register(McpServer)
class McpServerAdmin(_RegistryRowAdmin):
    """External MCP servers: their tools reach the app's agents on their next model turn."""

    form = McpServerForm
    editable_fields = mcp_servers.EDITABLE_FIELDS
    create, update, remove, set_enabled = (
        staticmethod(mcp_servers.do_create_mcp_server),
        staticmethod(mcp_servers.do_update_mcp_server),
        staticmethod(mcp_servers.do_delete_mcp_server),
        staticmethod(mcp_servers.do_set_mcp_servers_enabled),
    )
    list_display = ("name", "app_name", "url", "transport", "enabled", "requires_approval", "version", "discovered_at")
    list_filter = ("app_name", "transport", "enabled", "requires_approval")
    search_fields = ("name", "description", "url")
    readonly_fields = (
        "version",
        "masked_headers",
        "pretty_discovered_tools",
        "discovered_at",
        "created_at",
        "updated_at",
    )

    @admin.display(description="headers sent")
    def masked_headers(self, server: McpServer) -> str:
        headers = server.headers if isinstance(server.headers, dict) else {}
        return ", ".join(f"{name}: {MASK}" for name in sorted(headers)) or "-"

    @admin.display(description="tools it listed last")
    def pretty_discovered_tools(self, server: McpServer) -> str:
        return _pretty(server.discovered_tools)


class AppSecretForm(forms.ModelForm):
    """A secret's value is typed in a password box that never renders it; left empty on a change, it stays."""

    value = forms.CharField(
        required=False,
        strip=False,
        widget=forms.PasswordInput(render_value=False),
        help_text="Stored encrypted and never shown again. On a change, leave it empty to keep the current value.",
    )

    class Meta:
        model = AppSecret
        fields = ("app_name", "name")

    def clean(self) -> dict[str, Any]:
        super().clean()
        data = self.cleaned_data  # what ModelForm.clean returns (its stubs say it may be None)
        value = data.get("value") or ""
        if not self.instance.pk and not value:
            self.add_error("value", "The secret's value.")
        if value:
            try:
                secrets.check_secret(name=data.get("name") or self.instance.name, value=value)
            except services.InvalidTool as error:
                for field, message in error.errors.items():
                    self.add_error(field if field in self.fields else None, message)
        return data


@admin.register(AppSecret)
class AppSecretAdmin(admin.ModelAdmin):
    """An app's secrets: names and times, a masked value; set, replaced and deleted through ``tools_app.secrets``."""

    form = AppSecretForm
    list_display = ("name", "app_name", "masked_value", "updated_at")
    list_filter = ("app_name",)
    search_fields = ("name",)

    def get_readonly_fields(self, request: HttpRequest, obj: AppSecret | None = None) -> tuple[str, ...]:
        """A stored secret keeps its app and name (rows name it); only its value changes."""
        return ("app_name", "name", "masked_value", "created_at", "updated_at") if obj else ()

    @admin.display(description="value")
    def masked_value(self, secret: AppSecret) -> str:
        return MASK

    @method_decorator(sensitive_post_parameters("value"))
    def changeform_view(self, request: HttpRequest, *args: Any, **kwargs: Any) -> HttpResponse:
        """The value is kept out of error reports (Django's filter of POST data)."""
        return super().changeform_view(request, *args, **kwargs)

    def save_model(self, request: HttpRequest, obj: AppSecret, form: forms.ModelForm, change: bool) -> None:
        value = form.cleaned_data.get("value")
        if value:
            saved, _ = secrets.do_set_secret(app_name=obj.app_name, name=obj.name, value=value, actor=_actor(request))
            obj.pk = saved.pk

    def delete_view(self, request: HttpRequest, object_id: str, extra_context: Any = None) -> HttpResponse:
        """A secret rows still send is not deleted: the page says which rows, instead of stripping their credentials."""
        secret = self.get_object(request, object_id)
        users = secrets.get_secret_users(secret) if secret is not None else []
        if secret is not None and users and self.has_delete_permission(request, secret):
            self.message_user(request, f"{secret} is sent by {', '.join(users)}: change them first.", messages.ERROR)
            return HttpResponseRedirect(reverse("admin:tools_app_appsecret_change", args=[secret.pk]))
        return super().delete_view(request, object_id, extra_context)

    def delete_model(self, request: HttpRequest, obj: AppSecret) -> None:
        secrets.do_delete_secret(obj, actor=_actor(request))

    def delete_queryset(self, request: HttpRequest, queryset: QuerySet[AppSecret]) -> None:
        for secret in queryset:
            try:
                secrets.do_delete_secret(secret, actor=_actor(request))
            except secrets.SecretInUse as error:
                self.message_user(request, str(error), messages.ERROR)


class _ReadOnlyAdmin(ListsFromReplica):
    def has_add_permission(self, request: HttpRequest) -> bool:
        return False

    @admin.display(description="duration", ordering="duration_ms")
    def duration(self, execution: ToolExecution | SandboxExecution) -> str:
        return "-" if execution.duration_ms is None else f"{execution.duration_ms:,.1f} ms"

    def has_change_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False


@admin.register(ToolExecution)
class ToolExecutionAdmin(_ReadOnlyAdmin):
    list_display = (
        "started_at",
        "tool_name",
        "tool_version",
        "status",
        "app_name",
        "user_id",
        "session_id",
        "duration",
    )
    list_filter = ("status", "app_name", "tool_name", "mcp_server", "user_id")
    search_fields = ("session_id", "invocation_id", "function_call_id", "tool_name", "client", "mcp_server")
    exclude = ("arguments", "result")
    readonly_fields = (
        "app_name",
        "user_id",
        "session_id",
        "invocation_id",
        "function_call_id",
        "tool_name",
        "tool_version",
        "status",
        "pretty_arguments",
        "pretty_result",
        "result_size",
        "result_truncated",
        "error",
        "started_at",
        "duration",
        "client",
        "mcp_server",
    )
    date_hierarchy = "started_at"

    @admin.display(description="arguments")
    def pretty_arguments(self, execution: ToolExecution) -> str:
        return _pretty(execution.arguments)

    @admin.display(description="result")
    def pretty_result(self, execution: ToolExecution) -> str:
        return _pretty(execution.result)


@admin.register(ToolApproval)
class ToolApprovalAdmin(ChangedByActions, _ReadOnlyAdmin):
    list_display = ("created_at", "tool_name", "status", "app_name", "user_id", "session_id", "decided_by")
    list_filter = ("status", "app_name", "tool_name")
    search_fields = ("session_id", "function_call_id")
    exclude = ("arguments",)
    readonly_fields = (
        "app_name",
        "user_id",
        "session_id",
        "invocation_id",
        "request_id",
        "function_call_id",
        "tool_name",
        "pretty_arguments",
        "status",
        "decided_by",
        "decided_at",
        "delivered_at",
        "created_at",
    )
    actions = ["approve", "reject"]

    @admin.display(description="arguments")
    def pretty_arguments(self, approval: ToolApproval) -> str:
        return _pretty(approval.arguments)

    def _decide(self, request: HttpRequest, queryset: QuerySet[ToolApproval], *, approved: bool) -> None:
        decided = 0
        for approval in queryset:
            try:
                services.do_decide_approval(approval, approved=approved, actor=_actor(request))
                decided += 1
            except services.ApprovalAlreadyDecided:
                pass
        verb = "Approved" if approved else "Rejected"
        self.message_user(request, f"{verb} {decided} call(s); {queryset.count() - decided} were already decided.")

    @admin.action(description="Approve selected calls", permissions=["act"])
    def approve(self, request: HttpRequest, queryset: QuerySet[ToolApproval]) -> None:
        self._decide(request, queryset, approved=True)

    @admin.action(description="Reject selected calls", permissions=["act"])
    def reject(self, request: HttpRequest, queryset: QuerySet[ToolApproval]) -> None:
        self._decide(request, queryset, approved=False)


@admin.register(SandboxEnvironment)
class SandboxEnvironmentAdmin(_ReadOnlyAdmin):
    """Sandboxes of Vertex's code-execution API; deleting one here leaves its interpreter to the daemon's eviction."""

    list_display = (
        "id",
        "display_name",
        "state",
        "app_name",
        "engine_id",
        "owner",
        "created_at",
        "expire_time",
        "runs",
    )
    list_filter = ("state", "app_name")
    search_fields = ("display_name", "owner")

    @admin.display(description="executions")
    def runs(self, sandbox: SandboxEnvironment) -> str:
        url = reverse("admin:tools_app_sandboxexecution_changelist") + f"?sandbox__id__exact={sandbox.pk}"
        return format_html('<a href="{}">{}</a>', url, sandbox.executions.count())


@admin.register(SandboxSnapshot)
class SandboxSnapshotAdmin(_ReadOnlyAdmin):
    list_display = (
        "id",
        "display_name",
        "source_sandbox",
        "app_name",
        "engine_id",
        "owner",
        "size_bytes",
        "created_at",
    )
    list_filter = ("app_name",)
    search_fields = ("display_name", "owner")


@admin.register(SandboxTemplate)
class SandboxTemplateAdmin(_ReadOnlyAdmin):
    """Sandbox templates of Vertex's code-execution API (what the client sent is shown as escaped JSON)."""

    list_display = ("id", "display_name", "app_name", "engine_id", "memory_bytes", "created_at")
    list_filter = ("app_name",)
    search_fields = ("display_name",)


@admin.register(SandboxExecution)
class SandboxExecutionAdmin(_ReadOnlyAdmin):
    list_display = ("started_at", "language", "exit_status", "app_name", "user_id", "sandbox", "session_id", "duration")
    list_filter = ("exit_status", "language", "app_name")
    search_fields = ("session_id", "code")
