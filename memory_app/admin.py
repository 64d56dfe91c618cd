"""Admin for memories: browse and search a user's memories, see every revision, act through services."""

from __future__ import annotations

import json
from datetime import UTC, date, datetime, time, timedelta
from typing import Any, cast

from django import forms
from django.contrib import admin, messages
from django.contrib.admin.options import IncorrectLookupParameters
from django.db.models import Case, IntegerField, QuerySet, When
from django.http import HttpRequest
from django.urls import reverse
from django.utils import timezone
from django.utils.dateparse import parse_date, parse_datetime
from django.utils.html import format_html, format_html_join

from cognizes.access.admin_views import ChangedByActions
from cognizes.infra.replica import ListsFromReplica
from memory_app import consolidation, services
from memory_app import example_admin as example_admin  # Example Stores: browse their few-shot examples
from memory_app.models import ConsolidationJob, Memory, MemoryBankConfig, MemoryQuerySet, MemoryRevision
from memory_app.search import search_memories
from sessions_app.admin import SessionAdmin
from sessions_app.models import Session

ADMIN_CAUSE = "admin:{user}"


def _cause(request: HttpRequest) -> str:
    return ADMIN_CAUSE.format(user=request.user.get_username())


class MemoryBankConfigForm(forms.ModelForm):
    class Meta:
        model = MemoryBankConfig
        fields = "__all__"  # noqa: DJ007  (the bank's every setting is the admin's to edit)

    def clean(self) -> dict[str, Any]:
        super().clean()
        data = self.cleaned_data  # what ModelForm.clean returns (its stubs say it may be None)
        for name, empty in (("scoped_customizations", list), ("generation_trigger", dict)):
            if data.get(name) is None:  # a cleared JSON box is "none", not null
                data[name] = empty()
        config = MemoryBankConfig(**data)
        try:
            services.check_bank_config(config)
        except services.MemoryServiceError as error:
            raise forms.ValidationError(str(error)) from error
        data["structured_memory_configs"] = config.structured_memory_configs  # normalised (memory_app.profile_schema)
        return data


@admin.register(MemoryBankConfig)
class MemoryBankConfigAdmin(admin.ModelAdmin):
    """Per app: the topics and examples the model extractor works with, and how long memories live."""

    form = MemoryBankConfigForm
    list_display = (
        "app_name",
        "managed_topics",
        "custom_topic_list",
        "scope_list",
        "keep_revisions",
        "default_ttl",
        "updated_at",
    )
    search_fields = ("app_name",)

    @admin.display(description="custom topics")
    def custom_topic_list(self, config: MemoryBankConfig) -> str:
        return ", ".join(config.custom_topic_labels())

    @admin.display(description="customized scopes")
    def scope_list(self, config: MemoryBankConfig) -> str:
        """The scope-key sets with a customization of their own (text: the admin escapes it)."""
        return "; ".join("+".join(map(str, entry.get("scope_keys") or [])) for entry in config.scoped_customizations)


class RevisionInline(admin.TabularInline):
    model = MemoryRevision
    fields = ("id", "created_at", "action", "cause", "text_before", "text_after", "status_after")
    readonly_fields = fields
    extra = 0
    can_delete = False
    ordering = ("id",)

    def has_add_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False

    def has_change_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False


class HeldAtFilter(admin.SimpleListFilter):
    """What held at a moment (superseded memories included if they held then): search's ``as_of``.

    The links offer moments relative to now; any ISO 8601 time works in the URL (``?as_of=2023-05-01``).
    """

    title = "held at"
    parameter_name = "as_of"
    _AGO = {
        "1d": ("a day ago", timedelta(days=1)),
        "7d": ("a week ago", timedelta(days=7)),
        "30d": ("a month ago", timedelta(days=30)),
        "365d": ("a year ago", timedelta(days=365)),
    }

    def lookups(self, request: HttpRequest, model_admin: admin.ModelAdmin) -> list[tuple[str, str]]:
        choices = [(key, label) for key, (label, _) in self._AGO.items()]
        value = self.value()
        if value and value not in self._AGO:
            choices.append((value, value))  # a moment from the URL stays visible as the chosen one
        return choices

    def moment(self) -> datetime | None:
        """The chosen moment; a malformed one is refused as the admin refuses any bad filter (``?e=1``)."""
        value = self.value()
        if not value:
            return None
        if value in self._AGO:
            return timezone.now() - self._AGO[value][1]
        moment = parse_datetime(value) or _midnight(parse_date(value))
        if moment is None:
            raise IncorrectLookupParameters(f"Not a time: {value!r}")
        return moment if timezone.is_aware(moment) else timezone.make_aware(moment, UTC)

    def queryset(self, request: HttpRequest, queryset: QuerySet) -> QuerySet:
        moment = self.moment()
        return queryset if moment is None else cast(MemoryQuerySet, queryset).held_at(moment)  # Memory's admin


