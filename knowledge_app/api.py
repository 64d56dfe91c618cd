"""HTTP: an app's corpora, their documents and chunks, and search, under ``/api/v1/apps/{app}/corpora/``.

A document is uploaded as the request body itself (its Content-Type the document's,
``?filename=`` naming it) or as the ``file`` field of a multipart form; it answers
201 ``pending`` at once, and a worker indexes it (``GET`` it to follow: ``running``,
``active`` with its chunk count, or ``failed`` with the reason). The same bytes
again answer 200 with the document already there. Managing corpora and the app's
documents takes a key of the whole app; a key of one user may read and search them, and
upload documents of its own, which only it and the app's keys see (and it alone changes).
"""

from __future__ import annotations

from django.conf import settings
from django.http import Http404
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiExample, extend_schema
from rest_framework import exceptions, serializers, status
from rest_framework.parsers import MultiPartParser
from rest_framework.request import Request
from rest_framework.response import Response

from cognizes.access.api import Conflict, ScopedView, page_of, paginated, valid
from cognizes.access.key_kinds import check_whole_app
from cognizes.access.parsers import PayloadTooLarge
from knowledge_app import services
from knowledge_app.metadata import InvalidMetadata
from knowledge_app.models import Chunk, Corpus, Document
from knowledge_app.rerank import RERANK_STATES, RerankRefused, search_and_rerank
from knowledge_app.search import Hit


class CorpusSerializer(serializers.ModelSerializer):
    class Meta:
        model = Corpus
        fields = [
            "id",
            "display_name",
            "description",
            "chunk_size",
            "chunk_overlap",
            "embedder",
            "created_at",
            "updated_at",
        ]
        read_only_fields = ["id", "embedder", "created_at", "updated_at"]


class DocumentSerializer(serializers.ModelSerializer):
    class Meta:
        model = Document
        fields = [
            "id",
            "corpus_id",
            "user_id",
            "display_name",
            "description",
            "source_uri",
            "mime_type",
            "size_bytes",
            "content_hash",
            "metadata",
            "chunk_size",
            "chunk_overlap",
            "status",
            "progress",
            "state",
            "pages",
            "chunks_total",
            "chunks_embedded",
            "error",
            "chunk_count",
            "attempts",
            "created_at",
            "updated_at",
            "indexed_at",
        ]


class UploadParameters(serializers.Serializer):
    """An upload's query parameters: what the bytes alone do not say."""

    filename = serializers.CharField(required=False, default="", help_text="The document's file name (a raw body).")
    display_name = serializers.CharField(required=False, default="")
    description = serializers.CharField(required=False, default="")
    chunk_size = serializers.IntegerField(
        required=False, min_value=1, help_text="This document's tokens per chunk (else the corpus's)."
    )
    chunk_overlap = serializers.IntegerField(required=False, min_value=0)
    metadata = serializers.JSONField(
        required=False, binary=True, help_text='A JSON object searches may filter on: {"team": "sales", "year": 2025}.'
    )


class MetadataSerializer(serializers.Serializer):
    metadata = serializers.JSONField(help_text="The document's metadata, replacing what it had.")


class ChunkSerializer(serializers.ModelSerializer):
    class Meta:
        model = Chunk
        fields = ["id", "ordinal", "heading", "text", "start", "end"]


class ChunkSearchSerializer(serializers.Serializer):
    query = serializers.CharField(trim_whitespace=False)
    top_k = serializers.IntegerField(default=10, min_value=1, max_value=100)
    vector_distance_threshold = serializers.FloatField(
        required=False, min_value=0, max_value=2, help_text="Leave out chunks farther than this (cosine)."
    )
    metadata = serializers.DictField(
        required=False,
        help_text="Only documents with each of these metadata values "
        '(a list-valued key: holding it): {"team": "sales"}.',
    )
    rerank = serializers.BooleanField(
        required=False,
        allow_null=True,
        default=None,
        help_text="Have a model order the fused candidates (true), or not (false); "
        "unset: as the server's default rerank model says.",
    )
    rerank_model = serializers.CharField(
        required=False,
        max_length=200,
        help_text="The model that reranks (an ADK model name: gemini-2.5-flash, "
        "openai/…); unset: the server's default.",
    )


