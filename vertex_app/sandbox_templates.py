"""Sandbox templates: ``reasoningEngines/{e}/sandboxEnvironmentTemplates`` as agentplatform 2.6 sends them.

``client.sandboxes.templates.create(name, display_name, config)`` posts ``displayName`` and the config's fields at the
top level in camelCase, their contents as the caller wrote them (a dict in snake_case stays snake_case), so both
spellings are read. Creation finishes at once (``done: true``); the client then reads the template with ``get``, and
its operation can still be read. A template is the app's: a key of one user reads them but does not make or delete
them. What a template can be on this host: tools_app.sandbox_templates.
"""

from __future__ import annotations

from typing import Any

from rest_framework import exceptions
from rest_framework.request import Request
from rest_framework.response import Response

from tools_app import sandbox_templates
from tools_app.models import SandboxTemplate
from vertex_app import errors, wire
from vertex_app.base import EMPTY, operation, page
from vertex_app.sandboxes import SandboxSurface


def _camel(value: Any) -> Any:
    """Keys in camelCase at every depth (the values of a ``limits`` map, ``cpu`` and ``memory``, have none to
    change)."""
    if isinstance(value, dict):
        return {wire.camel(str(key)): _camel(item) for key, item in value.items()}
    if isinstance(value, list):
        return [_camel(item) for item in value]
    return value


class TemplateSurface(SandboxSurface):
    """The engine's sandbox templates."""

    def template(self, template_id: str) -> SandboxTemplate:
        found = None
        if template_id.isdigit() and len(template_id) <= 18:
            found = sandbox_templates.get_template(
                app_name=self.app_name, engine_id=self.engine_id, number=int(template_id)
            )
        if found is None:
            raise errors.NotFound(f"{self.engine}/sandboxEnvironmentTemplates/{template_id} does not exist.")
        return found

    def template_resource(self, template: SandboxTemplate) -> dict[str, Any]:
        return {
            "name": f"{self.engine}/sandboxEnvironmentTemplates/{template.pk}",
            "displayName": template.display_name,
            **template.environment,
            "state": "ACTIVE",
            "createTime": wire.rfc3339(template.created_at),
            "updateTime": wire.rfc3339(template.created_at),
        }

    def app_key(self) -> None:
        """Templates are the app's: a key of one user is refused a change (403)."""
        if self.scope(None, write=True).only_user:
            raise exceptions.PermissionDenied("Sandbox templates are the app's: use a key of the app, not of a user.")


class TemplatesView(TemplateSurface):
    """``POST`` creates a sandbox template (an operation, done at once); ``GET`` lists the engine's."""

    def post(self, request: Request, **kwargs: Any) -> Response:
        """Create a sandbox template: Cognizes' confined interpreter, with the template's memory limit."""
        self.app_key()
        body = _camel(wire.mapping(request.data, "body"))
        display_name = wire.string(body.get("displayName"), "displayName")[:512]
        template = sandbox_templates.do_create_template(
            app_name=self.app_name, engine_id=self.engine_id, display_name=display_name, body=body
        )
        resource = self.template_resource(template)
        return Response(operation(f"{resource['name']}/operations/{template.pk}", resource))

    def get(self, request: Request, **kwargs: Any) -> Response:
        """List the engine's sandbox templates, newest first."""
        rows = sandbox_templates.list_templates(app_name=self.app_name, engine_id=self.engine_id)
        return Response(page(request, rows.order_by("-id"), "sandboxEnvironmentTemplates", self.template_resource))


class TemplateView(TemplateSurface):
    """A sandbox template: read or deleted."""

    def get(self, request: Request, template_id: str, **kwargs: Any) -> Response:
        """Read a sandbox template."""
        return Response(self.template_resource(self.template(template_id)))

    def delete(self, request: Request, template_id: str, **kwargs: Any) -> Response:
        """Delete a sandbox template (sandboxes made from it keep its limits)."""
        template = self.template(template_id)
        self.app_key()
        name = self.template_resource(template)["name"]
        template.delete()
        return Response(operation(f"{name}/operations/delete", kind=EMPTY))


class TemplateOperationView(TemplateSurface):
    """A template's create operation (already done)."""

    def get(self, request: Request, template_id: str, operation_id: str, **kwargs: Any) -> Response:
        """Read a sandbox template's create operation: done, with the template."""
        resource = self.template_resource(self.template(template_id))
        if operation_id != template_id:
            raise errors.NotFound(f"{resource['name']}/operations/{operation_id} does not exist.")
        return Response(operation(f"{resource['name']}/operations/{operation_id}", resource))
