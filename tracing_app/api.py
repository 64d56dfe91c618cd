"""HTTP API for traces: the runs of a session, and one run with its spans.

Scoped like the rest of the API (``ScopedView``): a trace belongs to the app and
user of its session, and another tenant's trace is simply not found.
"""

from __future__ import annotations

from django.http import Http404
from drf_spectacular.utils import extend_schema
from rest_framework import serializers
from rest_framework.request import Request
from rest_framework.response import Response

from cognizes.access.api import ScopedView, page_of, paginated
from tracing_app import services


class TraceSerializer(serializers.Serializer):
    trace_id = serializers.CharField(help_text="OpenTelemetry trace id (32 hex digits).")
    name = serializers.CharField(help_text="Name of the root span.")
    session_id = serializers.CharField(help_text="The session the run belongs to.")
    invocation_id = serializers.CharField(help_text="ADK's invocation id.")
    agent_name = serializers.CharField(
        help_text="The agent that ran (its first invoke_agent span); empty for a trace of protocol plumbing alone."
    )
    tool_calls = serializers.ListField(
        child=serializers.CharField(), help_text="The tools the run called, in order (its execute_tool spans)."
    )
    start_time = serializers.DateTimeField()
    end_time = serializers.DateTimeField()
    duration_ms = serializers.FloatField(help_text="Wall time of the run in milliseconds.")
    status = serializers.CharField(help_text="'error' if any span failed, else 'ok'.")
    span_count = serializers.IntegerField()
    input_tokens = serializers.IntegerField(help_text="Model input tokens over the run.")
    output_tokens = serializers.IntegerField(help_text="Model output tokens over the run.")


class SpanSerializer(serializers.Serializer):
    span_id = serializers.CharField(help_text="OpenTelemetry span id (16 hex digits).")
    parent_span_id = serializers.CharField(help_text="The enclosing span; empty for the root.")
    name = serializers.CharField(help_text="e.g. 'generate_content <model>', 'execute_tool <tool>'.")
    kind = serializers.CharField()
    start_time = serializers.DateTimeField()
    end_time = serializers.DateTimeField()
    duration_ms = serializers.FloatField()
    status = serializers.CharField()
    status_message = serializers.CharField(help_text="The error, for failed spans.")
    attributes = serializers.DictField(help_text="gen_ai.* and other OpenTelemetry attributes.")
    events = serializers.ListField(child=serializers.DictField(), help_text="Span events, e.g. exceptions.")


class TraceDetailSerializer(TraceSerializer):
    """The OpenAPI shape of ``TraceView``'s answer."""

    spans = SpanSerializer(many=True, help_text="Every span, in start order.")


class SessionTracesView(ScopedView):
    """The runs of one session, newest first."""

    @extend_schema(operation_id="list_session_traces", responses=paginated(TraceSerializer))
    def get(self, request: Request, app_name: str, user_id: str, session_id: str) -> Response:
        queryset = services.get_session_traces(app_name=app_name, user_id=user_id, session_id=session_id)
        return page_of(self, request, queryset, TraceSerializer)


class TraceView(ScopedView):
    """One run with all its spans (what the admin's waterfall draws)."""

    @extend_schema(operation_id="get_trace", responses=TraceDetailSerializer)
    def get(self, request: Request, app_name: str, user_id: str, trace_id: str) -> Response:
        trace = services.get_trace(trace_id=trace_id, app_name=app_name, user_id=user_id)
        if trace is None:
            raise Http404
        spans = SpanSerializer(services.get_spans(trace), many=True).data
        return Response({**TraceSerializer(trace).data, "spans": spans})