class ChunkHitSerializer(serializers.Serializer):
    chunk_id = serializers.IntegerField()
    text = serializers.CharField()
    heading = serializers.CharField(allow_blank=True)
    start = serializers.IntegerField()
    end = serializers.IntegerField()
    document_id = serializers.IntegerField()
    document_name = serializers.CharField()
    source_uri = serializers.CharField(allow_blank=True)
    score = serializers.FloatField(help_text="Higher is better: the fusion's, or 1/rank in a reranker's order.")
    distance = serializers.FloatField(help_text="Cosine distance to the query (0: the same meaning, 2: the opposite).")
    fused_score = serializers.FloatField(
        help_text=(
            "The fusion's score: the chunk's similarity to the query and its BM25 score (0 if not a keyword "
            "candidate), each in standard deviations from the candidates' mean, weighed (knowledge_app.search.Fusion); "
            "can be negative."
        )
    )
    vector_rank = serializers.IntegerField(
        allow_null=True, help_text="The chunk's place by meaning (null: not a candidate by meaning)."
    )
    keyword_rank = serializers.IntegerField(allow_null=True)
    rerank = serializers.ChoiceField(
        RERANK_STATES,
        allow_null=True,
        help_text=(
            "null: no rerank was asked; ranked: the model placed it; unranked: the model left it out (it follows the "
            "ranked ones, in fused order); failed: the model failed, the hits are in fused order."
        ),
    )

    def to_representation(self, hit: Hit) -> dict:
        shown = super().to_representation(hit)
        shown["fused_score"] = hit.score if hit.fused_score is None else hit.fused_score
        return shown


def _manage(view: ScopedView) -> None:
    check_whole_app(view.scope.only_user, view.scope.app_name, "change the app's corpora")


def _corpus(view: ScopedView, corpus_id: int) -> Corpus:
    corpus = services.get_corpus(view.scope.app_name, corpus_id)
    if corpus is None:
        raise Http404
    return corpus


def _document(view: ScopedView, corpus_id: int, document_id: int, *, write: bool = False) -> Document:
    document = (
        services.documents(view.scope.app_name, corpus_id, user_id=view.scope.only_user).filter(id=document_id).first()
    )
    if document is None:
        raise Http404
    if write:
        try:
            services.check_document_write(document, user_id=view.scope.only_user)
        except services.DocumentNotYours as refused:
            raise exceptions.PermissionDenied(str(refused)) from refused
    return document


class CorporaView(ScopedView):
    @extend_schema(operation_id="list_corpora", responses=paginated(CorpusSerializer))
    def get(self, request: Request, app_name: str) -> Response:
        """The app's corpora, oldest first."""
        return page_of(self, request, services.corpora(app_name).order_by("id"), CorpusSerializer)

    @extend_schema(
        operation_id="create_corpus",
        request=CorpusSerializer,
        responses={201: CorpusSerializer},
        examples=[
            OpenApiExample(
                "A handbook",
                request_only=True,
                value={"display_name": "Employee handbook", "chunk_size": 512, "chunk_overlap": 64},
            )
        ],
    )
    def post(self, request: Request, app_name: str) -> Response:
        """Create a corpus, with how its documents are cut into chunks (tokens)."""
        _manage(self)
        data = valid(CorpusSerializer, request.data)
        try:
            corpus = services.do_create_corpus(app_name=app_name, **data)
        except services.KnowledgeError as error:
            raise exceptions.ValidationError(str(error)) from error
        return Response(CorpusSerializer(corpus).data, status=status.HTTP_201_CREATED)


class CorpusView(ScopedView):
    @extend_schema(operation_id="get_corpus", responses=CorpusSerializer)
    def get(self, request: Request, app_name: str, corpus_id: int) -> Response:
        """One corpus."""
        return Response(CorpusSerializer(_corpus(self, corpus_id)).data)

    @extend_schema(operation_id="delete_corpus", responses={204: None})
    def delete(self, request: Request, app_name: str, corpus_id: int) -> Response:
        """Delete the corpus with its documents and chunks."""
        _manage(self)
        services.do_delete_corpus(_corpus(self, corpus_id))
        return Response(status=status.HTTP_204_NO_CONTENT)


