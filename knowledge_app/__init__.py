"""Knowledge: documents that agents search (Cognizes' counterpart of Vertex AI RAG Engine's corpora)."""
