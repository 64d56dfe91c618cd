from django.contrib import admin
from django.urls import URLPattern, URLResolver, include, path, register_converter
from django.views.generic import RedirectView
from drf_spectacular.views import SpectacularAPIView, SpectacularSwaggerView

from artifacts_app import api as artifacts_api
from cognizes import references
from cognizes.access.api import IdConverter
from memory_app import api as memory_api
from runtime_app import api as runtime_api
from sessions_app import api as sessions_api
from tracing_app import api as tracing_api

register_converter(IdConverter, "id")

admin.site.site_header = "Cognizes"
admin.site.site_title = "Cognizes admin"
admin.site.index_title = "Sessions, memories, tools and traces"
# The side menu repeats the index's app list and took a fifth of a 1400-px screen from the lists.
admin.site.enable_nav_sidebar = False

user = "apps/<str:app_name>/users/<str:user_id>/"
session = user + "sessions/<str:session_id>/"
memory = user + "memories/<str:memory_id>/"

api_v1: list[URLPattern | URLResolver] = [
    path("apps/<str:app_name>/state/", sessions_api.AppStateView.as_view(), name="app-state"),
    path("apps/<str:app_name>/sessions/", sessions_api.AppSessionsView.as_view(), name="app-sessions"),
    path("apps/<str:app_name>/memory-config/", memory_api.MemoryBankConfigView.as_view(), name="memory-config"),
    path("apps/<str:app_name>/memories/export/", memory_api.MemoryExportView.as_view(), name="memory-export"),
    path(user, sessions_api.UserView.as_view(), name="user"),
    path(user + "state/", sessions_api.UserStateView.as_view(), name="user-state"),
    path(user + "sessions/", sessions_api.SessionsView.as_view(), name="sessions"),
    path(session, sessions_api.SessionView.as_view(), name="session"),
    path(session + "events/", sessions_api.EventsView.as_view(), name="events"),
    path(session + "events/stream/", sessions_api.EventStreamView.as_view(), name="event-stream"),
    path(session + "run/", runtime_api.RunView.as_view(), name="run"),
    path(session + "run/stream/", runtime_api.RunStreamView.as_view(), name="run-stream"),
    path(session + "state/", sessions_api.SessionStateView.as_view(), name="session-state"),
    path(session + "memory-jobs/", memory_api.SessionIngestView.as_view(), name="session-ingest"),
    path(session + "forget-memories/", memory_api.SessionForgetView.as_view(), name="session-forget-memories"),
    path(session + "artifacts/", artifacts_api.ArtifactsView.as_view(), name="artifacts"),
    path(session + "artifacts/<str:filename>/", artifacts_api.ArtifactView.as_view(), name="artifact"),
    path(
        session + "artifacts/<str:filename>/content/",
        artifacts_api.ArtifactContentView.as_view(),
        name="artifact-content",
    ),
    path(user + "memory-jobs/<id:job_id>/", memory_api.JobView.as_view(), name="memory-job"),
    path(user + "memories/", memory_api.MemoriesView.as_view(), name="memories"),
    path(user + "memories/search/", memory_api.MemorySearchView.as_view(), name="memory-search"),
    path(memory, memory_api.MemoryView.as_view(), name="memory"),
    path(memory + "revisions/", memory_api.MemoryRevisionsView.as_view(), name="memory-revisions"),
    path(memory + "rollback/", memory_api.MemoryRollbackView.as_view(), name="memory-rollback"),
    path(session + "traces/", tracing_api.SessionTracesView.as_view(), name="session-traces"),
    path(user + "traces/<str:trace_id>/", tracing_api.TraceView.as_view(), name="trace"),
    path("apps/<str:app_name>/", include("tools_app.urls")),
    path("apps/<str:app_name>/", include("knowledge_app.urls")),
]

urlpatterns = [
    path("", RedirectView.as_view(url="/admin/", permanent=False)),
    path("admin/", admin.site.urls),
    path("api/v1/", include(api_v1)),
    path("api/schema/", SpectacularAPIView.as_view(), name="schema"),
    path("api/docs/", SpectacularSwaggerView.as_view(url_name="schema"), name="swagger-ui"),
    path("api/schema/vertex/", references.vertex_schema, name="schema-vertex"),
    path(
        "api/docs/vertex/",
        SpectacularSwaggerView.as_view(url_name="schema-vertex", title="Cognizes: Vertex AI"),
        name="swagger-ui-vertex",
    ),
    path("api/schema/a2a/", references.a2a_schema, name="schema-a2a"),
    path(
        "api/docs/a2a/",
        SpectacularSwaggerView.as_view(url_name="schema-a2a", title="Cognizes: A2A"),
        name="swagger-ui-a2a",
    ),
    path("api-auth/", include("rest_framework.urls")),
    path("", include("vertex_app.urls")),  # Vertex AI Agent Engine's own paths: /v1beta1/…
]

handler400 = "cognizes.error_pages.bad_request"
handler404 = "cognizes.error_pages.not_found"
handler500 = "cognizes.error_pages.server_error"
