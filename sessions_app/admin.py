"""Admin for sessions: browse conversations, edit state through the versioned service path."""

from __future__ import annotations

import json
from typing import Any
from urllib.parse import urlencode

from django import forms
from django.contrib import admin, messages
from django.db.models import Count, QuerySet
from django.http import HttpRequest, HttpResponse
from django.urls import NoReverseMatch, reverse
from django.utils.html import format_html, format_html_join

from cognizes.infra.replica import ListsFromReplica
from sessions_app import services
from sessions_app.models import AppState, Event, FeedbackType, Session, UserState
from sessions_app.services.feedback import get_session_feedback


class PrettyJSONField(forms.JSONField):
    """A JSON object edited as indented text."""

    def __init__(self, **kwargs: Any) -> None:
        kwargs.setdefault("widget", forms.Textarea(attrs={"rows": 12, "cols": 80, "style": "font-family: monospace"}))
        super().__init__(**kwargs)

    def prepare_value(self, value: Any) -> str:
        if isinstance(value, str):
            return value
        return json.dumps(value, indent=2, ensure_ascii=False, sort_keys=True)


class VersionedStateForm(forms.ModelForm):
    """State editing with optimistic locking: the version seen when the page loaded is posted back."""

    state = PrettyJSONField(required=False, help_text="A JSON object, keys without scope prefixes.")
    loaded_version = forms.IntegerField(widget=forms.HiddenInput, required=False)

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.fields["loaded_version"].initial = self.instance.version if self.instance.pk else 0

    def clean_state(self) -> dict[str, Any]:
        state = self.cleaned_data["state"]
        state = {} if state is None else state
        try:
            services.check_scoped_state(state)
        except services.SessionError as error:
            raise forms.ValidationError(str(error)) from error
        return state

    def clean(self) -> dict[str, Any]:
        super().clean()
        cleaned = self.cleaned_data  # what ModelForm.clean returns (its stubs say it may be None)
        loaded = cleaned.get("loaded_version") or 0
        if self.instance.pk and loaded != self.instance.version:
            raise forms.ValidationError(
                "This state was changed elsewhere since you opened the page. Reload it and apply your edit again."
            )
        return cleaned


class _VersionedStateAdmin(ListsFromReplica):
    """Saves go through ``services``; a write that lost a race is reported, not applied."""

    form = VersionedStateForm
    readonly_fields = ("version", "update_time")

    def save_model(self, request: HttpRequest, obj: Any, form: VersionedStateForm, change: bool) -> None:
        try:
            obj.version = self.replace_state(obj, form.cleaned_data["state"], form.cleaned_data["loaded_version"] or 0)
        except services.SessionError as error:
            messages.error(request, f"Not saved: {error}")
            return
        obj.pk = obj.pk or type(obj).objects.values_list("pk", flat=True).get(**self.natural_key(obj))

    def replace_state(self, obj: Any, state: dict[str, Any], expected_version: int) -> int:
        raise NotImplementedError("subclasses say which service replaces their state")

    def natural_key(self, obj: Any) -> dict[str, str]:
        raise NotImplementedError("subclasses say how their row is found")


class EventInline(admin.TabularInline):
    model = Event
    fields = ("seq", "when", "author", "invocation_id", "preview", "artifacts", "pretty_data")
    readonly_fields = fields
    ordering = ("seq",)
    extra = 0
    can_delete = False
    show_change_link = False

    def has_add_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False

    def has_change_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False

    @admin.display(description="time")
    def when(self, event: Event) -> str:
        return event.time.isoformat(timespec="milliseconds") if event.timestamp is not None else ""

    @admin.display(description="artifacts")
    def artifacts(self, event: Event) -> str:
        """The versions this event saved (its artifact_delta), each a link to the artifact in the admin."""
        delta = ((event.data or {}).get("actions") or {}).get("artifact_delta") or {}
        changelist = reverse("admin:artifacts_app_artifact_changelist")
        session = event.session
        return format_html_join(
            ", ",
            '<a href="{}?{}">{} v{}</a>',
            (
                (
                    changelist,
                    urlencode({"app_name": session.app_name, "user_id": session.user_id, "filename": name}),
                    name,
                    version,
                )
                for name, version in sorted(delta.items())
            ),
        )

    @admin.display(description="event JSON")
    def pretty_data(self, event: Event) -> str:
        return format_html(
            "<details><summary>JSON</summary><pre style='white-space: pre-wrap'>{}</pre></details>",
            json.dumps(event.data, indent=2, ensure_ascii=False),
        )


