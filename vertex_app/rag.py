"""Vertex AI RAG Engine's REST (v1beta1, and v1 for python-aiplatform) on the knowledge store: corpora, files,
uploads, imports, ``:retrieveContexts``.

What agentplatform 2.6 and ADK 2.13 send (``../shared/vertex-rag-wire.md``): a corpus is a
``ragCorpora/{id}`` (under ``projects/{p}/locations/{l}/`` in project mode), the app the
caller's key is for owns it; a RagFile is a document, its user's if a key of one user uploaded it (only
that user's keys and the app's see it: ``knowledge_app.services.documents``, and the search's SQL).
Bodies are read in either spelling (``rag_resources`` inside ``vertexRagStore``). Uploads are Google's resumable
protocol: a start call answers with an ``x-goog-upload-url`` whose signed token is the capability (the
client sends no key with the bytes), and the bytes come in one ``upload, finalize`` call;
or, from python-aiplatform, one multipart form. Imports read the server's import root, on a
worker (``rag_import``: the wire; ``knowledge_app.imports``).
No rule lives here: ``knowledge_app`` stores, indexes and searches.
"""

from __future__ import annotations

import ast
import json
import math
import time
from collections.abc import Sequence
from typing import Any, ClassVar, cast

from django.conf import settings
from django.http import QueryDict
from rest_framework import exceptions
from rest_framework.parsers import MultiPartParser
from rest_framework.permissions import AllowAny
from rest_framework.request import Request
from rest_framework.response import Response

from cognizes.access.api import check_scope, check_url, parse_id
from cognizes.access.key_kinds import check_whole_app
from cognizes.access.models import ApiKey
from cognizes.access.parsers import LimitedJSONParser, refuse_unstorable
from knowledge_app import imports, services
from knowledge_app.import_sources import ImportsNotConfigured, SourceNotFound
from knowledge_app.metadata import InvalidMetadata
from knowledge_app.models import Corpus, Document, DocumentStatus
from knowledge_app.rerank import FAILED, RerankRefused, search_and_rerank
from knowledge_app.search import FUSION, Fusion, Hit
from vertex_app import errors, filters, names, rag_import, upload_grants, wire
from vertex_app.base import EMPTY, VertexSurface, operation, page
from vertex_app.rag_chunking import FILE_CONFIG, chunking

FILE_STATE: dict[str, str] = {DocumentStatus.ACTIVE: "ACTIVE", DocumentStatus.FAILED: "ERROR"}

_CORPUS_SPEC = {
    "name": None,
    "display_name": None,
    "description": None,
    "rag_embedding_model_config": None,
    "vector_db_config": None,
    "rag_vector_db_config": None,
    "corpus_status": None,
    "create_time": None,
    "update_time": None,
    "vertex_ai_search_config": None,
    "rag_files_count": None,
    "encryption_spec": None,
    "corpus_type_config": None,
    "satisfies_pzi": None,
    "satisfies_pzs": None,
}
_FIXED_CORPUS_FIELDS = (
    "rag_embedding_model_config",
    "vector_db_config",
    "rag_vector_db_config",
    "vertex_ai_search_config",
    "encryption_spec",
    "corpus_type_config",
)
"""What a Cognizes corpus cannot be given: its server embeds, stores and encrypts (an update naming one: 400)."""
_RESOURCE = {"rag_corpus": None, "rag_file_ids": None}
RETRIEVE_SPEC: wire.Spec = {
    "parent": None,
    "vertex_rag_store": {"rag_resources": [_RESOURCE], "rag_corpora": None, "vector_distance_threshold": None},
    "query": {
        "text": None,
        "similarity_top_k": None,
        "ranking": {"alpha": None},
        "rag_retrieval_config": {
            "top_k": None,
            "hybrid_search": {"alpha": None},
            "ranking": {"rank_service": {"model_name": None}, "llm_ranker": {"model_name": None}},
            "filter": {"vector_distance_threshold": None, "vector_similarity_threshold": None, "metadata_filter": None},
        },
    },
}
_UPLOAD_SPEC: wire.Spec = {
    "rag_file": {"display_name": None, "description": None},
    "upload_rag_file_config": FILE_CONFIG,
}


