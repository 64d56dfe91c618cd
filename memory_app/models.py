"""Long-term memories of a user of an app, their revisions, and consolidation jobs.

A memory belongs to one scope (app_name, user_id). It holds from ``valid_from`` until
``valid_until`` (set when a newer memory supersedes it: closed, never deleted), so
search can ask what held at any moment. Search reads ``embedding``
(pgvector, HNSW cosine index) and ``search_vector`` (full text over
``search_text``, which holds the text with Chinese segmented into words, since
PostgreSQL's parser does not split Chinese). Nothing is ever updated without a
``MemoryRevision`` row saying what changed and why; writes go through
``memory_app.services``.
"""

from __future__ import annotations

import uuid
from datetime import datetime

from django.contrib.postgres.fields import ArrayField
from django.contrib.postgres.indexes import GinIndex
from django.contrib.postgres.search import SearchVectorField
from django.db import models
from django.db.models.expressions import RawSQL
from django.db.models.functions import Now
from django.utils import timezone
from pgvector.django import HnswIndex, VectorField

from cognizes.access.models import MAX_KEY_LENGTH
from cognizes.infra.embedders import DIMENSIONS
from cognizes.infra.text import TEXT_SEARCH_CONFIG
from memory_app.example_models import ExampleStore, StoredExample  # noqa: F401  (the Example Store's tables)

MAX_TOPIC_LENGTH = 64
EMBEDDING_DIMENSIONS = DIMENSIONS


class Kind(models.TextChoices):
    """What a memory is about (the topics of Vertex AI Memory Bank, plus plain facts)."""

    PERSONAL_INFO = "personal_info", "personal information"
    PREFERENCE = "preference", "preference"
    KEY_DETAIL = "key_detail", "key conversation detail"
    INSTRUCTION = "instruction", "explicit instruction"
    FACT = "fact", "fact"


class Status(models.TextChoices):
    ACTIVE = "active", "active"
    SUPERSEDED = "superseded", "superseded"
    FORGOTTEN = "forgotten", "forgotten"


class MemoryType(models.TextChoices):
    """Vertex AI Memory Bank's memory types: a statement, or one field of a structured profile.

    Profile fields are rows like any memory (revised, scoped, expiring) but only profile reads
    and requests naming the type return them: search and consolidation see natural-language ones.
    """

    NATURAL_LANGUAGE = "natural_language", "natural language"
    STRUCTURED_PROFILE = "structured_profile", "structured profile field"


class MetadataMerge(models.TextChoices):
    """What a merge does with the metadata of a memory said again (Vertex Memory Bank's strategies)."""

    KEEP_ALL = "keep_all", "keep all: a key given different values keeps them all, as a list"
    MERGE = "merge", "merge: new keys are added, a key given again takes the new value"
    OVERWRITE = "overwrite", "overwrite: the new metadata replaces the old"
    REQUIRE_EXACT_MATCH = "require_exact_match", "require exact match: merge only memories with equal metadata"


class MemoryQuerySet(models.QuerySet):
    def for_scope(self, app_name: str, user_id: str) -> MemoryQuerySet:
        return self.filter(app_name=app_name, user_id=user_id)

    def active(self) -> MemoryQuerySet:
        return self.filter(status=Status.ACTIVE)

    def statements(self) -> MemoryQuerySet:
        """Natural-language memories only: what search, extraction and deduplication compare (not profile fields)."""
        return self.filter(memory_type=MemoryType.NATURAL_LANGUAGE)

    def current(self) -> MemoryQuerySet:
        """Active and not past their expiry: what search finds (the hourly task forgets expired ones later)."""
        return self.active().filter(models.Q(expires_at__isnull=True) | models.Q(expires_at__gt=Now()))

    def held_at(self, moment: datetime) -> MemoryQuerySet:
        """What held at ``moment``: search's ``as_of`` scope (memory_app.search._scope), as a queryset.

        The same rule twice, SQL there and ORM here; tests/memory/test_as_of.py holds them to the same
        memories at every boundary.
        """
        return self.filter(
            models.Q(valid_until__isnull=True) | models.Q(valid_until__gt=moment),
            models.Q(expires_at__isnull=True) | models.Q(expires_at__gt=moment),
            status__in=[Status.ACTIVE, Status.SUPERSEDED],
            valid_from__lte=moment,
        )


