"""Knowledge: an app's corpora of documents, cut into chunks that agents search.

A document keeps the bytes it was uploaded with, so it can be parsed and chunked
again (a new chunking, a new embedder); its chunks are replaced all at once when
it is (re)indexed, so a search sees its old chunks or its new ones, never half.
Every row carries its app: the one scope every query filters by
(``knowledge_app.services``); a document uploaded with a key of one user carries that
user too, and other users' keys never see it (issue 41 H).
"""

from __future__ import annotations

from django.contrib.postgres.indexes import GinIndex
from django.contrib.postgres.search import SearchVectorField
from django.db import models
from django.db.models.expressions import RawSQL
from django.db.models.functions import MD5
from pgvector.django import HnswIndex, VectorField

from cognizes.access.models import MAX_KEY_LENGTH
from cognizes.infra.embedders import DIMENSIONS
from cognizes.infra.text import TEXT_SEARCH_CONFIG


class Corpus(models.Model):
    """A searchable collection of an app's documents, with how they are cut (Vertex: a RagCorpus)."""

    app_name = models.CharField(max_length=MAX_KEY_LENGTH)
    display_name = models.CharField(max_length=512)
    description = models.TextField(blank=True)
    chunk_size = models.PositiveIntegerField(default=1024, help_text="Tokens per chunk at most (Vertex's chunk_size).")
    chunk_overlap = models.PositiveIntegerField(
        default=200, help_text="Tokens a chunk repeats from the one before it (Vertex's chunk_overlap)."
    )
    embedder = models.CharField(
        max_length=128,
        blank=True,
        default="",
        help_text="The model its chunks were embedded with (Embedder.id): searches and new documents need the same "
        "one (`cognizes reembed_corpus` moves it to another). Empty: none yet, the first indexed document sets it.",
    )
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        db_table = "knowledge_corpora"
        verbose_name_plural = "corpora"
        indexes = [models.Index(fields=["app_name", "id"], name="corpora_by_app")]

    def __str__(self) -> str:
        return f"{self.app_name}/{self.display_name}"


class DocumentStatus(models.TextChoices):
    PENDING = "pending", "pending"
    RUNNING = "running", "running"
    ACTIVE = "active", "active"
    FAILED = "failed", "failed"


class DocumentQuerySet(models.QuerySet["Document"]):
    def seen_by(self, user_id: str | None) -> DocumentQuerySet:
        """The documents a caller sees: the app's and, for a key of one user, that user's (``user_id`` None: all).

        The one statement of the rule in the ORM; ``knowledge_app.search._OWNERS`` is its twin in the search SQL.
        """
        return self if user_id is None else self.filter(user_id__in=["", user_id])