class RagView(VertexSurface):
    """A path of RAG Engine: the corpora are the caller's key's app's."""

    app_name: str
    prefix: str
    changes_nothing: ClassVar[bool] = False
    """A POST that only reads (``:retrieveContexts``): a read-only key may call it."""

    def initial(self, request: Request, *args: Any, **kwargs: Any) -> None:
        super().initial(request, *args, **kwargs)
        check_url(request, kwargs)
        if not isinstance(request.auth, ApiKey):
            raise exceptions.NotAuthenticated("RAG Engine takes a Cognizes API key.")
        self.app_name = request.auth.app_name
        self.caller = check_scope(request, self.app_name, None, write=False if self.changes_nothing else None)
        self.prefix = names.location_prefix(kwargs.get("project"), kwargs.get("location"))

    def message_type(self, name: str) -> str:
        """The protobuf type of a message in the API version asked for: a v1 client cannot read a v1beta1 Any."""
        version = "v1" if "/v1/" in self.request.path else "v1beta1"
        return f"google.cloud.aiplatform.{version}.{name}"

    def manage(self) -> None:
        """Corpora, and files other than a user's own uploads, are the whole app's key's to change."""
        check_whole_app(self.caller.only_user, self.app_name, "change the app's corpora")

    def corpus(self, corpus_id: str) -> Corpus:
        number = parse_id(corpus_id)
        corpus = services.get_corpus(self.app_name, number) if number is not None else None
        if corpus is None:
            raise errors.NotFound(f"ragCorpora/{corpus_id} does not exist.")
        return corpus

    def corpus_json(self, corpus: Corpus) -> dict[str, Any]:
        return {
            "name": names.rag_corpus(self.prefix, corpus.id),
            "displayName": corpus.display_name,
            "description": corpus.description,
            "createTime": wire.rfc3339(corpus.created_at),
            "updateTime": wire.rfc3339(corpus.updated_at),
            "corpusStatus": {"state": "ACTIVE"},
        }

    def file_json(self, document: Document) -> dict[str, Any]:
        status: dict[str, Any] = {"state": FILE_STATE.get(document.status, "STATE_UNSPECIFIED")}
        if document.error:
            status["errorStatus"] = document.error
        return {
            "name": names.rag_file(names.rag_corpus(self.prefix, document.corpus_id), document.id),
            "displayName": document.display_name,
            "description": document.description,
            "sizeBytes": str(document.size_bytes),
            "createTime": wire.rfc3339(document.created_at),
            "updateTime": wire.rfc3339(document.updated_at),
            "fileStatus": status,
            **({"userMetadata": json.dumps(document.metadata, ensure_ascii=False)} if document.metadata else {}),
        }


class RagCorporaView(RagView):
    def get(self, request: Request, **kwargs: Any) -> Response:
        """List the corpora, a page at a time."""
        return Response(page(request, services.corpora(self.app_name).order_by("id"), "ragCorpora", self.corpus_json))

    def post(self, request: Request, **kwargs: Any) -> Response:
        """Create a corpus: an operation, done when it returns."""
        self.manage()
        body = wire.message(request.data, _CORPUS_SPEC)
        try:
            corpus = services.do_create_corpus(
                app_name=self.app_name,
                display_name=wire.string(body.get("display_name"), "displayName", required=True),
                description=body.get("description") or "",
            )
        except services.KnowledgeError as error:
            raise errors.InvalidArgument(str(error)) from error
        name = names.rag_corpus(self.prefix, corpus.id)
        return Response(
            operation(
                names.operation(name, f"create-{time.time_ns()}"),
                self.corpus_json(corpus),
                kind=self.message_type("RagCorpus"),
            )
        )


