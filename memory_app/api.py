"""HTTP API for memories: search, list, create, edit, forget, revisions, rollback, ingestion jobs.

Views are ``ScopedView``s (cognizes/access/api.py); every query is built from the checked
scope, and writes go through ``memory_app.services`` / ``consolidation``.
"""

from __future__ import annotations

from collections.abc import Iterator
from uuid import UUID

from django.http import Http404, StreamingHttpResponse
from django_filters import rest_framework as filters
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiExample, OpenApiParameter, extend_schema
from rest_framework import serializers, status
from rest_framework.exceptions import ValidationError
from rest_framework.request import Request
from rest_framework.response import Response

from cognizes.access.api import BIGINT, ScopedView, SinceFilter, filtered, page_of, paginated, valid
from cognizes.access.key_kinds import check_whole_app
from cognizes.access.models import MAX_KEY_LENGTH
from cognizes.access.schema import filter_parameters
from cognizes.infra.threaded_stream import ThreadedStream
from memory_app import consolidation, services
from memory_app.models import ConsolidationJob, Kind, Memory, MemoryBankConfig, MemoryRevision, Status
from memory_app.search import search_memories
from memory_app.services.bank import BANK_SETTINGS
from memory_app.services.transfer import get_export_lines
from sessions_app.models import Session

AUDIT_CAUSE = "api:{caller}"


class MemorySerializer(serializers.ModelSerializer):
    class Meta:
        model = Memory
        fields = [
            "id",
            "text",
            "author",
            "kind",
            "topic",
            "memory_type",
            "structured_content",
            "extra_scope",
            "importance",
            "strength",
            "access_count",
            "last_accessed_at",
            "source_session_id",
            "source_session_ids",
            "source_event_ids",
            "metadata",
            "event_time",
            "expires_at",
            "status",
            "superseded_by",
            "created_at",
            "updated_at",
        ]
        read_only_fields = fields


class MemoryCreateSerializer(serializers.Serializer):
    text = serializers.CharField(max_length=services.MAX_MEMORY_LENGTH, help_text="One self-contained statement.")
    kind = serializers.ChoiceField(choices=Kind.choices, default=Kind.FACT)
    importance = serializers.FloatField(min_value=0, max_value=1, default=0.5)
    author = serializers.CharField(max_length=256, required=False, default="")
    metadata = serializers.DictField(required=False, default=dict)
    expires_at = serializers.DateTimeField(required=False, allow_null=True, default=None)


class MemoryUpdateSerializer(serializers.Serializer):
    text = serializers.CharField(max_length=services.MAX_MEMORY_LENGTH)


class RememberOutSerializer(serializers.Serializer):
    created = serializers.ListField(child=serializers.UUIDField())
    merged_into = serializers.ListField(child=serializers.UUIDField())


class MemoryBankConfigSerializer(serializers.ModelSerializer):
    updated_at = serializers.DateTimeField(read_only=True, allow_null=True, help_text="Null until first changed.")

    class Meta:
        model = MemoryBankConfig
        fields = [*BANK_SETTINGS, "updated_at"]
        read_only_fields = ["updated_at"]


class SearchSerializer(serializers.Serializer):
    query = serializers.CharField(
        help_text="What to find; at most COGNIZES_MAX_QUERY_CHARS characters "
        "(cognizes.access.limits, checked by the search)."
    )
    limit = serializers.IntegerField(min_value=1, max_value=100, default=10)
    as_of = serializers.DateTimeField(
        required=False,
        help_text="Search what held at this moment (ISO 8601) instead of now: superseded memories "
        "included if they held then.",
    )


class HitSerializer(serializers.Serializer):
    id = serializers.UUIDField()
    text = serializers.CharField()
    author = serializers.CharField(allow_blank=True)
    kind = serializers.CharField()
    metadata = serializers.DictField()
    event_time = serializers.DateTimeField(allow_null=True)
    created_at = serializers.DateTimeField()
    strength = serializers.FloatField()
    score = serializers.FloatField()
    vector_rank = serializers.IntegerField(allow_null=True)
    keyword_rank = serializers.IntegerField(allow_null=True)