class Document(models.Model):
    """One file of a corpus (Vertex: a RagFile), indexed by a worker: pending → running → active, or failed."""

    corpus = models.ForeignKey(Corpus, on_delete=models.CASCADE, related_name="documents")
    app_name = models.CharField(max_length=MAX_KEY_LENGTH)
    user_id = models.CharField(
        max_length=MAX_KEY_LENGTH,
        blank=True,
        default="",
        help_text="The user it belongs to (uploaded with a key of that user): only that user's keys and the app's "
        "see it. Empty: the app's, seen by all its keys.",
    )
    display_name = models.CharField(max_length=512)
    description = models.TextField(blank=True)
    source_uri = models.CharField(max_length=2048, blank=True, help_text="Where it came from (a file name, a URL).")
    source_path = models.TextField(
        blank=True,
        default="",
        help_text="For a document an import added: the file's path in the app's import folder, whichever URI named "
        "it. Importing that path again replaces this document's content if the file changed and skips it if not. "
        "Empty for an upload.",
    )
    mime_type = models.CharField(max_length=255, blank=True)
    size_bytes = models.BigIntegerField(default=0)
    content_hash = models.CharField(
        max_length=64,
        help_text="SHA-256 of the bytes: the same bytes uploaded again are the same document, "
        "and a file imported again unchanged is skipped.",
    )
    content = models.BinaryField(help_text="The bytes as uploaded, kept to index again.")
    metadata = models.JSONField(
        default=dict,
        blank=True,
        help_text='What the uploader says of it ({"team": "sales", "year": 2025}): '
        "searches may keep to the documents whose metadata match.",
    )
    chunk_size = models.PositiveIntegerField(
        null=True,
        blank=True,
        help_text="Tokens per chunk for this document (Vertex's uploadRagFileConfig); empty: the corpus's.",
    )
    chunk_overlap = models.PositiveIntegerField(null=True, blank=True, help_text="Empty: the corpus's.")
    status = models.CharField(max_length=16, choices=DocumentStatus.choices, default=DocumentStatus.PENDING)
    error = models.TextField(blank=True, help_text="Why it failed: what a person can do about it.")
    chunk_count = models.PositiveIntegerField(default=0)
    progress = models.PositiveSmallIntegerField(
        default=0, help_text="While running, the percent of its chunks embedded (the slow part); 100 once active."
    )
    pages = models.PositiveIntegerField(
        null=True, blank=True, help_text="Pages parsed (formats with pages: PDF); empty until parsed, or for others."
    )
    chunks_total = models.PositiveIntegerField(default=0, help_text="Chunks to embed: known once it is parsed.")
    chunks_embedded = models.PositiveIntegerField(
        default=0, help_text="Chunks embedded so far (kept through a worker's restart: not embedded again)."
    )
    served_at = models.DateTimeField(
        null=True,
        blank=True,
        help_text="When a worker last took it: a long document paused for another's turn goes after fresh ones.",
    )
    attempts = models.PositiveIntegerField(default=0)
    lease_until = models.DateTimeField(
        null=True,
        blank=True,
        help_text="A running document not done by then is presumed lost (worker killed) and run again.",
    )
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)
    indexed_at = models.DateTimeField(null=True, blank=True)

    objects = DocumentQuerySet.as_manager()

    class Meta:
        db_table = "knowledge_documents"
        constraints = [
            # An upload is known by its bytes: the same bytes again are the document already there.
            models.UniqueConstraint(
                fields=["corpus", "user_id", "content_hash"],
                condition=models.Q(source_path=""),
                name="documents_unique_upload_per_owner",
            ),
            # An imported file is known by its path: one document per path, whatever its bytes (a copy of a file
            # at another path is a document of its own, so deleting either file leaves the other's). Its MD5, as
            # a path may be longer than a B-tree entry (~2.7 kB; 4 kB paths, 3 bytes a character in CJK).
            models.UniqueConstraint(
                models.F("corpus"),
                models.F("user_id"),
                MD5("source_path"),
                condition=~models.Q(source_path=""),
                name="documents_unique_source_per_owner",
            ),
        ]
        indexes = [
            models.Index(fields=["app_name", "corpus", "id"], name="documents_by_corpus"),
            models.Index(fields=["status", "lease_until"], name="documents_by_status"),
        ]

    def __str__(self) -> str:
        return self.display_name

    @property
    def state(self) -> str:
        """Its status as a person reads it: one being indexed says how far it has got (a long PDF takes minutes)."""
        if self.status not in (DocumentStatus.RUNNING, DocumentStatus.PENDING) or not self.chunks_total:
            return "parsing" if self.status == DocumentStatus.RUNNING else str(self.status)
        pages = f"{self.pages} pages parsed, " if self.pages else ""
        done = f"{pages}{self.chunks_embedded} of {self.chunks_total} chunks embedded"
        return f"running: {done}" if self.status == DocumentStatus.RUNNING else f"pending, its turn to come: {done}"

    @property
    def chunking(self) -> tuple[int, int]:
        """``(size, overlap)`` this document is cut with: its own if it was uploaded with one, else its corpus's."""
        if self.chunk_size is not None:
            return self.chunk_size, self.chunk_overlap or 0
        return self.corpus.chunk_size, self.corpus.chunk_overlap


NOT_BEGUN = {"pages": None, "chunks_total": 0, "chunks_embedded": 0, "progress": 0, "served_at": None, "attempts": 0}
"""A document's progress before a worker has begun on it (a new upload, or one to index again: no attempt used up;
a late run of an earlier claim is told from the next by its ``served_at``, ``knowledge_app.leases``)."""


class Chunk(models.Model):
    """A piece of a document as search sees it: its text, the headings above it and where it lies."""

    document = models.ForeignKey(Document, on_delete=models.CASCADE, related_name="chunks")
    corpus = models.ForeignKey(Corpus, on_delete=models.CASCADE, related_name="+")
    app_name = models.CharField(max_length=MAX_KEY_LENGTH)
    ordinal = models.PositiveIntegerField(help_text="Its place among the document's chunks, from 0.")
    text = models.TextField()
    heading = models.TextField(blank=True, help_text="The headings it is under, outermost first, joined by ' › '.")
    start = models.PositiveIntegerField(help_text="Character offset of its text in the document's text.")
    end = models.PositiveIntegerField()
    search_text = models.TextField(help_text="Heading and text as the keyword search reads them.")
    digest = models.CharField(
        max_length=64,
        blank=True,
        default="",
        help_text="What its vector was made from (``EmbeddedChunk.digest``): a new version of its document keeps "
        "the vectors of the chunks it did not change instead of embedding them again.",
    )
    search_vector = models.GeneratedField(
        expression=RawSQL(f"to_tsvector('{TEXT_SEARCH_CONFIG}'::regconfig, search_text)", ()),
        output_field=SearchVectorField(),
        db_persist=True,
    )
    embedding = VectorField(dimensions=DIMENSIONS)

    class Meta:
        db_table = "knowledge_chunks"
        ordering = ["document", "ordinal"]
        indexes = [
            models.Index(fields=["document", "ordinal"], name="chunks_by_document"),
            models.Index(fields=["app_name", "corpus"], name="chunks_by_corpus"),
            GinIndex(fields=["search_vector"], name="chunks_search_vector"),
            HnswIndex(
                name="chunks_embedding_hnsw",
                fields=["embedding"],
                m=32,
                ef_construction=128,
                opclasses=["vector_cosine_ops"],
            ),
        ]

    def __str__(self) -> str:
        return self.text[:80]