def feedback_table(session: Session) -> str:
    """The session's feedback entries (Vertex's feedbackEntries) as a table: the verdict, who gave it, labels,
    comment, and the event rated. Read-only, and a field rather than an inline: the session's form posts no
    formset for it. Everything is escaped: what raters typed is never markup here."""
    entries = get_session_feedback(session.pk)
    if not entries:
        return "—"
    previews = dict(
        Event.objects.filter(session_id=session.pk, event_id__in=[e.event_id for e in entries]).values_list(
            "event_id", "preview"
        )
    )
    rows = format_html_join(
        "",
        "<tr><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td><code>{}</code><br>{}</td><td>{}</td></tr>",
        (
            (
                "👍" if entry.feedback_type == FeedbackType.THUMBS_UP else "👎",
                entry.user_id,
                ", ".join(entry.feedback_labels),
                entry.feedback_text,
                entry.event_id,
                previews.get(entry.event_id, "(event gone)"),
                entry.create_time.isoformat(timespec="seconds"),
            )
            for entry in entries
        ),
    )
    return format_html(
        "<table><thead><tr><th>verdict</th><th>by</th><th>labels</th><th>comment</th><th>event</th><th>when</th>"
        "</tr></thead><tbody>{}</tbody></table>",
        rows,
    )


ATTRIBUTES = ("display_name", "labels", "expire_time")
"""What the session page edits besides the state (Vertex AI's session fields); an expire time in the past deletes."""


@admin.register(Session)
class SessionAdmin(_VersionedStateAdmin):
    list_display = ("session_id", "app_name", "user_id", "display_name", "event_count", "update_time", "expire_time")
    list_filter = ("app_name", "update_time")
    search_fields = ("session_id", "user_id", "app_name")
    date_hierarchy = "update_time"
    fields = (
        "app_name",
        "user_id",
        "session_id",
        "display_name",
        "labels",
        "expire_time",
        "state",
        "loaded_version",
        "version",
        "create_time",
        "update_time",
        "traces",
        "feedback",
    )
    # More than the base's two: the base declares what its own forms need.
    readonly_fields = (  # type: ignore[assignment]
        "app_name",
        "user_id",
        "session_id",
        "version",
        "create_time",
        "update_time",
        "traces",
        "feedback",
    )
    inlines = [EventInline]
    actions = ["erase_users"]
    change_form_template = "admin/sessions_app/session/change_form.html"  # adds the live events panel

    @admin.display(description="feedback")
    def feedback(self, session: Session) -> str:
        return feedback_table(session)

    @admin.display(description="traces")
    def traces(self, session: Session) -> str:
        """A link to the runs of this session in tracing_app's admin (issue 6)."""
        query = urlencode({"app_name": session.app_name, "user_id": session.user_id, "session_id": session.session_id})
        return format_html(
            '<a href="{}?{}">Traces of this session</a>', reverse("admin:tracing_app_trace_changelist"), query
        )

    def render_change_form(
        self,
        request: HttpRequest,
        context: dict[str, Any],
        add: bool = False,
        change: bool = False,
        form_url: str = "",
        obj: Session | None = None,
    ) -> HttpResponse:
        if obj is not None:
            context["live_events"] = _live_events(obj)
        return super().render_change_form(request, context, add=add, change=change, form_url=form_url, obj=obj)

    def get_queryset(self, request: HttpRequest) -> QuerySet[Session]:
        return super().get_queryset(request).annotate(event_count=Count("events"))

    @admin.display(description="events", ordering="event_count")
    def event_count(self, session: Session) -> int:
        return session.event_count  # type: ignore[attr-defined]  # annotated by get_queryset

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False  # sessions are created by agents and the API

    def save_model(self, request: HttpRequest, obj: Session, form: VersionedStateForm, change: bool) -> None:
        """The state through its versioned path; the name, labels and expiry through theirs (no new version)."""
        attributes = {name: form.cleaned_data[name] for name in ATTRIBUTES if name in form.changed_data}
        if attributes:
            try:
                services.do_update_session_attributes(
                    app_name=obj.app_name, user_id=obj.user_id, session_id=obj.session_id, changes=attributes
                )
            except services.SessionError as error:
                messages.error(request, f"Not saved: {error}")
                return
        if "state" in form.changed_data:
            super().save_model(request, obj, form, change)

    def replace_state(self, obj: Session, state: dict[str, Any], expected_version: int) -> int:
        return services.do_replace_session_state(
            app_name=obj.app_name,
            user_id=obj.user_id,
            session_id=obj.session_id,
            state=state,
            expected_version=expected_version,
        )

    def natural_key(self, obj: Session) -> dict[str, str]:
        return {"app_name": obj.app_name, "user_id": obj.user_id, "session_id": obj.session_id}

    def delete_model(self, request: HttpRequest, obj: Session) -> None:
        services.do_delete_session(app_name=obj.app_name, user_id=obj.user_id, session_id=obj.session_id)

    @admin.action(
        description="Erase the users of selected sessions (everything stored about them)", permissions=["delete"]
    )
    def erase_users(self, request: HttpRequest, queryset: QuerySet[Session]) -> None:
        users = sorted(set(queryset.values_list("app_name", "user_id")))
        for app_name, user_id in users:
            erased = services.do_erase_user(app_name=app_name, user_id=user_id)
            self.message_user(
                request,
                f"Erased {user_id} of {app_name}: "
                + ", ".join(f"{count} {table}" for table, count in sorted(erased.items())),
            )

    def delete_queryset(self, request: HttpRequest, queryset: QuerySet[Session]) -> None:
        for session in queryset:  # one by one through the service: what listens to deletions hears each
            self.delete_model(request, session)


