"""HTTP: imports of files from the app's import folder into a corpus, under ``…/corpora/{id}/imports/``.

``POST`` starts one (202, a worker runs it) and ``GET …/imports/{id}/`` follows it: the files found, what became of
them (added, replaced, skipped, failed), the documents of files gone deleted if ``delete_missing`` was asked, and
``done`` once every document it added or replaced is indexed. It is what Vertex's ``ragFiles:import`` does
(``vertex_app.rag_import``), with the one thing Vertex has no field for: deleting what the folder no longer has.
Starting an import takes a key of the whole app, as every change to a corpus's shared documents does.
"""

from __future__ import annotations

from typing import Any

from django.http import Http404
from drf_spectacular.utils import OpenApiExample, extend_schema
from rest_framework import exceptions, serializers, status
from rest_framework.request import Request
from rest_framework.response import Response

from cognizes.access.api import Conflict, ScopedView, valid
from cognizes.access.key_kinds import check_whole_app
from knowledge_app import imports, services
from knowledge_app.import_sources import ImportsNotConfigured, SourceNotFound
from knowledge_app.models import Corpus, Import


class ImportRequestSerializer(serializers.Serializer):
    uris = serializers.ListField(
        child=serializers.CharField(trim_whitespace=False),
        allow_empty=False,
        max_length=1000,
        help_text="Files and directories of the app's import folder: gs://BUCKET/path (ROOT/<app>/BUCKET/path) "
        "or file:///absolute/path in that folder.",
    )
    chunk_size = serializers.IntegerField(required=False, min_value=1, help_text="Else the corpus's.")
    chunk_overlap = serializers.IntegerField(required=False, min_value=0)
    delete_missing = serializers.BooleanField(
        default=False,
        help_text="Also delete the documents imported before from under these URIs whose files are gone. "
        "Off by default, as Vertex's import deletes nothing.",
    )


class ImportSerializer(serializers.Serializer):
    id = serializers.IntegerField()
    corpus_id = serializers.IntegerField()
    uris = serializers.ListField(child=serializers.CharField())
    chunk_size = serializers.IntegerField(allow_null=True)
    chunk_overlap = serializers.IntegerField(allow_null=True)
    delete_missing = serializers.BooleanField()
    status = serializers.CharField(help_text="pending, running (its files being added), added, or failed.")
    done = serializers.BooleanField(help_text="Its files added and every document it added or replaced indexed.")
    percent = serializers.IntegerField()
    files_found = serializers.IntegerField()
    added = serializers.IntegerField(help_text="Files that became new documents.")
    replaced = serializers.IntegerField(
        help_text="Files imported before that changed: the same documents (same ids), their content replaced."
    )
    skipped = serializers.IntegerField(help_text="Files imported before and unchanged.")
    failed = serializers.IntegerField(help_text="Files that could not be stored, and documents that failed indexing.")
    deleted = serializers.IntegerField(help_text="Documents of files gone, deleted (delete_missing).")
    indexed = serializers.IntegerField(help_text="Documents it added or replaced that are indexed (Vertex's imported).")
    failures = serializers.ListField(child=serializers.CharField(), help_text="The first files refused, with why.")
    error = serializers.CharField(allow_blank=True, help_text="Why it could not run at all.")
    created_at = serializers.DateTimeField()
    finished_at = serializers.DateTimeField(allow_null=True)


def import_json(record: Import) -> dict[str, Any]:
    progress = imports.get_progress(record)
    return ImportSerializer(
        {
            "id": record.id,
            "corpus_id": record.corpus_id,
            "uris": record.uris,
            "chunk_size": record.chunk_size,
            "chunk_overlap": record.chunk_overlap,
            "delete_missing": record.delete_missing,
            "status": record.status,
            "done": progress.done,
            "percent": progress.percent,
            "files_found": record.files_found,
            "added": progress.added,
            "replaced": progress.replaced,
            "skipped": progress.skipped,
            "failed": progress.failed,
            "deleted": progress.deleted,
            "indexed": progress.imported,
            "failures": record.failures,
            "error": progress.error,
            "created_at": record.created_at,
            "finished_at": record.finished_at,
        }
    ).data


def _corpus(view: ScopedView, corpus_id: int) -> Corpus:
    corpus = services.get_corpus(view.scope.app_name, corpus_id)
    if corpus is None:
        raise Http404
    return corpus


class ImportsView(ScopedView):
    @extend_schema(
        operation_id="import_documents",
        request=ImportRequestSerializer,
        responses={202: ImportSerializer},
        examples=[
            OpenApiExample(
                "A folder kept in sync",
                request_only=True,
                value={"uris": ["gs://handbooks/policies"], "delete_missing": True},
            )
        ],
    )
    def post(self, request: Request, app_name: str, corpus_id: int) -> Response:
        """Import files of the app's import folder (202: a worker runs it). A path imported before is skipped if
        unchanged, its document's content replaced if changed; with ``delete_missing``, documents of files gone
        from under the URIs are deleted."""
        check_whole_app(self.scope.only_user, app_name, "import files into the app's corpora")
        corpus = _corpus(self, corpus_id)
        data = valid(ImportRequestSerializer, request.data)
        try:
            record = imports.do_create_import(corpus, **data)
        except ImportsNotConfigured as off:
            raise Conflict(str(off)) from off
        except SourceNotFound as missing:  # another app's path too: 404 alike, so nothing of it is learnt
            raise exceptions.NotFound(str(missing)) from missing
        except services.KnowledgeError as error:
            raise exceptions.ValidationError({"uris": [str(error)]}) from error
        return Response(import_json(record), status=status.HTTP_202_ACCEPTED)


class ImportView(ScopedView):
    @extend_schema(operation_id="get_import", responses=ImportSerializer)
    def get(self, request: Request, app_name: str, corpus_id: int, import_id: int) -> Response:
        """One import: its counts so far, and whether it is done."""
        record = imports.get_import(app_name, _corpus(self, corpus_id).id, import_id)
        if record is None:
            raise Http404
        return Response(import_json(record))
