from django.contrib import admin
from django.db.models import OuterRef, QuerySet, Subquery
from django.http import HttpRequest

from cognizes.access.models import OwnedApp
from vertex_app.models import Engine, RagEngineConfig, RuntimeRevision


class RuntimeRevisionInline(admin.TabularInline):
    model = RuntimeRevision
    fields = ("id", "display_name", "spec", "created_at")
    readonly_fields = fields
    extra = 0
    can_delete = False
    show_change_link = False

    def has_add_permission(self, request, obj=None) -> bool:
        return False


@admin.register(Engine)
class EngineAdmin(admin.ModelAdmin):
    """Engines are created by ``manage.py vertex_engine APP`` or by a client (``POST …/reasoningEngines``: then the
    app is the engine id, owned by the app whose key made it); here they are looked up, not edited."""

    list_display = ["engine_id", "app_name", "display_name", "owner_app", "created_at"]
    search_fields = ["app_name", "engine_id", "display_name"]
    fields = (
        "engine_id",
        "app_name",
        "owner_app",
        "display_name",
        "description",
        "labels",
        "spec",
        "created_at",
        "updated_at",
    )
    readonly_fields = fields
    inlines = [RuntimeRevisionInline]

    def get_queryset(self, request: HttpRequest) -> QuerySet[Engine]:
        owner = OwnedApp.objects.filter(app_name=OuterRef("app_name")).values("owner_app")[:1]
        return super().get_queryset(request).annotate(owner=Subquery(owner))

    @admin.display(description="made by app", ordering="owner")
    def owner_app(self, engine: Engine) -> str:
        """The app whose client created the engine; empty for an engine an operator made."""
        return getattr(engine, "owner", None) or ""

    def has_add_permission(self, request) -> bool:
        return False

    def has_change_permission(self, request, obj=None) -> bool:
        return False


@admin.register(RagEngineConfig)
class RagEngineConfigAdmin(admin.ModelAdmin):
    """What each app's Vertex clients set with ``rag.update_config``: shown, not edited (it changes nothing here)."""

    list_display = ["app_name", "rag_managed_db_config", "updated_at"]
    search_fields = ["app_name"]
    readonly_fields = ["app_name", "rag_managed_db_config", "updated_at"]

    def has_add_permission(self, request) -> bool:
        return False

    def has_change_permission(self, request, obj=None) -> bool:
        return False
