"""Agent runs as OpenTelemetry traces: one Trace row per trace id, one Span row per span.

Rows are written only by ``tracing_app.services.do_record_spans`` (called from the
exporter's thread); the Trace's totals are recomputed from its spans there, since
the spans of one trace can arrive in several export batches.
"""

from __future__ import annotations

from django.db import models
from django.db.models import Q


class Status(models.TextChoices):
    UNSET = "unset", "unset"
    OK = "ok", "ok"
    ERROR = "error", "error"


class TraceQuerySet(models.QuerySet["Trace"]):
    def of_session(self, *, app_name: str, user_id: str, session_id: str) -> TraceQuerySet:
        return self.filter(app_name=app_name, user_id=user_id, session_id=session_id)

    def agent_runs(self) -> TraceQuerySet:
        """Traces in which an agent ran: what people look for among the MCP, A2A and HTTP plumbing."""
        return self.exclude(agent_name="")

    def plumbing(self) -> TraceQuerySet:
        """Traces with no agent run in them: protocol requests (MCP tools/list, A2A card fetches, HTTP calls)."""
        return self.filter(agent_name="")


class Trace(models.Model):
    trace_id = models.CharField(
        "trace id", max_length=32, primary_key=True, help_text="The OpenTelemetry trace id, 32 hex digits."
    )
    name = models.CharField(
        max_length=255, blank=True, help_text="Name of the root span, e.g. 'invoke_workflow weather_agent'."
    )
    app_name = models.CharField(
        max_length=128, blank=True, db_index=True, help_text="The app of the session the run belongs to."
    )
    user_id = models.CharField("user id", max_length=128, blank=True, help_text="The user of that session.")
    session_id = models.CharField(
        "session id", max_length=128, blank=True, help_text="ADK's session id (the spans' gen_ai.conversation.id)."
    )
    invocation_id = models.CharField(
        "invocation id", max_length=128, blank=True, help_text="ADK's invocation id of the run."
    )
    agent_name = models.CharField(
        "agent",
        max_length=255,
        blank=True,
        help_text="The agent invoked (gen_ai.agent.name of the first invoke_agent span); empty for a trace of "
        "protocol plumbing alone (MCP, A2A, HTTP), in which no agent ran.",
    )
    tool_calls = models.JSONField(
        "tool calls",
        default=list,
        blank=True,
        help_text="The names of the tools the run called, in order (one per execute_tool span).",
    )
    start_time = models.DateTimeField(help_text="Start of the earliest span.")
    end_time = models.DateTimeField(help_text="End of the latest span.")
    duration_ms = models.FloatField("duration (ms)", default=0, help_text="end_time − start_time in milliseconds.")
    status = models.CharField(
        max_length=8, choices=Status.choices, default=Status.OK, help_text="'error' if any span failed, else 'ok'."
    )
    span_count = models.PositiveIntegerField(default=0, help_text="Spans stored for this trace.")
    input_tokens = models.BigIntegerField(default=0, help_text="Sum of gen_ai.usage.input_tokens over model calls.")
    output_tokens = models.BigIntegerField(default=0, help_text="Sum of gen_ai.usage.output_tokens over model calls.")
    service_name = models.CharField(max_length=128, blank=True, help_text="The process's OTel service.name.")

    objects = TraceQuerySet.as_manager()

    class Meta:
        db_table = "traces"
        ordering = ["-start_time"]
        indexes = [
            models.Index(fields=["app_name", "user_id", "session_id", "start_time"], name="traces_by_session"),
            models.Index(fields=["session_id"], name="traces_session_id"),
            models.Index(fields=["-start_time"], name="traces_by_time"),
            models.Index(fields=["status", "-start_time"], name="traces_by_status"),
            # The list's first page: the newest agent runs, however many plumbing traces came after them.
            models.Index(fields=["-start_time"], condition=~Q(agent_name=""), name="traces_agent_runs_by_time"),
        ]

    def __str__(self) -> str:
        return f"{self.name or 'trace'} {self.trace_id}"

    @property
    def total_tokens(self) -> int:
        return self.input_tokens + self.output_tokens


class Span(models.Model):
    trace = models.ForeignKey(
        Trace, on_delete=models.CASCADE, related_name="spans", help_text="The trace it is part of."
    )
    span_id = models.CharField("span id", max_length=16, help_text="The OpenTelemetry span id, 16 hex digits.")
    parent_span_id = models.CharField(
        "parent span id", max_length=16, blank=True, help_text="The enclosing span; empty for the root."
    )
    name = models.CharField(max_length=255, help_text="e.g. 'invoke_agent', 'generate_content', 'execute_tool'.")
    kind = models.CharField(max_length=16, default="INTERNAL", help_text="OpenTelemetry span kind.")
    start_time = models.DateTimeField()
    end_time = models.DateTimeField()
    duration_ms = models.FloatField("duration (ms)", default=0)
    status = models.CharField(max_length=8, choices=Status.choices, default=Status.UNSET)
    status_message = models.TextField(blank=True, help_text="The error description, for failed spans.")
    attributes = models.JSONField(default=dict, blank=True, help_text="The span's attributes (gen_ai.* and others).")
    events = models.JSONField(
        default=list, blank=True, help_text="Span events (name, time, attributes), e.g. recorded exceptions."
    )

    class Meta:
        db_table = "spans"
        ordering = ["start_time"]
        constraints = [models.UniqueConstraint(fields=["trace", "span_id"], name="spans_unique_id")]

    def __str__(self) -> str:
        return f"{self.name} {self.span_id}"