class RagCorpusView(RagView):
    def get(self, request: Request, corpus_id: str, **kwargs: Any) -> Response:
        """Read a corpus."""
        return Response(self.corpus_json(self.corpus(corpus_id)))

    def patch(self, request: Request, corpus_id: str, **kwargs: Any) -> Response:
        """Rename or redescribe a corpus (the fields given; output-only ones are ignored, as Google does): an
        operation, done when it returns, answering the corpus."""
        self.manage()
        corpus = self.corpus(corpus_id)
        body = wire.message(request.data, _CORPUS_SPEC)
        fixed = [wire.camel(field) for field in _FIXED_CORPUS_FIELDS if body.get(field)]
        if fixed:
            raise errors.InvalidArgument(
                f"Cognizes cannot change {', '.join(fixed)}: its server embeds and stores every corpus "
                "(COGNIZES_EMBEDDER); update displayName and description."
            )
        display_name, description = body.get("display_name"), body.get("description")
        try:
            services.do_update_corpus(
                corpus,
                display_name=None if display_name is None else wire.string(display_name, "displayName", required=True),
                description=None if description is None else wire.string(description, "description"),
            )
        except services.KnowledgeError as error:
            raise errors.InvalidArgument(str(error)) from error
        name = names.rag_corpus(self.prefix, corpus.id)
        return Response(
            operation(
                names.operation(name, f"update-{time.time_ns()}"),
                self.corpus_json(corpus),
                kind=self.message_type("RagCorpus"),
            )
        )

    def delete(self, request: Request, corpus_id: str, **kwargs: Any) -> Response:
        """Delete a corpus with its files: an operation, done when it returns."""
        self.manage()
        corpus = self.corpus(corpus_id)
        name = names.rag_corpus(self.prefix, corpus.id)  # before the delete, which clears the id
        services.do_delete_corpus(corpus)
        return Response(operation(names.operation(name, f"delete-{time.time_ns()}"), kind=EMPTY))


class RagOperationView(RagView):
    def get(self, request: Request, corpus_id: str, operation_id: str, **kwargs: Any) -> Response:
        """Read a corpus's operation: its creation or update (answering the corpus) or deletion, done when they
        returned, or
        an import (``import-{id}``), done when its files are added and indexed."""
        kind, _, issued = operation_id.partition("-")
        name = names.operation(names.rag_corpus(self.prefix, corpus_id), operation_id)
        if kind == "import":
            number = parse_id(issued)
            record = (
                imports.get_import(self.app_name, self.corpus(corpus_id).id, number) if number is not None else None
            )
            if record is None:
                raise errors.NotFound(f"Operation {operation_id} does not exist.")
            return Response(rag_import.import_operation(name, record, imports.get_progress(record)))
        if kind not in ("create", "update", "delete") or not names.issued_operation(issued):
            raise errors.NotFound(f"Operation {operation_id} does not exist.")
        if kind == "delete":
            return Response(operation(name, kind=EMPTY))
        return Response(operation(name, self.corpus_json(self.corpus(corpus_id)), kind=self.message_type("RagCorpus")))


class RagFilesView(RagView):
    def get(self, request: Request, corpus_id: str, **kwargs: Any) -> Response:
        """List a corpus's files, a page at a time."""
        corpus = self.corpus(corpus_id)
        documents = services.documents(self.app_name, corpus.id, user_id=self.caller.only_user).order_by("id")
        return Response(page(request, documents, "ragFiles", self.file_json))


class RagFileView(RagView):
    def document(self, corpus_id: str, file_id: str) -> Document:
        corpus = self.corpus(corpus_id)
        number = parse_id(file_id)
        found = (
            services.documents(self.app_name, corpus.id, user_id=self.caller.only_user).filter(id=number).first()
            if number is not None
            else None
        )
        if found is None:
            raise errors.NotFound(f"ragFiles/{file_id} does not exist.")
        return found

    def get(self, request: Request, corpus_id: str, file_id: str, **kwargs: Any) -> Response:
        """Read a file: its indexing state (ACTIVE, ERROR with the reason, else not yet)."""
        return Response(self.file_json(self.document(corpus_id, file_id)))

    def delete(self, request: Request, corpus_id: str, file_id: str, **kwargs: Any) -> Response:
        """Delete a file and its chunks: an operation, done when it returns (a key of one user: its own files)."""
        document = self.document(corpus_id, file_id)
        try:
            services.check_document_write(document, user_id=self.caller.only_user)
        except services.DocumentNotYours as refused:
            raise exceptions.PermissionDenied(str(refused)) from refused
        services.do_delete_document(document)
        corpus = names.rag_corpus(self.prefix, document.corpus_id)  # the corpus's operations answer its polls
        return Response(operation(names.operation(corpus, f"delete-{time.time_ns()}"), kind=EMPTY))


