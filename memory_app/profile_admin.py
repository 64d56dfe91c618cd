"""Admin for structured profiles: every profile field of every scope, its value edited and checked against its schema.

Profile fields are memories (``ProfileField`` is a proxy of ``Memory``), so the memory admin lists them too
(filter "memory type"); here they are browsed by schema and field, and a person sets a field's value as
JSON (``"Lyon"``, ``36``, ``["fr", "en"]``), which ``memory_app.profiles.do_edit_profile_field`` checks
against the field's schema and writes with a revision. Values are always shown escaped.
"""

from __future__ import annotations

import json
from typing import Any

from django import forms
from django.contrib import admin, messages
from django.db.models import QuerySet
from django.http import HttpRequest
from django.utils.html import format_html, format_html_join

from memory_app.models import MemoryRevision, MemoryType, ProfileField
from memory_app.profiles import check_profile_value, do_edit_profile_field
from memory_app.services import MemoryServiceError

ADMIN_CAUSE = "admin:{user}"


def field_of(row: ProfileField) -> tuple[str, str, Any]:
    """(schema id, field name, value) of a profile row."""
    content = row.structured_content or {}
    ((name, value),) = (content.get("data") or {"": None}).items()
    return content.get("schema_id", ""), name, value


class ProfileFieldForm(forms.ModelForm):
    value = forms.JSONField(help_text='The field\'s new value as JSON: "Lyon", 36, true, ["fr", "en"].')

    class Meta:
        model = ProfileField
        fields: list[str] = []

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        if self.instance.pk:
            self.fields["value"].initial = field_of(self.instance)[2]

    def clean(self) -> dict[str, Any]:
        super().clean()
        data = self.cleaned_data
        if "value" in data and self.instance.pk:
            try:
                check_profile_value(self.instance, data["value"])
            except MemoryServiceError as error:
                raise forms.ValidationError(str(error)) from error
        return data


@admin.register(ProfileField)
class ProfileFieldAdmin(admin.ModelAdmin):
    """Each field of each structured profile: its scope, schema, value and history; the value is editable."""

    form = ProfileFieldForm
    list_display = ("schema", "field", "shown_value", "app_name", "user_id", "extra_scope", "status", "updated_at")
    list_filter = ("app_name", "status")
    search_fields = ("user_id", "text")
    readonly_fields = (
        "app_name",
        "user_id",
        "extra_scope",
        "schema",
        "field",
        "shown_value",
        "status",
        "updated_at",
        "history",
    )
    fields = (*readonly_fields[:6], "value", *readonly_fields[6:])

    def get_queryset(self, request: HttpRequest) -> QuerySet:
        return super().get_queryset(request).filter(memory_type=MemoryType.STRUCTURED_PROFILE)

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False  # profiles are filled by generation

    def has_delete_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False  # a field is forgotten like any memory, with a revision (the memory admin's actions)

    def save_model(self, request: HttpRequest, obj: Any, form: Any, change: bool) -> None:
        """The value goes through the profile service (checked again under the scope's lock, with a revision)."""
        try:
            do_edit_profile_field(
                memory_id=obj.pk,
                app_name=obj.app_name,
                user_id=obj.user_id,
                value=form.cleaned_data["value"],
                cause=ADMIN_CAUSE.format(user=request.user.get_username()),
            )
        except MemoryServiceError as error:  # the schema changed since the form was checked
            self.message_user(request, str(error), messages.ERROR)

    def save_related(self, request: HttpRequest, form: Any, formsets: Any, change: bool) -> None:
        """The revisions are read-only."""

    @admin.display(description="schema")
    def schema(self, row: ProfileField) -> str:
        return field_of(row)[0]

    @admin.display(description="field")
    def field(self, row: ProfileField) -> str:
        return field_of(row)[1]

    @admin.display(description="revisions")
    def history(self, row: ProfileField) -> str:
        """Each value the field had, oldest first, with when and why (the memory page has the full revisions)."""
        revisions = MemoryRevision.objects.filter(memory_id=row.pk).order_by("id")
        return (
            format_html_join(
                "",
                "<div>{} · {} · {} · <code>{}</code></div>",
                (
                    (
                        r.created_at.strftime("%Y-%m-%d %H:%M"),
                        r.action,
                        r.cause,
                        json.dumps(r.structured_data, ensure_ascii=False),
                    )
                    for r in revisions
                ),
            )
            or "—"
        )

    @admin.display(description="value")
    def shown_value(self, row: ProfileField) -> str:
        return format_html("<code>{}</code>", json.dumps(field_of(row)[2], ensure_ascii=False))
