from django.contrib import admin

from vertex_app.models import Engine, RagEngineConfig


@admin.register(Engine)
class EngineAdmin(admin.ModelAdmin):
    """Engines are created by ``manage.py vertex_engine APP``; here they are looked up, not edited."""

    list_display = ["engine_id", "app_name", "created_at"]
    search_fields = ["app_name", "engine_id"]
    readonly_fields = ["engine_id", "app_name", "created_at"]

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