class Memory(models.Model):
    id = models.UUIDField(primary_key=True, default=uuid.uuid4, editable=False)
    app_name = models.CharField(max_length=MAX_KEY_LENGTH)
    user_id = models.CharField("user id", max_length=MAX_KEY_LENGTH)
    text = models.TextField(help_text="What is remembered, one self-contained statement.")
    author = models.CharField(max_length=256, blank=True, help_text="Who said it: 'user' or an agent's name.")
    kind = models.CharField(max_length=32, choices=Kind.choices, default=Kind.FACT, help_text="Topic of the memory.")
    memory_type = models.CharField(
        max_length=32,
        choices=MemoryType.choices,
        default=MemoryType.NATURAL_LANGUAGE,
        db_default=MemoryType.NATURAL_LANGUAGE,
        help_text="A natural-language statement, or one field of a structured profile (memory_app.profiles).",
    )
    structured_content = models.JSONField(
        null=True,
        blank=True,
        help_text='A profile field\'s value: {"schema_id": "user-profile", "data": {"city": "Lyon"}}; empty for '
        "statements.",
    )
    topic = models.CharField(
        max_length=MAX_TOPIC_LENGTH, blank=True, help_text="A custom topic of the app's memory bank config, if any."
    )
    importance = models.FloatField(default=0.5, help_text="0–1: how much it matters; slows decay.")
    strength = models.FloatField(default=1.0, help_text="1 when fresh; decays with time, rises with use.")
    access_count = models.PositiveIntegerField(default=0, help_text="How often search returned it.")
    last_accessed_at = models.DateTimeField(null=True, blank=True)
    source_session_id = models.CharField(
        max_length=MAX_KEY_LENGTH, blank=True, help_text="The session it came from first."
    )
    source_session_ids = ArrayField(
        models.CharField(max_length=MAX_KEY_LENGTH),
        default=list,
        blank=True,
        help_text="Every session it came from: deleting one of them takes only that source away.",
    )
    source_event_ids = ArrayField(models.CharField(max_length=MAX_KEY_LENGTH), default=list, blank=True)
    metadata = models.JSONField(default=dict, blank=True, help_text="Custom metadata given with the memory.")
    extra_scope = models.JSONField(
        default=dict,
        blank=True,
        help_text="Scope keys besides app and user (Vertex AI scopes are maps), matched exactly: "
        "{} for the memories of ADK's services and the native API.",
    )
    event_time = models.DateTimeField(null=True, blank=True, help_text="When what it remembers happened.")
    valid_from = models.DateTimeField(
        default=timezone.now, help_text="From when it holds: when what it remembers happened, else when it was stored."
    )
    valid_until = models.DateTimeField(
        null=True,
        blank=True,
        help_text="Until when it held: set when a newer memory superseded it; empty while it holds.",
    )
    expires_at = models.DateTimeField(null=True, blank=True, help_text="Forgotten after this time (TTL).")
    status = models.CharField(max_length=16, choices=Status.choices, default=Status.ACTIVE)
    superseded_by = models.ForeignKey(
        "self",
        null=True,
        blank=True,
        on_delete=models.SET_NULL,
        related_name="supersedes",
        help_text="The memory that replaced this one.",
    )
    forgotten_at = models.DateTimeField(null=True, blank=True)
    embedding = VectorField(dimensions=EMBEDDING_DIMENSIONS, null=True, blank=True)
    embedder = models.CharField(max_length=128, blank=True, help_text="Model that produced the embedding.")
    context = models.TextField(
        blank=True, help_text="What it answers or continues (e.g. the turn before it): searched with it, not shown."
    )
    search_text = models.TextField(blank=True, help_text="The text and its context as the keyword search sees them.")
    names = ArrayField(
        models.CharField(max_length=256),
        default=list,
        blank=True,
        help_text="The names its text mentions, casefolded (memory_app.names): a question naming them ranks it higher.",
    )
    search_vector = models.GeneratedField(
        expression=RawSQL(f"to_tsvector('{TEXT_SEARCH_CONFIG}'::regconfig, search_text)", ()),
        output_field=SearchVectorField(),
        db_persist=True,
    )
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    objects = MemoryQuerySet.as_manager()

    class Meta:
        db_table = "memories"
        verbose_name_plural = "memories"
        indexes = [
            # Covering: search's pass over a scope (who wrote, the newest event, how many) reads this
            # index only, not a heap page per memory (memory_app.search.ScopeFacts).
            models.Index(
                fields=["app_name", "user_id", "status"],
                name="memories_by_scope_names",
                include=["extra_scope", "expires_at", "valid_from", "valid_until", "author", "event_time", "names"],
            ),
            GinIndex(fields=["search_vector"], name="memories_search_vector"),
            # m=32/ef_construction=128: at 1M memories m=16/64 found the right cluster
            # for only ~0.9 of heavy users' queries (bench/memory_scale.py), 0.99 with these.
            HnswIndex(
                name="memories_embedding_hnsw",
                fields=["embedding"],
                m=32,
                ef_construction=128,
                opclasses=["vector_cosine_ops"],
            ),
        ]

    def __str__(self) -> str:
        return self.text[:80]


