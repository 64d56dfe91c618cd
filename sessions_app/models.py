"""Sessions, their events, and the app- and user-scoped state they share.

The shapes follow ADK's session model: a session belongs to (app_name, user_id);
``app:`` state keys live in ``AppState`` and ``user:`` keys in ``UserState`` so that
every session of an app or user sees them; ``temp:`` keys are never stored.
Writes go through ``sessions_app.services`` (compare-and-swap on ``version``).
"""

from __future__ import annotations

from datetime import UTC, datetime

from django.db import models
from django.db.models.functions import Now

from cognizes.access.models import MAX_KEY_LENGTH


class SessionQuerySet(models.QuerySet):
    def live(self) -> SessionQuerySet:
        """Sessions not past their expire time (an expired one is as if deleted; services.py's ``_live``)."""
        return self.filter(models.Q(expire_time__isnull=True) | models.Q(expire_time__gt=Now()))


class Session(models.Model):
    app_name = models.CharField(max_length=MAX_KEY_LENGTH, help_text="The agent application this session belongs to.")
    user_id = models.CharField("user id", max_length=MAX_KEY_LENGTH, help_text="The end user of the application.")
    session_id = models.CharField(
        "session id", max_length=MAX_KEY_LENGTH, help_text="ADK's session id, unique per app and user."
    )
    state = models.JSONField(default=dict, blank=True, help_text="Session-scoped state (no app:, user: or temp: keys).")
    version = models.BigIntegerField(
        default=0, help_text="Incremented on every write; a writer holding an older version is stale."
    )
    create_time = models.DateTimeField(help_text="When the session was created.")
    update_time = models.DateTimeField(db_index=True, help_text="Timestamp of the last event or state change.")
    last_update_time = models.FloatField(
        help_text="update_time as the exact epoch seconds ADK reports (the last event's timestamp)."
    )
    display_name = models.CharField(max_length=256, blank=True, help_text="A name for people (Vertex's displayName).")
    labels = models.JSONField(default=dict, blank=True, help_text="String labels (Vertex's labels).")
    expire_time = models.DateTimeField(
        null=True, blank=True, help_text="When the session expires, as given by its creator (Vertex's ttl/expireTime)."
    )

    objects = SessionQuerySet.as_manager()

    class Meta:
        db_table = "sessions"
        constraints = [
            models.UniqueConstraint(fields=["app_name", "user_id", "session_id"], name="sessions_unique_id"),
        ]
        indexes = [
            models.Index(fields=["app_name", "last_update_time", "user_id", "session_id"], name="sessions_listing"),
        ]

    def __str__(self) -> str:
        return f"{self.app_name}/{self.user_id}/{self.session_id}"


class Event(models.Model):
    """One ADK event, stored whole as JSON; the columns beside it are for queries and people."""

    seq = models.BigAutoField(primary_key=True, help_text="Append order across all sessions.")
    session = models.ForeignKey(Session, on_delete=models.CASCADE, related_name="events")
    event_id = models.CharField("event id", max_length=MAX_KEY_LENGTH)
    version = models.BigIntegerField(
        help_text="The session's version once this event was stored: orders events within the session."
    )
    invocation_id = models.CharField("invocation id", max_length=256, blank=True)
    author = models.CharField(max_length=256, help_text="'user' or the name of the agent that wrote the event.")
    branch = models.CharField(max_length=512, null=True, blank=True)  # noqa: DJ001  (ADK's Event.branch: None or a path)
    timestamp = models.FloatField(
        help_text="Epoch seconds of the event to the microsecond, as filters compare it (its exact float is in data)."
    )
    data = models.JSONField(help_text="The full ADK event.")
    raw_event = models.JSONField(
        null=True,
        blank=True,
        help_text="A Vertex client's rawEvent as sent, kept when it holds what this ADK's Event does not "
        "(fields of a newer ADK): returned verbatim to Vertex clients.",
    )
    preview = models.CharField(max_length=200, blank=True, help_text="Short text of the event for people.")

    class Meta:
        db_table = "events"
        ordering = ["seq"]
        constraints = [
            models.UniqueConstraint(fields=["session", "event_id"], name="events_unique_id"),
            # Also the index for "the last N events": ordering by the global seq
            # would let the planner walk the primary key across every session.
            models.UniqueConstraint(fields=["session", "version"], name="events_unique_version"),
        ]
        indexes = [
            models.Index(fields=["session", "timestamp"], name="events_by_session_time"),
            # What the user asked in one run: the trace list shows it beside each agent run (tracing_app).
            models.Index(
                fields=["session", "invocation_id"], condition=models.Q(author="user"), name="events_user_by_invocation"
            ),
        ]

    def __str__(self) -> str:
        return f"{self.author}: {self.preview}"

    @property
    def time(self) -> datetime:
        return datetime.fromtimestamp(self.timestamp, tz=UTC)