class RagImportView(RagView):
    def post(self, request: Request, corpus_id: str, **kwargs: Any) -> Response:
        """Import files from the app's import folder (gs:// and file:// URIs): an operation a worker runs."""
        self.manage()
        corpus = self.corpus(corpus_id)
        asked = rag_import.import_request(request.data)
        try:
            record = imports.do_create_import(
                corpus, uris=asked.uris, chunk_size=asked.chunk_size, chunk_overlap=asked.chunk_overlap
            )
        except ImportsNotConfigured as off:
            raise errors.FailedPrecondition(str(off)) from off
        except SourceNotFound as missing:  # another app's path too: 404 alike, so nothing of it is learnt
            raise errors.NotFound(str(missing)) from missing
        except services.KnowledgeError as error:
            raise errors.InvalidArgument(str(error)) from error
        name = names.operation(names.rag_corpus(self.prefix, corpus.id), f"import-{record.id}")
        return Response(rag_import.import_operation(name, record, imports.get_progress(record)))


class RagUploadView(RagView):
    """``upload/v1beta1/{corpus}/ragFiles:upload``: the resumable start (with a key), then the bytes (its token);
    or the whole file in one multipart form."""

    parser_classes = [LimitedJSONParser, MultiPartParser]

    def get_permissions(self) -> Sequence[Any]:
        return [AllowAny()] if "upload_id" in self.request.query_params else super().get_permissions()

    def initial(self, request: Request, *args: Any, **kwargs: Any) -> None:
        if "upload_id" in request.query_params:  # the bytes: the signed URL is the capability
            super(RagView, self).initial(request, *args, **kwargs)
            check_url(request, kwargs)
            self.prefix = names.location_prefix(kwargs.get("project"), kwargs.get("location"))
            return
        super().initial(request, *args, **kwargs)

    def post(self, request: Request, corpus_id: str, **kwargs: Any) -> Response:
        """Upload a file (Google's resumable protocol; the bytes in one call): indexed by a worker."""
        token = request.query_params.get("upload_id")
        if token is None:
            return self.start(request, corpus_id)
        try:
            upload_grants.check_token(token)
        except upload_grants.GrantRefused as refused:
            raise exceptions.PermissionDenied(str(refused)) from refused
        command = request.headers.get("X-Goog-Upload-Command", "").replace(" ", "")
        if command != "upload,finalize" or _offset(request.headers.get("X-Goog-Upload-Offset")) != 0:
            raise errors.InvalidArgument(
                "Cognizes takes an upload's bytes in one 'upload, finalize' call "
                "(files up to the client's chunk size, 8 MiB for agentplatform)."
            )
        data = request.stream.read() if request.stream is not None else b""
        try:
            added = upload_grants.do_upload(token, data=data)
        except upload_grants.GrantRefused as refused:
            raise exceptions.PermissionDenied(str(refused)) from refused
        except services.KnowledgeError as error:
            raise errors.InvalidArgument(str(error)) from error
        response = Response({"ragFile": self.file_json(added.document)})
        response["X-Goog-Upload-Status"] = "final"
        return response

    def start(self, request: Request, corpus_id: str) -> Response:
        """A key of one user uploads too: the file is that user's (``services.documents``), as ADK's
        VertexAiRagMemoryService, given each user's key, keeps each user's sessions."""
        protocol = request.headers.get("X-Goog-Upload-Protocol", "").lower()
        if protocol == "multipart":
            return self.multipart(request, corpus_id)
        if protocol != "resumable":
            raise errors.InvalidArgument(
                "Cognizes takes Google's resumable upload protocol (X-Goog-Upload-Protocol: "
                "resumable, as agentplatform sends it) or multipart (the older SDK's)."
            )
        corpus = self.corpus(corpus_id)
        body = wire.message(request.data or {}, _UPLOAD_SPEC)
        filename = request.headers.get("X-Goog-Upload-File-Name", "")
        declared = upload_grants.Declared(
            file_name=filename,
            display_name=(body.get("rag_file") or {}).get("display_name") or filename,
            description=(body.get("rag_file") or {}).get("description") or "",
            mime_type=request.headers.get("X-Goog-Upload-Header-Content-Type", ""),
            chunking=chunking(body.get("upload_rag_file_config")),
        )
        try:
            services.chunking_for(corpus, **declared.chunking)
            services.check_document_fields(
                filename=filename, mime_type=declared.mime_type, display_name=declared.display_name
            )
        except services.KnowledgeError as error:  # said now, not after the bytes are sent
            raise errors.InvalidArgument(str(error)) from error
        key = cast(ApiKey, request.auth)  # this surface authenticates by key (cognizes.access.callers)
        token = upload_grants.do_issue_grant(key=key, corpus=corpus, declared=declared)
        url = request.build_absolute_uri(request.path) + "?upload_id=" + token
        response = Response({})
        response["X-Goog-Upload-URL"] = url
        response["X-Goog-Upload-Status"] = "active"
        return response

    def multipart(self, request: Request, corpus_id: str) -> Response:
        """python-aiplatform's ``vertexai.rag.upload_file``: one form with the file and a ``metadata`` part, which
        that SDK writes with ``str()`` of a dict (a Python literal, single quotes), so it is read as JSON or that."""
        corpus = self.corpus(corpus_id)
        upload = request.FILES.get("file")
        if upload is None:
            raise errors.InvalidArgument("A multipart upload carries the file as its 'file' part.")
        raw = cast(QueryDict, request.data).get("metadata") or "{}"  # a multipart form's fields
        try:
            given = json.loads(raw)
        except ValueError:
            try:
                given = ast.literal_eval(raw)
            except (ValueError, SyntaxError, MemoryError, RecursionError):
                raise errors.InvalidArgument("The 'metadata' part is neither JSON nor a Python literal.") from None
        refuse_unstorable(given)  # what the body's parser refuses (NUL, 1e400), refused here too
        body = wire.message(given, _UPLOAD_SPEC, where="metadata")
        limit = settings.COGNIZES_KNOWLEDGE_MAX_BYTES
        try:
            added = services.do_add_document(
                corpus,
                data=upload.read(limit + 1),
                filename=upload.name,
                mime_type=upload.content_type or "",
                display_name=(body.get("rag_file") or {}).get("display_name") or upload.name,
                description=(body.get("rag_file") or {}).get("description") or "",
                user_id=self.caller.only_user or "",
                **chunking(body.get("upload_rag_file_config")),
            )
        except services.KnowledgeError as error:
            raise errors.InvalidArgument(str(error)) from error
        return Response({"ragFile": self.file_json(added.document)})