class RevisionSerializer(serializers.ModelSerializer):
    class Meta:
        model = MemoryRevision
        fields = [
            "id",
            "action",
            "text_before",
            "text_after",
            "status_before",
            "status_after",
            "structured_data",
            "cause",
            "created_at",
        ]


class RollbackSerializer(serializers.Serializer):
    revision_id = serializers.IntegerField(min_value=1, max_value=BIGINT)


class JobSerializer(serializers.ModelSerializer):
    class Meta:
        model = ConsolidationJob
        fields = [
            "id",
            "session_id",
            "status",
            "watermark",
            "attempts",
            "error",
            "memories_created",
            "memories_updated",
            "created_at",
            "started_at",
            "finished_at",
        ]


class MemoryFilter(filters.FilterSet):
    kind = filters.ChoiceFilter(choices=Kind.choices)
    status = filters.ChoiceFilter(choices=Status.choices)
    updated_since = SinceFilter("updated_at")

    class Meta:
        model = Memory
        fields = ["kind", "status", "updated_since"]


def _cause(request: Request) -> str:
    return AUDIT_CAUSE.format(caller=request.user)


def _memory(view: ScopedView, memory_id: str) -> Memory:
    try:
        key = UUID(memory_id)
    except ValueError:
        raise Http404 from None
    assert view.scope.user_id is not None  # a memory's URL names its user
    memory = Memory.objects.for_scope(view.scope.app_name, view.scope.user_id).filter(id=key).first()
    if memory is None:
        raise Http404
    return memory


def _raise_for(error: services.MemoryServiceError) -> None:
    if isinstance(error, services.MemoryNotFound):
        raise Http404 from error
    raise ValidationError(str(error)) from error


class MemoriesView(ScopedView):
    @extend_schema(
        operation_id="list_memories", parameters=filter_parameters(MemoryFilter), responses=paginated(MemorySerializer)
    )
    def get(self, request: Request, app_name: str, user_id: str) -> Response:
        """The user's memories, newest first (``?kind=``, ``?status=``, ``?updated_since=``)."""
        queryset = filtered(
            MemoryFilter,
            request.query_params,
            Memory.objects.for_scope(app_name, user_id).order_by("-updated_at", "id"),
        )
        return page_of(self, request, queryset, MemorySerializer)

    @extend_schema(
        operation_id="create_memory",
        request=MemoryCreateSerializer,
        responses={201: RememberOutSerializer},
        examples=[
            OpenApiExample(
                "A preference",
                request_only=True,
                value={
                    "text": "Prefers temperatures in Celsius.",
                    "kind": "preference",
                    "metadata": {"source": "settings page"},
                },
            )
        ],
    )
    def post(self, request: Request, app_name: str, user_id: str) -> Response:
        """Remember a statement: merged into a known memory if it says the same, else created."""
        data = valid(MemoryCreateSerializer, request.data)
        try:
            outcome = services.do_remember(
                app_name=app_name, user_id=user_id, candidates=[services.Candidate(**data)], cause=_cause(request)
            )
        except services.MemoryServiceError as error:
            _raise_for(error)
        return Response({"created": outcome.created, "merged_into": outcome.updated}, status=status.HTTP_201_CREATED)