class EmbeddedChunk(models.Model):
    """A chunk embedded by a run not yet finished: what a long document's later run (after a pause for another
    document's turn, or a worker's restart) keeps instead of embedding again (issue 44).

    ``digest`` names the embedder and the text the vector was made from: a chunk whose text or embedder changed
    since is embedded again. The document's chunks are replaced with these, all at once, when every one is there.
    """

    document = models.ForeignKey(Document, on_delete=models.CASCADE, related_name="+")
    ordinal = models.PositiveIntegerField()
    digest = models.CharField(max_length=64, help_text="SHA-256 of the embedder's id and the text embedded.")
    text = models.TextField()
    heading = models.TextField(blank=True)
    start = models.PositiveIntegerField()
    end = models.PositiveIntegerField()
    search_text = models.TextField()
    embedding = VectorField(dimensions=DIMENSIONS)

    class Meta:
        db_table = "knowledge_embedded_chunks"
        constraints = [models.UniqueConstraint(fields=["document", "ordinal"], name="embedded_chunks_once")]

    def __str__(self) -> str:
        return f"{self.document_id}#{self.ordinal}"


class ImportStatus(models.TextChoices):
    PENDING = "pending", "pending"
    RUNNING = "running", "running"
    ADDED = "added", "added"
    FAILED = "failed", "failed"


class Import(models.Model):
    """Files brought into a corpus from the server's import root by a worker (Vertex: ragFiles:import).

    pending → running (a worker adds the files) → added, or failed when it could not run.
    Added is not yet done: the import is done once every document it added is indexed
    (``knowledge_app.imports.get_progress``), as Vertex's import operation is.
    """

    corpus = models.ForeignKey(Corpus, on_delete=models.CASCADE, related_name="imports")
    app_name = models.CharField(max_length=MAX_KEY_LENGTH)
    uris = models.JSONField(default=list, help_text="The gs:// and file:// URIs asked for, as given.")
    chunk_size = models.PositiveIntegerField(null=True, blank=True, help_text="Asked for; else the corpus's.")
    chunk_overlap = models.PositiveIntegerField(null=True, blank=True, help_text="Asked for; else the corpus's.")
    delete_missing = models.BooleanField(
        default=False,
        help_text="Delete the documents of files no longer under its URIs (imported before from there, gone since).",
    )
    status = models.CharField(max_length=16, choices=ImportStatus.choices, default=ImportStatus.PENDING)
    files_found = models.PositiveIntegerField(default=0, help_text="Files under the URIs (known once running).")
    added_count = models.PositiveIntegerField(default=0, help_text="Files that became new documents.")
    replaced_count = models.PositiveIntegerField(
        default=0,
        help_text="Files imported before that changed since (or asked for another chunking): their documents, the "
        "same ones, indexed again.",
    )
    skipped_count = models.PositiveIntegerField(
        default=0, help_text="Files imported before and unchanged since (the same bytes, the same chunking)."
    )
    deleted_count = models.PositiveIntegerField(
        default=0, help_text="Documents deleted because their files are gone (asked for with delete_missing)."
    )
    refused_count = models.PositiveIntegerField(
        default=0, help_text="Files that could not be added (unreadable, empty, too large, outside the root)."
    )
    failures = models.JSONField(default=list, blank=True, help_text="The first refused files, with why.")
    documents = models.ManyToManyField(
        Document,
        related_name="imports",
        blank=True,
        db_table="knowledge_import_documents",
        help_text="The documents this import added or replaced: it is done when all are indexed (or failed).",
    )
    error = models.TextField(blank=True, help_text="Why the import could not run at all.")
    attempts = models.PositiveIntegerField(default=0)
    lease_until = models.DateTimeField(
        null=True,
        blank=True,
        help_text="A running import not renewed by then is presumed lost (worker killed) and run again.",
    )
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)
    finished_at = models.DateTimeField(null=True, blank=True, help_text="When its files were all added (or it failed).")

    class Meta:
        db_table = "knowledge_imports"
        indexes = [
            models.Index(fields=["app_name", "corpus", "id"], name="imports_by_corpus"),
            models.Index(fields=["status", "lease_until"], name="imports_by_status"),
        ]

    def __str__(self) -> str:
        return f"import {self.pk} into {self.corpus_id}"


class IndexingTurn(models.Model):
    """When a worker last began indexing one of an app's documents: whose turn is next (``knowledge_app.queue``).

    Workers take the pending document of the app with the fewest documents running, and among those the app
    served longest ago, so one app's many uploads never keep another app's document waiting behind them.
    """

    app_name = models.CharField(max_length=MAX_KEY_LENGTH, unique=True)
    served_at = models.DateTimeField(help_text="When a worker last claimed one of this app's documents.")

    class Meta:
        db_table = "knowledge_indexing_turns"

    def __str__(self) -> str:
        return f"{self.app_name} served {self.served_at:%Y-%m-%d %H:%M:%S}"
