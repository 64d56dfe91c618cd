"""How a file is to be cut, as uploads and imports ask: ``chunking(config) -> {"chunk_size": …, "chunk_overlap": …}``.

``uploadRagFileConfig`` and ``importRagFilesConfig`` carry the same chunking fields, spelled
two ways over the versions of the SDKs; both are read here, once.
"""

from __future__ import annotations

from typing import Any

from cognizes.access import limits
from vertex_app import wire

_FIXED_LENGTH = {"chunk_size": None, "chunk_overlap": None}
_CHUNKING = {"fixed_length_chunking": _FIXED_LENGTH, **_FIXED_LENGTH}  # the second: RagFileChunkingConfig of old
_TRANSFORMATION = {"rag_file_chunking_config": _CHUNKING}
FILE_CONFIG = {
    "rag_file_chunking_config": _CHUNKING,
    "rag_file_transformation_config": _TRANSFORMATION,
    "rag_file_parsing_config": None,
    "rag_file_metadata_config": None,  # the last: "Deprecated: Not in use"
    "max_embedding_requests_per_min": None,
}


def chunking(config: dict[str, Any] | None) -> dict[str, int]:
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
    return {
        name: wire.integer(sizes[name], name, default=0, low=0, high=limits.MAX_CHUNK_SIZE)
        for name in ("chunk_size", "chunk_overlap")
        if sizes.get(name)
    }  # proto3: 0 is unset