class MemoryView(ScopedView):
    @extend_schema(operation_id="get_memory", responses=MemorySerializer)
    def get(self, request: Request, app_name: str, user_id: str, memory_id: str) -> Response:
        """One memory of the user."""
        return Response(MemorySerializer(_memory(self, memory_id)).data)

    @extend_schema(operation_id="update_memory", request=MemoryUpdateSerializer, responses=MemorySerializer)
    def patch(self, request: Request, app_name: str, user_id: str, memory_id: str) -> Response:
        """Change a memory's text (a revision records it)."""
        memory = _memory(self, memory_id)
        data = valid(MemoryUpdateSerializer, request.data)
        try:
            memory = services.do_update_memory(
                memory_id=memory.id, app_name=app_name, user_id=user_id, text=data["text"], cause=_cause(request)
            )
        except services.MemoryServiceError as error:
            _raise_for(error)
        return Response(MemorySerializer(memory).data)

    @extend_schema(operation_id="delete_memory", responses={204: None})
    def delete(self, request: Request, app_name: str, user_id: str, memory_id: str) -> Response:
        """Erase a memory with its revisions."""
        memory = _memory(self, memory_id)
        services.do_delete_memory(memory_id=memory.id, app_name=app_name, user_id=user_id)
        return Response(status=status.HTTP_204_NO_CONTENT)


class MemorySearchView(ScopedView):
    @extend_schema(
        operation_id="search_memories",
        request=SearchSerializer,
        responses=HitSerializer(many=True),
        examples=[
            OpenApiExample("What holds now", request_only=True, value={"query": "temperature unit", "limit": 5}),
            OpenApiExample(
                "What held then",
                request_only=True,
                value={"query": "where does she live", "as_of": "2026-06-01T00:00:00Z"},
            ),
        ],
    )
    def post(self, request: Request, app_name: str, user_id: str) -> Response:
        """The memories that best answer ``query`` (hybrid vector and keyword search), ranked."""
        data = valid(SearchSerializer, request.data)
        hits = search_memories(
            app_name=app_name, user_id=user_id, query=data["query"], limit=data["limit"], as_of=data.get("as_of")
        )
        return Response(HitSerializer([hit.__dict__ for hit in hits], many=True).data)


class MemoryRevisionsView(ScopedView):
    @extend_schema(operation_id="list_memory_revisions", responses=RevisionSerializer(many=True))
    def get(self, request: Request, app_name: str, user_id: str, memory_id: str) -> Response:
        """Every change of the memory, oldest first: what it was, what it became, and why."""
        memory = _memory(self, memory_id)
        return Response(RevisionSerializer(memory.revisions.order_by("id"), many=True).data)


class MemoryRollbackView(ScopedView):
    @extend_schema(operation_id="rollback_memory", request=RollbackSerializer, responses=MemorySerializer)
    def post(self, request: Request, app_name: str, user_id: str, memory_id: str) -> Response:
        """Return the memory to its text and status right after ``revision_id``."""
        memory = _memory(self, memory_id)
        data = valid(RollbackSerializer, request.data)
        try:
            services.check_revision_exists(
                services.get_bank_config(app_name),
                memory.revisions.filter(id=data["revision_id"]).exists(),
                "Not a revision of this memory.",
            )
        except services.MemoryServiceError as error:
            raise ValidationError({"revision_id": [str(error)]}) from error
        try:
            memory = services.do_rollback(
                revision_id=data["revision_id"], app_name=app_name, user_id=user_id, cause=_cause(request)
            )
        except services.MemoryServiceError as error:
            _raise_for(error)
        return Response(MemorySerializer(memory).data)


class SessionIngestView(ScopedView):
    """Add a session to memory: returns the consolidation job (run by a worker)."""

    @extend_schema(operation_id="add_session_to_memory", request=None, responses={202: JobSerializer})
    def post(self, request: Request, app_name: str, user_id: str, session_id: str) -> Response:
        if not Session.objects.live().filter(app_name=app_name, user_id=user_id, session_id=session_id).exists():
            raise Http404
        job = consolidation.do_enqueue_session(app_name=app_name, user_id=user_id, session_id=session_id)
        return Response(JobSerializer(job).data, status=status.HTTP_202_ACCEPTED)


class SessionForgettingSerializer(serializers.Serializer):
    forgotten = serializers.ListField(child=serializers.UUIDField(), help_text="Memories that came only from it.")
    detached = serializers.ListField(
        child=serializers.UUIDField(), help_text="Memories from other sessions too: kept, without this source."
    )


