"""Admin for the Agent Registry's skills: upload a zip with its metadata (a new skill, or a new revision of one); the
revisions are read-only. Every upload goes through ``tools_app.skills``, which checks the zip as the API does."""

from __future__ import annotations

from typing import Any

from django import forms
from django.contrib import admin, messages
from django.http import HttpRequest
from django.utils.html import format_html_join

from tools_app import skills
from tools_app.skill_models import Skill, SkillRevision
from tools_app.skill_zips import MAX_ZIP_BYTES, SkillZipError, check_skill_zip


class SkillForm(forms.ModelForm):
    zip_file = forms.FileField(
        required=False,
        help_text=f"A zip of SKILL.md (YAML front matter: name, description) and references/, assets/, scripts/; "
        f"at most {MAX_ZIP_BYTES // 1024} KB. Required for a new skill; on an existing one, a new revision.",
    )

    class Meta:
        model = Skill
        fields = ("app_name", "skill_id", "display_name", "description", "state", "labels")

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        for name in ("display_name", "description"):
            self.fields[name].required = False
            self.fields[name].help_text += " Empty: taken from SKILL.md."

    def clean(self) -> dict[str, Any]:
        data = super().clean() or {}
        upload = data.get("zip_file")
        if upload is not None and upload.size > MAX_ZIP_BYTES:
            self.add_error("zip_file", f"At most {MAX_ZIP_BYTES // 1024} KB.")
            return data
        data["zipped"] = upload.read() if upload is not None else None
        if self.instance.pk is None and data["zipped"] is None:
            self.add_error("zip_file", "A new skill needs its zip.")
        if data["zipped"] is not None:
            try:
                check_skill_zip(data["zipped"])
            except SkillZipError as error:
                self.add_error("zip_file", str(error))
        if self.instance.pk is None and data.get("skill_id"):
            try:
                skills.check_skill_id(data["skill_id"])
            except skills.SkillError as error:
                self.add_error("skill_id", str(error))
        return data


class SkillRevisionInline(admin.TabularInline):
    model = SkillRevision
    fields = ("id", "create_time", "sha256", "file_list")
    readonly_fields = fields
    extra = 0
    can_delete = False

    def has_add_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False

    @admin.display(description="files")
    def file_list(self, revision: SkillRevision) -> str:
        return format_html_join("<br>", "<code>{}</code>", ((name,) for name in revision.files))


@admin.register(Skill)
class SkillAdmin(admin.ModelAdmin):
    form = SkillForm
    list_display = ("skill_id", "app_name", "display_name", "state", "update_time")
    list_filter = ("app_name", "state")
    search_fields = ("skill_id", "display_name", "description")

    def get_inlines(self, request: HttpRequest, obj: Skill | None = None) -> list[Any]:
        return [SkillRevisionInline] if obj is not None else []  # a new skill has no revision to show yet

    def get_readonly_fields(self, request: HttpRequest, obj: Skill | None = None) -> tuple[str, ...]:
        return ("app_name", "skill_id") if obj is not None else ()

    def save_model(self, request: HttpRequest, obj: Skill, form: SkillForm, change: bool) -> None:
        data = form.cleaned_data
        try:
            if not change:
                saved = skills.do_create_skill(
                    app_name=obj.app_name,
                    skill_id=obj.skill_id,
                    zipped=data["zipped"],
                    display_name=data.get("display_name") or "",
                    description=data.get("description") or "",
                )
                obj.pk = saved.pk
            else:
                changes = {name: data[name] for name in ("display_name", "description", "state", "labels")}
                skills.do_update_skill(obj, changes, zipped=data["zipped"])
        except skills.SkillError as error:  # what the form cannot see (a description too long once read)
            messages.error(request, f"Not saved: {error}")

    def save_related(self, request: HttpRequest, form: Any, formsets: Any, change: bool) -> None:
        """The revisions are read-only: nothing to save beside the skill."""