def _midnight(day: date | None) -> datetime | None:
    return datetime.combine(day, time.min) if day else None


@admin.register(Memory)
class MemoryAdmin(ChangedByActions, ListsFromReplica):
    list_display = ("text", "app_name", "user_id", "kind", "status", "strength", "access_count", "last_accessed_at")
    list_filter = ("app_name", "user_id", "memory_type", "kind", "status", HeldAtFilter)
    search_fields = ("text",)
    search_help_text = (
        "Filter by one app and one user to run the hybrid search (vector + keywords) as an agent would; "
        "otherwise this matches text."
    )
    readonly_fields = (
        "id",
        "app_name",
        "user_id",
        "extra_scope",
        "text",
        "author",
        "kind",
        "topic",
        "memory_type",
        "pretty_structured_content",
        "importance",
        "strength",
        "access_count",
        "last_accessed_at",
        "source_sessions",
        "source_event_ids",
        "pretty_metadata",
        "event_time",
        "valid_from",
        "valid_until",
        "expires_at",
        "status",
        "superseded_by",
        "forgotten_at",
        "context",
        "names",
        "embedder",
        "created_at",
        "updated_at",
    )
    exclude = ("embedding", "search_text", "metadata", "structured_content")
    inlines = [RevisionInline]
    actions = ["forget", "restore", "roll_back_last_change", "reembed"]

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False  # memories come from consolidation, add_memory and the API

    def has_change_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False  # edits go through the actions, which write revisions

    @admin.display(description="source sessions")
    def source_sessions(self, memory: Memory) -> str:
        """Each session the memory came from, a link to its page while it exists."""
        found = dict(
            Session.objects.filter(
                app_name=memory.app_name, user_id=memory.user_id, session_id__in=memory.source_session_ids
            ).values_list("session_id", "pk")
        )
        links = [
            format_html('<a href="{}">{}</a>', reverse("admin:sessions_app_session_change", args=[found[sid]]), sid)
            if sid in found
            else format_html('{} <span class="help">(deleted)</span>', sid)
            for sid in memory.source_session_ids
        ]
        return format_html_join(", ", "{}", ((link,) for link in links)) or "—"

    @admin.display(description="structured content")
    def pretty_structured_content(self, memory: Memory) -> str:
        """A profile field's schema and value (edited on its profile field page), escaped."""
        if memory.structured_content is None:
            return "—"
        return format_html("<pre>{}</pre>", json.dumps(memory.structured_content, indent=2, ensure_ascii=False))

    @admin.display(description="metadata")
    def pretty_metadata(self, memory: Memory) -> str:
        return format_html("<pre>{}</pre>", json.dumps(memory.metadata, indent=2, ensure_ascii=False))

    def get_search_results(self, request: HttpRequest, queryset: QuerySet, search_term: str):
        """With one app and one user chosen (the filters' own links, or ``__exact`` URLs): the hybrid search."""
        app_name, user_id = (
            request.GET.get(name) or request.GET.get(f"{name}__exact") for name in ("app_name", "user_id")
        )
        if search_term and not (app_name and user_id):
            self.message_user(
                request,
                "Text-only search: choose one app and one user in the filters to rank "
                "memories by meaning, as an agent's search does.",
                messages.WARNING,
            )
        if not (search_term and app_name and user_id):
            return super().get_search_results(request, queryset, search_term)
        as_of = HeldAtFilter(request, dict(request.GET.lists()), Memory, self).moment()  # as ChangeList gives
        hits = search_memories(
            app_name=app_name, user_id=user_id, query=search_term, limit=50, reinforce=False, as_of=as_of
        )
        held = f" as they held at {as_of:%Y-%m-%d %H:%M %Z}" if as_of else ""
        self.message_user(
            request,
            f"Hybrid search (meaning and keywords) of {user_id}'s memories in {app_name}{held}: {len(hits)} ranked.",
            messages.INFO,
        )
        rank = Case(*[When(id=hit.id, then=i) for i, hit in enumerate(hits)], output_field=IntegerField())
        return queryset.filter(id__in=[hit.id for hit in hits]).annotate(search_rank=rank).order_by(
            "search_rank"
        ), False

    def get_ordering(self, request: HttpRequest):
        return () if request.GET.get("q") else ("-updated_at",)

    def _each(self, request: HttpRequest, queryset: QuerySet, action, done: str) -> None:
        count = 0
        for memory in queryset:
            try:
                action(memory)
                count += 1
            except services.MemoryServiceError as error:
                self.message_user(request, f"{memory.id}: {error}", messages.ERROR)
        self.message_user(request, f"{count} memories {done}.", messages.SUCCESS)

    @admin.action(description="Forget selected memories (soft delete)", permissions=["act"])
    def forget(self, request: HttpRequest, queryset: QuerySet) -> None:
        self._each(
            request,
            queryset,
            lambda m: services.do_forget(memory_id=m.id, app_name=m.app_name, user_id=m.user_id, cause=_cause(request)),
            "forgotten",
        )

    @admin.action(description="Restore selected memories", permissions=["act"])
    def restore(self, request: HttpRequest, queryset: QuerySet) -> None:
        self._each(
            request,
            queryset,
            lambda m: services.do_restore(
                memory_id=m.id, app_name=m.app_name, user_id=m.user_id, cause=_cause(request)
            ),
            "restored",
        )

    @admin.action(description="Roll back the last change of selected memories", permissions=["act"])
    def roll_back_last_change(self, request: HttpRequest, queryset: QuerySet) -> None:
        def roll_back(memory: Memory) -> None:
            previous = memory.revisions.order_by("-id")[1:2].first()
            if previous is None:
                raise services.MemoryServiceError("has no earlier revision")
            services.do_rollback(
                revision_id=previous.id, app_name=memory.app_name, user_id=memory.user_id, cause=_cause(request)
            )

        self._each(request, queryset, roll_back, "rolled back")

    @admin.action(description="Re-embed selected memories with the current embedder", permissions=["act"])
    def reembed(self, request: HttpRequest, queryset: QuerySet) -> None:
        count = services.do_reembed(queryset)
        self.message_user(request, f"{count} memories re-embedded.", messages.SUCCESS)