class MemoryBankConfig(models.Model):
    """How an app's memories are extracted and kept (Vertex AI Memory Bank's memoryBankConfig).

    Read by consolidation and every write of memories; edited in the admin, the
    native API or Vertex's ``reasoningEngines`` PATCH. An app without one uses
    the defaults: every managed topic, no custom topic, memories never expire.
    """

    app_name = models.CharField(max_length=MAX_KEY_LENGTH, unique=True)
    managed_topics = ArrayField(
        models.CharField(max_length=32, choices=[c for c in Kind.choices if c[0] != Kind.FACT]),
        default=list,
        blank=True,
        help_text="Managed topics the model extractor looks for; empty: all of them.",
    )
    custom_topics = models.JSONField(
        default=list,
        blank=True,
        help_text='Topics of the app\'s own: [{"label": "…", "description": "what belongs in it"}].',
    )
    examples = models.JSONField(
        default=list,
        blank=True,
        help_text='Few-shot examples for the model extractor: [{"conversation": [{"role": "user", "text": "…"}], '
        '"memories": [{"fact": "…", "topic": "…"}]}].',
    )
    default_ttl = models.DurationField(
        null=True, blank=True, help_text="Memories expire this long after their last write."
    )
    create_ttl = models.DurationField(
        null=True, blank=True, help_text="For memories created directly (overrides the default)."
    )
    generate_created_ttl = models.DurationField(
        null=True, blank=True, help_text="For memories created by generation (overrides the default)."
    )
    generate_updated_ttl = models.DurationField(
        null=True, blank=True, help_text="For memories a generation merged into (overrides the default)."
    )
    revision_ttl = models.DurationField(
        null=True, blank=True, help_text="Revisions are deleted this long after they are written; empty: kept."
    )
    third_person = models.BooleanField(
        default=False,
        help_text='Memories are written in the third person ("The user likes tea"), not as said ("I like tea").',
    )
    natural_language_memories = models.BooleanField(
        default=True, help_text="Off: generation makes no natural-language memories (structured profiles only)."
    )
    revisions_per_candidate = models.PositiveSmallIntegerField(
        null=True,
        blank=True,
        help_text="How many revisions of each known memory a model consolidating sees (empty: 1, the latest). "
        "The offline extractor compares with the latest text only.",
    )
    scoped_customizations = models.JSONField(
        default=list,
        blank=True,
        help_text="Customizations for requests whose scope has all of some keys (the most specific wins; the "
        'fields above are the default): [{"scope_keys": ["user_id"], "managed_topics": […], "custom_topics": […], '
        '"examples": […], "third_person": false, "natural_language_memories": true, "revisions_per_candidate": null}].',
    )
    keep_revisions = models.BooleanField(
        default=True, help_text="Off (Vertex's disableMemoryRevisions): changes write no revisions, so none roll back."
    )
    generation_model = models.CharField(
        max_length=512,
        blank=True,
        help_text="The model Vertex's generationConfig names. Used when it is a Gemini model and the memory model "
        "(COGNIZES_MEMORY_MODEL) is Gemini too; otherwise kept and shown only.",
    )
    generation_trigger = models.JSONField(
        default=dict,
        blank=True,
        help_text='When ingested events become memories unless a request says: {"event_count": n, '
        '"idle_seconds": s, "interval_seconds": s}; empty: at once.',
    )
    embedding_model = models.CharField(
        max_length=512,
        blank=True,
        help_text="The model Vertex's similaritySearchConfig names: kept and shown only; Cognizes embeds with "
        "COGNIZES_EMBEDDER.",
    )
    structured_memory_configs = models.JSONField(
        default=list,
        blank=True,
        help_text="Structured profiles (Vertex's structuredMemoryConfigs), checked by memory_app.profile_schema: "
        '[{"scope_keys": ["user_id"], "schema_configs": [{"id": "user-profile", "memory_type": "STRUCTURED_PROFILE", '
        '"schema": {"type": "OBJECT", "properties": {"city": {"type": "STRING"}}}}]}].',
    )
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        db_table = "memory_bank_configs"
        verbose_name = "memory bank config"

    def __str__(self) -> str:
        return self.app_name

    def custom_topic_labels(self) -> list[str]:
        return [topic["label"] for topic in self.custom_topics]