class AppState(models.Model):
    """State shared by every session of an app (ADK's ``app:`` keys, stored without the prefix)."""

    app_name = models.CharField(max_length=MAX_KEY_LENGTH, unique=True)
    state = models.JSONField(default=dict, blank=True)
    version = models.BigIntegerField(default=0, help_text="Incremented on every write.")
    update_time = models.DateTimeField(auto_now=True)

    class Meta:
        db_table = "app_states"
        verbose_name = "app state"

    def __str__(self) -> str:
        return self.app_name


class UserState(models.Model):
    """State shared by every session of one user of an app (ADK's ``user:`` keys)."""

    app_name = models.CharField(max_length=MAX_KEY_LENGTH)
    user_id = models.CharField("user id", max_length=MAX_KEY_LENGTH)
    state = models.JSONField(default=dict, blank=True)
    version = models.BigIntegerField(default=0, help_text="Incremented on every write.")
    update_time = models.DateTimeField(auto_now=True)

    class Meta:
        db_table = "user_states"
        verbose_name = "user state"
        constraints = [
            models.UniqueConstraint(fields=["app_name", "user_id"], name="user_states_unique"),
        ]

    def __str__(self) -> str:
        return f"{self.app_name}/{self.user_id}"


class FeedbackType(models.TextChoices):
    THUMBS_UP = "THUMBS_UP", "👍 thumbs up"
    THUMBS_DOWN = "THUMBS_DOWN", "👎 thumbs down"


class FeedbackEntry(models.Model):
    """A person's verdict on one event of a session (Agent Engine's ``feedbackEntries``, issue 47 item 4).

    It belongs to its session: deleted with it (``services.lifecycle`` deletes it in the statement that deletes
    sessions, as it does events), and with the user it names when that user is erased. ``context_events`` is
    the entry's singleton ``feedbackContext``: the conversation the rater saw, as Vertex's SessionEvents.
    """

    session = models.ForeignKey(Session, on_delete=models.CASCADE, related_name="feedback_entries")
    app_name = models.CharField(max_length=MAX_KEY_LENGTH, help_text="The session's app (what keys are checked on).")
    event_id = models.CharField(
        "event id", max_length=MAX_KEY_LENGTH, help_text="The event of the session the feedback is about."
    )
    feedback_type = models.CharField(max_length=16, choices=FeedbackType.choices)
    feedback_labels = models.JSONField(default=list, blank=True, help_text='Labels such as "non-factual".')
    feedback_text = models.TextField(blank=True, help_text="What the rater wrote.")
    user_id = models.CharField(
        "user id", max_length=MAX_KEY_LENGTH, help_text="Who gave the feedback (the session's user unless told)."
    )
    source = models.CharField(max_length=256, blank=True, help_text='Where it was given ("ADK Web UI").')
    custom_metadata = models.JSONField(default=dict, blank=True, help_text="String pairs the client attached.")
    context_events = models.JSONField(
        default=list, blank=True, help_text="The feedback context: the events the rater saw, as Vertex sends them."
    )
    create_time = models.DateTimeField(auto_now_add=True)
    update_time = models.DateTimeField(auto_now=True)

    class Meta:
        db_table = "feedback_entries"
        verbose_name_plural = "feedback entries"
        indexes = [
            models.Index(fields=["app_name", "create_time"], name="feedback_by_app_time"),
            models.Index(fields=["app_name", "user_id"], name="feedback_by_user"),
        ]

    def __str__(self) -> str:
        return f"{self.get_feedback_type_display()} on {self.event_id}"