@admin.register(ConsolidationJob)
class ConsolidationJobAdmin(admin.ModelAdmin):
    list_display = (  # chosen to fit a 1400-px screen beside the filters
        "id",
        "app_name",
        "user_id",
        "session_id",
        "status",
        "attempts",
        "memories",
        "finished_at",
        "short_error",
    )
    list_filter = ("status", "app_name")
    search_fields = ("user_id", "session_id")
    readonly_fields = [f.name for f in ConsolidationJob._meta.fields]
    actions = ["run_now"]

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False

    @admin.display(description="memories")
    def memories(self, job: ConsolidationJob) -> str:
        return f"{job.memories_created} new, {job.memories_updated} updated"

    @admin.display(description="error")
    def short_error(self, job: ConsolidationJob) -> str:
        return job.error[:80]

    @admin.action(description="Run selected jobs now (here, not on a worker)", permissions=["change"])
    def run_now(self, request: HttpRequest, queryset: QuerySet) -> None:
        failed = 0
        for job in queryset.exclude(status="done"):
            try:
                consolidation.run_job(job.pk)
            except Exception as error:  # the job row records it; say so here too
                failed += 1
                self.message_user(request, f"Job {job.pk} failed: {error}", messages.ERROR)
        self.message_user(request, f"Ran {queryset.count() - failed} jobs.", messages.SUCCESS)


@admin.action(description="Consolidate selected sessions into memory now", permissions=["change"])
def consolidate_sessions_now(modeladmin: SessionAdmin, request: HttpRequest, queryset: QuerySet[Session]) -> None:
    created = 0
    for session in queryset:
        job = consolidation.do_enqueue_session(
            app_name=session.app_name, user_id=session.user_id, session_id=session.session_id, run_inline=True
        )
        created += job.memories_created
    modeladmin.message_user(request, f"{queryset.count()} sessions consolidated, {created} new memories.")


@admin.action(description="Forget the memories that came only from selected sessions", permissions=["change"])
def forget_session_memories(modeladmin: SessionAdmin, request: HttpRequest, queryset: QuerySet[Session]) -> None:
    forgotten = detached = 0
    for session in queryset:
        outcome = services.do_forget_session_memories(
            app_name=session.app_name,
            user_id=session.user_id,
            session_id=session.session_id,
            event_ids=list(session.events.values_list("event_id", flat=True)),
            cause=f"{_cause(request)}: forget the memories of session {session.session_id}",
        )
        forgotten, detached = forgotten + len(outcome.forgotten), detached + len(outcome.detached)
    modeladmin.message_user(
        request, f"{forgotten} memories forgotten; {detached} from other sessions too kept, without these sources."
    )


# sessions_app knows nothing of memory; memory adds its actions to the sessions admin.
SessionAdmin.actions = [*(SessionAdmin.actions or []), consolidate_sessions_now, forget_session_memories]

from memory_app import profile_admin  # noqa: E402, F401  (registers the profile fields' admin)