class ProfileField(Memory):
    """One field of a structured profile (a memory of type ``structured_profile``): the admin edits it by value."""

    class Meta:
        proxy = True
        verbose_name = "profile field"


class RevisionAction(models.TextChoices):
    CREATE = "create", "create"
    UPDATE = "update", "update"
    MERGE = "merge", "merge"
    SUPERSEDE = "supersede", "supersede"
    FORGET = "forget", "forget"
    RESTORE = "restore", "restore"
    ROLLBACK = "rollback", "rollback"


class MemoryRevision(models.Model):
    """An immutable record of one change to a memory: what it was, what it became, and why."""

    memory = models.ForeignKey(Memory, on_delete=models.CASCADE, related_name="revisions")
    action = models.CharField(max_length=16, choices=RevisionAction.choices)
    text_before = models.TextField(blank=True)
    text_after = models.TextField(blank=True)
    status_before = models.CharField(max_length=16, blank=True)
    status_after = models.CharField(max_length=16, blank=True)
    metadata_after = models.JSONField(default=dict, blank=True)
    structured_data = models.JSONField(
        null=True, blank=True, help_text="A profile field's data after the change (Vertex's structuredData)."
    )
    cause = models.CharField(max_length=256, help_text="What made the change: a job, a person, a call.")
    labels = models.JSONField(
        default=dict, blank=True, help_text="Labels given with the change (Vertex's revisionLabels)."
    )
    expires_at = models.DateTimeField(
        null=True, blank=True, help_text="Deleted after this time (the revision TTL); kept for good if empty."
    )
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        db_table = "memory_revisions"
        ordering = ["memory", "id"]

    def __str__(self) -> str:
        return f"{self.action} by {self.cause}"


class JobStatus(models.TextChoices):
    SCHEDULED = "scheduled", "scheduled"
    QUEUED = "queued", "queued"
    RUNNING = "running", "running"
    DONE = "done", "done"
    FAILED = "failed", "failed"


