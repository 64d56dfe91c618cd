"""API keys in the admin: created here (the key is shown once) and revoked here."""

from __future__ import annotations

from django.contrib import admin, messages
from django.http import HttpRequest

from cognizes.access.models import ApiKey, ApiKeyQuerySet
from cognizes.access.services import do_create_api_key, do_revoke_api_key


@admin.register(ApiKey)
class ApiKeyAdmin(admin.ModelAdmin):
    list_display = ("name", "prefix", "app_name", "user_id", "read_only", "created_at", "last_used_at", "revoked_at")
    list_filter = ("app_name", "read_only", "revoked_at")
    search_fields = ("name", "prefix", "app_name", "user_id")
    fields = ("name", "app_name", "user_id", "read_only", "prefix", "created_at", "last_used_at", "revoked_at")
    readonly_fields = ("prefix", "created_at", "last_used_at", "revoked_at")
    actions = ["revoke"]

    def get_readonly_fields(self, request: HttpRequest, obj: ApiKey | None = None):
        return self.readonly_fields + (("app_name", "user_id", "read_only") if obj else ())

    def save_model(self, request: HttpRequest, obj: ApiKey, form, change: bool) -> None:
        if change:
            obj.save(update_fields=["name"])
            return
        created, key = do_create_api_key(
            name=obj.name, app_name=obj.app_name, user_id=obj.user_id, read_only=obj.read_only
        )
        obj.pk, obj.prefix = created.pk, created.prefix
        messages.warning(request, f"The new key, shown only now — copy it: {key}")

    @admin.action(description="Revoke selected keys", permissions=["change"])
    def revoke(self, request: HttpRequest, queryset: ApiKeyQuerySet) -> None:
        for api_key in queryset.usable():
            do_revoke_api_key(api_key)
        self.message_user(request, "Keys revoked.")