class DocumentsView(ScopedView):
    parser_classes = [MultiPartParser]  # a raw body is read as it came (below), whatever its type

    @extend_schema(operation_id="list_documents", responses=paginated(DocumentSerializer))
    def get(self, request: Request, app_name: str, corpus_id: int) -> Response:
        """The corpus's documents with their indexing status, oldest first."""
        _corpus(self, corpus_id)
        return page_of(
            self,
            request,
            services.documents(app_name, corpus_id, user_id=self.scope.only_user).order_by("id"),
            DocumentSerializer,
        )

    @extend_schema(
        operation_id="upload_document",
        request={"*/*": OpenApiTypes.BINARY},
        parameters=[UploadParameters],
        responses={201: DocumentSerializer, 200: DocumentSerializer},
    )
    def post(self, request: Request, app_name: str, corpus_id: int) -> Response:
        """Upload a document: indexed by a worker (201 pending); the same bytes again answer 200, unchanged. With a key
        of one user the document is that user's."""
        corpus = _corpus(self, corpus_id)
        given = valid(UploadParameters, request.query_params)
        limit = settings.COGNIZES_KNOWLEDGE_MAX_BYTES
        if int(request.META.get("CONTENT_LENGTH") or 0) > limit + 64 * 1024:
            raise PayloadTooLarge(f"A document may have at most {limit} bytes.")
        if (request.content_type or "").startswith("multipart/form-data"):
            upload = request.FILES.get("file")
            if upload is None:
                raise exceptions.ValidationError({"file": ["Send the document as the form's 'file' field."]})
            data, filename, mime_type = upload.read(limit + 1), upload.name, upload.content_type or ""
        else:
            data = request.stream.read(limit + 1) if request.stream is not None else b""
            filename, mime_type = given["filename"], request.content_type or ""
        try:
            added = services.do_add_document(
                corpus,
                data=data,
                filename=filename,
                mime_type=mime_type,
                display_name=given["display_name"],
                description=given["description"],
                chunk_size=given.get("chunk_size"),
                chunk_overlap=given.get("chunk_overlap"),
                metadata=given.get("metadata"),
                user_id=self.scope.only_user or "",
            )
        except services.TooLarge as error:
            raise PayloadTooLarge(str(error)) from error
        except services.EmbeddedWithAnother as error:
            raise Conflict(str(error)) from error
        except services.KnowledgeError as error:
            raise exceptions.ValidationError({"document": [str(error)]}) from error
        return Response(
            DocumentSerializer(added.document).data,
            status=status.HTTP_201_CREATED if added.created else status.HTTP_200_OK,
        )


class DocumentView(ScopedView):
    @extend_schema(operation_id="get_document", responses=DocumentSerializer)
    def get(self, request: Request, app_name: str, corpus_id: int, document_id: int) -> Response:
        """One document: its status (pending, running, active, failed with the reason) and chunk count."""
        return Response(DocumentSerializer(_document(self, corpus_id, document_id)).data)

    @extend_schema(operation_id="set_document_metadata", request=MetadataSerializer, responses=DocumentSerializer)
    def patch(self, request: Request, app_name: str, corpus_id: int, document_id: int) -> Response:
        """Replace the document's metadata (it is not indexed again: only which searches keep it changes)."""
        document = _document(self, corpus_id, document_id, write=True)
        try:
            services.do_set_metadata(document, valid(MetadataSerializer, request.data)["metadata"])
        except services.KnowledgeError as error:
            raise exceptions.ValidationError({"metadata": [str(error)]}) from error
        return Response(DocumentSerializer(_document(self, corpus_id, document_id)).data)

    @extend_schema(operation_id="delete_document", responses={204: None})
    def delete(self, request: Request, app_name: str, corpus_id: int, document_id: int) -> Response:
        """Delete the document with its chunks."""
        services.do_delete_document(_document(self, corpus_id, document_id, write=True))
        return Response(status=status.HTTP_204_NO_CONTENT)


class DocumentChunksView(ScopedView):
    @extend_schema(operation_id="list_chunks", responses=paginated(ChunkSerializer))
    def get(self, request: Request, app_name: str, corpus_id: int, document_id: int) -> Response:
        """The document's chunks in order: text, the headings above it, its character span."""
        document = _document(self, corpus_id, document_id)
        return page_of(self, request, document.chunks.order_by("ordinal"), ChunkSerializer)


class CorpusSearchView(ScopedView):
    changes_nothing = True  # a search, sent as POST

    @extend_schema(
        operation_id="search_corpus",
        request=ChunkSearchSerializer,
        responses=ChunkHitSerializer(many=True),
        examples=[
            OpenApiExample(
                "A question", request_only=True, value={"query": "How many days of leave do I get?", "top_k": 5}
            )
        ],
    )
    def post(self, request: Request, app_name: str, corpus_id: int) -> Response:
        """The corpus's chunks that best answer ``query`` (hybrid vector and keyword search), ranked; with a rerank
        model (``rerank_model``, or the server's default), ordered by it among more candidates."""
        corpus = _corpus(self, corpus_id)
        data = valid(ChunkSearchSerializer, request.data)
        try:
            found = search_and_rerank(
                app_name=app_name,
                user_id=self.scope.only_user,
                corpus_ids=[corpus.id],
                query=data["query"],
                top_k=data["top_k"],
                vector_distance_threshold=data.get("vector_distance_threshold"),
                rerank=data["rerank"],
                rerank_model=data.get("rerank_model"),
                metadata=[(key, "=", value) for key, value in data.get("metadata", {}).items()],
            )
        except InvalidMetadata as error:
            raise exceptions.ValidationError({"metadata": [str(error)]}) from error
        except RerankRefused as error:
            raise exceptions.ValidationError({"rerank_model": [str(error)]}) from error
        except services.EmbeddedWithAnother as error:
            raise Conflict(str(error)) from error
        return Response(ChunkHitSerializer(found.hits, many=True).data)
