from django.contrib import admin

from vertex_app.models import Engine


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