class ConsolidationJob(models.Model):
    """One ingestion of a session's events into memory.

    ``watermark`` is the session version of the last event taken, so a session
    added again ingests only what is new, and a job run twice creates nothing twice.
    """

    app_name = models.CharField(max_length=MAX_KEY_LENGTH)
    user_id = models.CharField("user id", max_length=MAX_KEY_LENGTH)
    session_id = models.CharField("session id", max_length=MAX_KEY_LENGTH, blank=True)
    status = models.CharField(max_length=16, choices=JobStatus.choices, default=JobStatus.QUEUED)
    watermark = models.BigIntegerField(default=0, help_text="Session version of the last event ingested.")
    events = models.JSONField(
        null=True, blank=True, help_text="Events given directly (not read from the session store)."
    )
    custom_metadata = models.JSONField(default=dict, blank=True)
    extra_scope = models.JSONField(default=dict, blank=True, help_text="Scope keys of the memories it makes.")
    stream = models.CharField(  # noqa: DJ001  (None: not a stream's job; '' is Vertex's default stream)
        max_length=MAX_KEY_LENGTH,
        null=True,
        blank=True,
        help_text="The event stream it collects (Vertex ingestEvents; '' is the default stream); none for other jobs.",
    )
    consolidate = models.BooleanField(
        default=True, help_text="Merge with what is already known; off: every extracted memory is added as new."
    )
    metadata_merge = models.CharField(max_length=32, choices=MetadataMerge.choices, default=MetadataMerge.KEEP_ALL)
    allowed_kinds = ArrayField(
        models.CharField(max_length=32, choices=Kind.choices),
        default=list,
        blank=True,
        help_text="Only memories of these kinds are kept; empty: every kind.",
    )
    revision_labels = models.JSONField(default=dict, blank=True, help_text="Labels of the revisions it writes.")
    revision_ttl = models.DurationField(null=True, blank=True, help_text="TTL of the revisions it writes.")
    keep_revisions = models.BooleanField(default=True, help_text="Off: it writes no revisions (the request said so).")
    outcome = models.JSONField(
        default=dict,
        blank=True,
        help_text='What it made, {"created": [ids], "updated": [ids], "superseded": [ids]}: its answer when no '
        "revisions record it.",
    )
    attempts = models.PositiveIntegerField(default=0)
    error = models.TextField(blank=True)
    memories_created = models.PositiveIntegerField(default=0)
    memories_updated = models.PositiveIntegerField(default=0)
    created_at = models.DateTimeField(auto_now_add=True)
    started_at = models.DateTimeField(null=True, blank=True)
    finished_at = models.DateTimeField(null=True, blank=True)
    not_before = models.DateTimeField(
        null=True, blank=True, help_text="A scheduled job runs once the session has been quiet until then."
    )
    lease_until = models.DateTimeField(
        null=True,
        blank=True,
        help_text="A queued or running job not done by then is presumed lost (worker killed, message lost) "
        "and sent again. The worker running it renews it.",
    )

    class Meta:
        db_table = "consolidation_jobs"
        ordering = ["-id"]
        indexes = [
            models.Index(fields=["app_name", "user_id", "session_id"], name="jobs_by_session"),
            # The admin's overview counts jobs by state and lists the last failures without a scan.
            models.Index(fields=["status", "-finished_at"], name="jobs_by_status"),
        ]
        constraints = [
            models.UniqueConstraint(
                fields=["app_name", "user_id", "session_id"],
                condition=models.Q(status="scheduled", stream__isnull=True),
                name="jobs_one_scheduled_per_session",
            ),
            models.UniqueConstraint(
                fields=["app_name", "user_id", "stream", "extra_scope"],
                condition=models.Q(status="scheduled", stream__isnull=False),
                name="jobs_one_pending_per_stream",
            ),
        ]

    def __str__(self) -> str:
        return f"job {self.pk} {self.app_name}/{self.user_id}/{self.session_id} {self.status}"