class RetrieveContextsView(RagView):
    changes_nothing = True

    def post(self, request: Request, **kwargs: Any) -> Response:
        """Retrieve the chunks of the corpora (or files) named that best answer the query."""
        body = wire.message(request.data, RETRIEVE_SPEC)
        return Response(
            {"contexts": {"contexts": self.contexts(body.get("vertex_rag_store") or {}, body.get("query"))}}
        )

    def contexts(self, store: dict[str, Any], query: dict[str, Any] | None) -> list[dict[str, Any]]:
        """The ``RagContexts.contexts`` that answer ``query`` (a ``RagQuery``) from ``store`` (a ``VertexRagStore``),
        both read by ``wire.message`` (snake_case)."""
        query = query or {}
        text = wire.string(query.get("text"), "query.text", required=True)
        config = query.get("rag_retrieval_config") or {}
        top_k = wire.integer(config.get("top_k") or query.get("similarity_top_k"), "top_k", default=10, low=1, high=100)
        given = config.get("filter") or {}
        resources = store.get("rag_resources") or [{"rag_corpus": name} for name in store.get("rag_corpora") or []]
        if not resources:
            raise errors.InvalidArgument("Name a corpus: vertexRagStore.ragResources[].ragCorpus.")
        ranking = config.get("ranking") or {}
        if ranking.get("rank_service") is not None:
            raise errors.InvalidArgument(
                "Cognizes cannot rerank with Google's semantic ranker (ranking.rank_service "
                "runs on Google's servers): ask for ranking.llm_ranker with a model_name "
                "instead, or leave rag_retrieval_config.ranking out."
            )
        llm_ranker = ranking.get("llm_ranker")
        corpus_ids, file_ids, files_named = [], set(), False
        for resource in resources:
            corpus_id = str(resource.get("rag_corpus") or "").rstrip("/").rpartition("/")[2]
            corpus_ids.append(self.corpus(corpus_id).id)
            named = [str(f).rpartition("/")[2] for f in resource.get("rag_file_ids") or []]
            files_named |= bool(named)
            file_ids |= {number for f in named if (number := parse_id(f)) is not None}  # an id no file has names none
        metadata = [
            (c.field, c.op, c.value)
            for c in filters.parse(given.get("metadata_filter"), fields=None, field="metadata_filter")
        ]
        fusion = _fusion(
            (config.get("hybrid_search") or {}).get("alpha", (query.get("ranking") or {}).get("alpha"))
        )  # the latter: deprecated
        try:
            hits = search_and_rerank(
                app_name=self.app_name,
                user_id=self.caller.only_user,
                corpus_ids=corpus_ids,
                query=text,
                top_k=top_k,
                vector_distance_threshold=_distance_threshold(given, store),
                document_ids=sorted(file_ids) if files_named else None,
                metadata=metadata,
                fusion=fusion,
                rerank=True if llm_ranker is not None else None,
                rerank_model=wire.string((llm_ranker or {}).get("model_name"), "llm_ranker.model_name"),
            ).hits
        except InvalidMetadata as error:
            raise errors.InvalidArgument(f"metadata_filter: {error}") from error
        except RerankRefused as error:
            raise errors.InvalidArgument(f"ranking.llm_ranker: {error}") from error
        except services.EmbeddedWithAnother as error:
            raise errors.FailedPrecondition(str(error)) from error
        return [
            {
                "sourceUri": hit.source_uri,
                "sourceDisplayName": hit.document_name,
                "text": hit.text,
                "score": _relevance(hit, fusion),
                "distance": hit.distance,
                "chunk": {"text": hit.text, "chunkId": str(hit.chunk_id), "fileId": str(hit.document_id)},
            }
            for hit in hits
        ]


