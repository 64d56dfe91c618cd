"""``ragFiles:import`` on the wire: the ``ImportRagFilesConfig`` read, the import's operation written.

agentplatform 2.6 sends ``{"importRagFilesConfig": {"gcsSource": {"uris": […]},
"ragFileTransformationConfig": {"rag_file_chunking_config": {"fixed_length_chunking": {…}}}, …}}``
(``../shared/vertex-rag-wire.md`` §1). The URIs are read from the app's folder under the server's
import root (``knowledge_app.import_sources``: ``gs://`` as a directory per bucket, and ``file://``); the
other sources of the proto's ``import_source`` oneof (Drive, Slack, Jira, SharePoint) are
services a self-hosted server cannot reach, refused saying what is taken instead. The oneof
has no inline source: bytes in the request are ``ragFiles:upload``'s.

Taken but without effect here: the parsing config (Cognizes' own parsers read every file),
the embedding rate limits (the embedder is local), ``rebuildAnnIndex`` (the HNSW index is
kept up to date) and the result and partial-failure sinks (Cloud Storage, BigQuery), which a
self-hosted server cannot write: a file that failed says why on its RagFile.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from knowledge_app.imports import Progress
from knowledge_app.models import Import
from vertex_app import names, wire
from vertex_app.base import operation
from vertex_app.errors import FailedPrecondition, InvalidArgument
from vertex_app.rag_chunking import FILE_CONFIG, chunking

RESPONSE = "ImportRagFilesResponse"
METADATA = "ImportRagFilesOperationMetadata"
FAILED_PRECONDITION = 9
"""google.rpc.Code of an import that could not run: its sources (or the server's import root) were not as
the request found them, or its worker was lost too often; the message says which."""

_CONFIG: wire.Spec = {
    "gcs_source": {"uris": None},
    "google_drive_source": None,
    "slack_source": None,
    "jira_source": None,
    "share_point_sources": None,
    "partial_failure_gcs_sink": None,
    "partial_failure_bigquery_sink": None,
    "import_result_gcs_sink": None,
    "import_result_bigquery_sink": None,
    **FILE_CONFIG,
    "global_max_embedding_requests_per_min": None,
    "rebuild_ann_index": None,
}
_REQUEST: wire.Spec = {"parent": None, "import_rag_files_config": _CONFIG}
_UNREACHABLE = {
    "google_drive_source": "Google Drive",
    "slack_source": "Slack",
    "jira_source": "Jira",
    "share_point_sources": "SharePoint",
}


@dataclass(frozen=True)
class ImportRequest:
    uris: list[str]
    chunk_size: int | None
    chunk_overlap: int | None


def import_request(data: Any) -> ImportRequest:
    """What an ``ImportRagFilesRequest`` asks for; 400, or FAILED_PRECONDITION for a source out of reach."""
    config = wire.message(data, _REQUEST).get("import_rag_files_config")
    if not config:
        raise InvalidArgument("'importRagFilesConfig' is required.")
    for field, service in _UNREACHABLE.items():
        if config.get(field):
            raise FailedPrecondition(
                f"Cognizes cannot reach {service}: copy the files into a directory in the app's import folder "
                "and import them as gcsSource URIs (gs://BUCKET/path for ROOT/<app>/BUCKET/path, or file:///path), "
                "or upload each one (ragFiles:upload)."
            )
    uris = (config.get("gcs_source") or {}).get("uris")
    if not uris:
        raise InvalidArgument("Name the files to import: importRagFilesConfig.gcsSource.uris.")
    if not isinstance(uris, list) or not all(isinstance(uri, str) for uri in uris):
        raise InvalidArgument("'gcsSource.uris' must be a list of strings.")
    sizes = chunking(config)
    return ImportRequest(uris=uris, chunk_size=sizes.get("chunk_size"), chunk_overlap=sizes.get("chunk_overlap"))


def import_operation(name: str, record: Import, progress: Progress) -> dict[str, Any]:
    """The import's operation: its metadata, then the counts once done, or the error if it could not run."""
    metadata = {
        "@type": names.type_url(METADATA),
        "genericMetadata": {
            "createTime": wire.rfc3339(record.created_at),
            "updateTime": wire.rfc3339(progress.updated_at),
        },
        "ragCorpusId": str(record.corpus_id),
        "progressPercentage": progress.percent,
    }
    if progress.error:
        return operation(name, metadata=metadata, error={"code": FAILED_PRECONDITION, "message": progress.error})
    if not progress.done:
        return operation(name, done=False, metadata=metadata)
    counts = {
        "importedRagFilesCount": str(progress.imported),
        "failedRagFilesCount": str(progress.failed),
        "skippedRagFilesCount": str(progress.skipped),
    }  # int64: proto3 JSON writes them quoted
    return operation(name, counts, kind=RESPONSE, metadata=metadata)
