"""How a file is to be cut, as uploads and imports ask: ``chunking(config) -> {"chunk_size": …, "chunk_overlap": …}``.

``uploadRagFileConfig`` and ``importRagFilesConfig`` carry the same chunking fields, spelled
two ways over the versions of the SDKs; both are read here, once.
"""

from __future__ import annotations

from typing import Any, TypedDict

from cognizes.access import limits
from vertex_app import wire

_FIXED_LENGTH: wire.Spec = {"chunk_size": None, "chunk_overlap": None}
# The second: RagFileChunkingConfig of old.
_CHUNKING: wire.Spec = {"fixed_length_chunking": _FIXED_LENGTH, **_FIXED_LENGTH}
_TRANSFORMATION: wire.Spec = {"rag_file_chunking_config": _CHUNKING}
FILE_CONFIG: wire.Spec = {
    "rag_file_chunking_config": _CHUNKING,
    "rag_file_transformation_config": _TRANSFORMATION,
    "rag_file_parsing_config": None,
    "rag_file_metadata_config": None,  # the last: "Deprecated: Not in use"
    "max_embedding_requests_per_min": None,
}


class Chunking(TypedDict, total=False):
    """The chunking an upload or import asks for, as ``do_add_document``'s keywords."""

    chunk_size: int
    chunk_overlap: int


def chunking(config: dict[str, Any] | None) -> Chunking:
    """The ``chunk_size`` / ``chunk_overlap`` an upload's or import's config asks for (none: the corpus's).

    ``config`` is an ``uploadRagFileConfig`` or ``importRagFilesConfig`` read with ``FILE_CONFIG``: the chunking is
    under ``rag_file_transformation_config.rag_file_chunking_config.fixed_length_chunking`` (agentplatform) or,
    deprecated, ``rag_file_chunking_config`` itself (older SDKs).
    """
    config = config or {}
    given = (
        (config.get("rag_file_transformation_config") or {}).get("rag_file_chunking_config")
        or config.get("rag_file_chunking_config")
        or {}
    )
    sizes = given.get("fixed_length_chunking") or given
    asked = Chunking()
    if sizes.get("chunk_size"):  # proto3: 0 is unset
        asked["chunk_size"] = wire.integer(
            sizes["chunk_size"], "chunk_size", default=0, low=0, high=limits.MAX_CHUNK_SIZE
        )
    if sizes.get("chunk_overlap"):
        asked["chunk_overlap"] = wire.integer(
            sizes["chunk_overlap"], "chunk_overlap", default=0, low=0, high=limits.MAX_CHUNK_SIZE
        )
    return asked