def _live_events(session: Session) -> dict[str, Any] | None:
    """Follow the session from the version this page shows (sessions_app/live.py), or None if the API can't.

    The version is read with the session, before the inline's events, so an event
    stored in between shows twice rather than never.
    """
    try:
        stream_url = reverse(
            "event-stream",
            kwargs={"app_name": session.app_name, "user_id": session.user_id, "session_id": session.session_id},
        )
    except NoReverseMatch:  # an id with a "/" has no API URL (the ``str`` path converter)
        return None
    return {"stream_url": stream_url, "after_version": session.version, "preview_length": services.PREVIEW_LENGTH}


@admin.register(AppState)
class AppStateAdmin(_VersionedStateAdmin):
    list_display = ("app_name", "version", "update_time")
    search_fields = ("app_name",)
    fields = ("app_name", "state", "loaded_version", "version", "update_time")

    def get_readonly_fields(self, request: HttpRequest, obj: Any = None) -> tuple[str, ...]:
        return self.readonly_fields + (("app_name",) if obj else ())

    def replace_state(self, obj: AppState, state: dict[str, Any], expected_version: int) -> int:
        return services.do_replace_app_state(app_name=obj.app_name, state=state, expected_version=expected_version)

    def natural_key(self, obj: AppState) -> dict[str, str]:
        return {"app_name": obj.app_name}


@admin.register(UserState)
class UserStateAdmin(_VersionedStateAdmin):
    list_display = ("user_id", "app_name", "version", "update_time")
    list_filter = ("app_name",)
    search_fields = ("user_id", "app_name")
    fields = ("app_name", "user_id", "state", "loaded_version", "version", "update_time")

    def get_readonly_fields(self, request: HttpRequest, obj: Any = None) -> tuple[str, ...]:
        return self.readonly_fields + (("app_name", "user_id") if obj else ())

    def replace_state(self, obj: UserState, state: dict[str, Any], expected_version: int) -> int:
        return services.do_replace_user_state(
            app_name=obj.app_name, user_id=obj.user_id, state=state, expected_version=expected_version
        )

    def natural_key(self, obj: UserState) -> dict[str, str]:
        return {"app_name": obj.app_name, "user_id": obj.user_id}