class SessionForgetView(ScopedView):
    """Forget the memories that came only from this session (it need not exist any more); others lose it as a source."""

    @extend_schema(operation_id="forget_session_memories", request=None, responses=SessionForgettingSerializer)
    def post(self, request: Request, app_name: str, user_id: str, session_id: str) -> Response:
        outcome = services.do_forget_session_memories(
            app_name=app_name,
            user_id=user_id,
            session_id=session_id,
            cause=f"{_cause(request)}: forget the memories of session {session_id}",
        )
        return Response({"forgotten": outcome.forgotten, "detached": outcome.detached})


class JobView(ScopedView):
    @extend_schema(operation_id="get_memory_job", responses=JobSerializer)
    def get(self, request: Request, app_name: str, user_id: str, job_id: int) -> Response:
        """A consolidation job: its status, attempts, error and what it made."""
        job = ConsolidationJob.objects.filter(app_name=app_name, user_id=user_id, pk=job_id).first()
        if job is None:
            raise Http404
        return Response(JobSerializer(job).data)


class MemoryBankConfigView(ScopedView):
    """The app's memory bank config: topics and examples for extraction, TTLs. Changed by app-wide keys only."""

    @extend_schema(operation_id="get_memory_config", responses=MemoryBankConfigSerializer)
    def get(self, request: Request, app_name: str) -> Response:
        """The app's memory bank settings: topics and examples extraction follows, TTLs."""
        return Response(MemoryBankConfigSerializer(services.get_bank_config(app_name)).data)

    @extend_schema(
        operation_id="update_memory_config", request=MemoryBankConfigSerializer, responses=MemoryBankConfigSerializer
    )
    def patch(self, request: Request, app_name: str) -> Response:
        """Change some of the app's memory bank settings (a key of the whole app only)."""
        check_whole_app(self.scope.only_user, app_name, "change the app's memory bank settings")
        changes = valid(MemoryBankConfigSerializer, request.data, partial=True)
        try:
            config = services.do_configure_bank(app_name=app_name, changes=dict(changes))
        except services.MemoryServiceError as error:
            raise ValidationError(str(error)) from error
        return Response(MemoryBankConfigSerializer(config).data)


class MemoryExportView(ScopedView):
    """The app's memories (or one user's) as JSONL, streamed: what ``cognizes export`` writes."""

    @extend_schema(
        operation_id="export_memories",
        parameters=[OpenApiParameter("user", str, description="Only this user's memories (a user's key: its own).")],
        responses={(200, "application/x-ndjson"): OpenApiTypes.STR},
    )
    def get(self, request: Request, app_name: str) -> StreamingHttpResponse:
        """Every memory of the app with its revisions, scopes and vector: a header line, then one memory a line
        (docs/operations.md, "Export and import"). A key of one user exports that user's memories only."""
        user = request.query_params.get("user") or self.scope.only_user
        if user != self.scope.only_user:
            check_whole_app(self.scope.only_user, app_name, "export another user's memories")
        if user is not None and len(user) > MAX_KEY_LENGTH:
            raise ValidationError({"user": f"At most {MAX_KEY_LENGTH} characters."})
        stream = ThreadedStream(lambda: _chunks(get_export_lines(app_name, user_id=user)))
        response = StreamingHttpResponse(stream, content_type="application/x-ndjson; charset=utf-8")
        response["Content-Disposition"] = 'attachment; filename="memories.jsonl"'
        return response


def _chunks(lines: Iterator[str], size: int = 64 * 1024) -> Iterator[bytes]:
    """Lines gathered into chunks of about ``size`` bytes: a chunk, not a line, crosses to the server's thread."""
    chunk: list[bytes] = []
    length = 0
    for line in lines:
        data = line.encode("utf-8")
        chunk.append(data)
        length += len(data)
        if length >= size:
            yield b"".join(chunk)
            chunk, length = [], 0
    if chunk:
        yield b"".join(chunk)
