"""Admin for Example Stores: browse a store's few-shot examples (search key, the functions they call, what was
stored), rename or delete a store; stores are made and filled through the API (``exampleStores``), which embeds
what it stores."""

from __future__ import annotations

import json
from typing import Any

from django.contrib import admin
from django.http import HttpRequest
from django.utils.html import format_html

from memory_app.example_models import ExampleStore, StoredExample


class StoredExampleInline(admin.TabularInline):
    model = StoredExample
    fields = ("example_id", "search_key", "function_names", "stored", "create_time")
    readonly_fields = fields
    extra = 0
    show_change_link = False

    def has_add_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False

    def has_change_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False

    @admin.display(description="storedContentsExample")
    def stored(self, example: StoredExample) -> str:
        return format_html(
            "<details><summary>JSON</summary><pre style='white-space: pre-wrap'>{}</pre></details>",
            json.dumps(example.content, indent=2, ensure_ascii=False),
        )


@admin.register(ExampleStore)
class ExampleStoreAdmin(admin.ModelAdmin):
    list_display = ("display_name", "app_name", "id", "update_time")
    list_filter = ("app_name",)
    search_fields = ("display_name", "description", "examples__search_key")
    fields = ("app_name", "display_name", "description", "embedding_model", "create_time", "update_time")
    readonly_fields = ("app_name", "embedding_model", "create_time", "update_time")
    inlines = [StoredExampleInline]

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False  # made through the API, which embeds what it stores
