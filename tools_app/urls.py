"""Tool registry URLs, mounted under /api/v1/apps/<app_name>/ by cognizes/urls.py."""

from django.urls import path

from tools_app import api

urlpatterns = [
    path("tools/", api.ToolsView.as_view(), name="tools"),
    path("tools/<str:name>/", api.ToolView.as_view(), name="tool"),
    path("mcp-servers/", api.McpServersView.as_view(), name="mcp-servers"),
    path("mcp-servers/<str:name>/", api.McpServerView.as_view(), name="mcp-server"),
    path("secrets/", api.SecretsView.as_view(), name="secrets"),
    path("secrets/<str:name>/", api.SecretView.as_view(), name="secret"),
    path("tool-imports/", api.ToolImportView.as_view(), name="tool-imports"),
    path("tool-executions/", api.ToolExecutionsView.as_view(), name="tool-executions"),
    path("tool-approvals/", api.ToolApprovalsView.as_view(), name="tool-approvals"),
    path("tool-approvals/<id:approval_id>/", api.ToolApprovalView.as_view(), name="tool-approval"),
]