def _offset(header: str | None) -> int:
    """``X-Goog-Upload-Offset`` as a number: ASCII digits only (``²`` passes ``str.isdigit`` yet ``int`` refuses it),
    else a 400 saying so rather than a 500."""
    if header is None or header == "":
        return 0
    if not (header.isascii() and header.isdigit() and len(header) <= 18):
        raise errors.InvalidArgument(f"X-Goog-Upload-Offset is a byte count (ASCII digits), not {header[:40]!r}.")
    return int(header)


def _distance_threshold(given: dict[str, Any], store: dict[str, Any]) -> float | None:
    """The cosine distance past which chunks are left out: Vertex's distance threshold, or one less its similarity's."""
    distance = given.get("vector_distance_threshold", store.get("vector_distance_threshold"))
    similarity = given.get("vector_similarity_threshold")
    if distance is not None and similarity is not None:
        raise errors.InvalidArgument("Give vector_distance_threshold or vector_similarity_threshold, not both.")
    try:
        threshold = (
            float(distance) if distance is not None else 1 - float(similarity) if similarity is not None else None
        )
    except (TypeError, ValueError):
        raise errors.InvalidArgument("A vector threshold is a number.") from None
    if threshold is not None and not math.isfinite(threshold):  # "NaN" or "Infinity" as a string
        raise errors.InvalidArgument("A vector threshold is a finite number.")
    return threshold


def _relevance(hit: Hit, fusion: Fusion) -> float:
    """A context's ``score``: the relevance it was ordered by, larger first, above 0 and at most 1 (issue 43 item 9).

    Vertex's ``score`` is "the distance or the similarity … depending on the metric"; here the order is the fusion's
    (or the reranker's), so the score says that order, and ``distance`` (the cosine distance that
    ``vector_distance_threshold`` bounds, ``1 - vector_similarity_threshold`` too) says the meaning. The fusion of
    scores sums standardised scores, 0 for an average candidate and for a lone one, below 0 for the weaker half:
    the logistic of it keeps its order in (0, 1), 0.5 for an average candidate. Rank fusion (a sum of
    1/(k+rank)) and a reranker's place (1, 1/2, 1/3…) are in (0, 1] already."""
    if hit.rerank in (None, FAILED) and fusion.method == "scores":
        return 1 / (1 + math.exp(-hit.score))
    return hit.score


def _fusion(alpha: Any) -> Fusion:
    """Vertex's ``hybrid_search.alpha`` (1: by meaning only, 0: by words only) as the weights of the two lists'
    standardised scores, Vertex's meaning of it; unset, the default fusion (``knowledge_app.search.FUSION``)."""
    if alpha is None:
        return FUSION
    if isinstance(alpha, bool) or not isinstance(alpha, (int, float)) or not 0 <= alpha <= 1:
        raise errors.InvalidArgument("hybrid_search.alpha is a number from 0 to 1.")
    return Fusion(vector=float(alpha), keyword=1 - float(alpha), method=FUSION.method)


class RetrieveContextsAsTheProtoSpellsItView(RetrieveContextsView):
    def post(self, request: Request, **kwargs: Any) -> Response:
        """The same retrieval at …/locations/{l}:retrieveContexts, the path of the proto's HTTP rule."""
        return super().post(request, **kwargs)
