"""Reasoning engines: the numeric ids under which Vertex AI clients reach a Cognizes app.

Vertex AI addresses everything through ``reasoningEngines/{id}``; Cognizes
addresses it by app name. One engine per app, created once
(``manage.py vertex_engine APP``), so a client's engine id never changes.
"""

from __future__ import annotations

from django.db import models

from cognizes.access.models import MAX_KEY_LENGTH


class Engine(models.Model):
    engine_id = models.BigIntegerField(
        "engine id", unique=True, help_text="The numeric id Vertex AI clients put in reasoningEngines/{id}."
    )
    app_name = models.CharField(
        max_length=MAX_KEY_LENGTH, unique=True, help_text="The Cognizes app this engine serves."
    )
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(null=True, blank=True, help_text="When a client last changed what it set here.")
    # What a client sets on the engine resource (issue 45 item 2). Text, not bounded columns: what a client sends is
    # checked where it is set (vertex_app.engine_fields), never a 500 here.
    display_name = models.TextField(
        blank=True, help_text="displayName a client set; empty: the agent's name, or the app's."
    )
    description = models.TextField(blank=True, help_text="description a client set; empty: the agent's.")
    labels = models.JSONField(default=dict, blank=True, help_text="labels a client set (string to string).")
    spec = models.JSONField(
        null=True,
        blank=True,
        help_text="spec a client set (classMethods, agentFramework, …), kept as sent; nothing is deployed from it.",
    )

    class Meta:
        db_table = "vertex_engines"
        verbose_name = "reasoning engine"

    def __str__(self) -> str:
        return f"reasoningEngines/{self.engine_id} → {self.app_name}"


class RuntimeRevision(models.Model):
    """One deployed configuration of an engine (``reasoningEngines/{id}/runtimeRevisions/{rev}``): a row whenever a
    client's create or update changes the engine's spec, display name or context spec. The newest is the engine's
    current one (ACTIVE); older ones are ARCHIVED, kept until a client deletes them."""

    engine = models.ForeignKey(Engine, on_delete=models.CASCADE, related_name="revisions")
    display_name = models.TextField(blank=True, help_text="The engine's displayName in this revision.")
    spec = models.JSONField(null=True, blank=True, help_text="The engine's spec in this revision.")
    context_spec = models.JSONField(
        default=dict, blank=True, help_text="The engine's contextSpec in this revision, as it was read back."
    )
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        db_table = "vertex_runtime_revisions"
        verbose_name = "runtime revision"
        ordering = ["-id"]

    def __str__(self) -> str:
        return f"reasoningEngines/{self.engine.engine_id}/runtimeRevisions/{self.pk}"


class UploadGrant(models.Model):
    """A RAG Engine upload URL's capability (issue 41 F): whose key issued it, until when, and whether it was used.

    The URL carries no key (Google's resumable protocol), so the grant is what each chunk is checked against: the
    issuing key must still be usable and of the same app, the grant unexpired and unused. Kept in PostgreSQL, not
    Redis, so that using it commits in one transaction with the document it creates (a failed upload leaves it
    usable; a finished one can never take bytes again).
    """

    key = models.ForeignKey(
        "access.ApiKey",
        on_delete=models.CASCADE,
        related_name="+",
        help_text="The API key that started the upload; its revocation voids the URL.",
    )
    app_name = models.CharField(max_length=MAX_KEY_LENGTH, help_text="The app of the key and the corpus.")
    corpus_id = models.BigIntegerField(help_text="The corpus the file goes into.")
    nonce = models.CharField(max_length=64, help_text="The URL's random part: a signed URL is not enough alone.")
    # Text, not bounded columns: what the client declared is checked where the document is made, never a 500 here.
    file_name = models.TextField(blank=True, help_text="X-Goog-Upload-File-Name at the start.")
    display_name = models.TextField(blank=True)
    description = models.TextField(blank=True)
    mime_type = models.TextField(blank=True, help_text="X-Goog-Upload-Header-Content-Type.")
    chunking = models.JSONField(default=dict, blank=True, help_text="The file's own chunking (uploadRagFileConfig).")
    created_at = models.DateTimeField(auto_now_add=True)
    expires_at = models.DateTimeField(help_text="After this the URL takes no bytes (COGNIZES_RAG_UPLOAD_URL_HOURS).")
    used_at = models.DateTimeField(null=True, blank=True, help_text="When the upload finished: the URL is spent.")
    document_id = models.BigIntegerField(null=True, blank=True, help_text="The file the upload made.")

    class Meta:
        db_table = "vertex_upload_grants"
        verbose_name = "RAG upload grant"
        indexes = [models.Index(fields=["expires_at"], name="vertex_upload_grant_expiry")]

    def __str__(self) -> str:
        return f"upload into ragCorpora/{self.corpus_id} by key {self.key_id}"


class RagEngineConfig(models.Model):
    """An app's RAG Engine configuration (``ragEngineConfig``), as Vertex clients set and read it back.

    On Google it picks the tier of the managed Spanner database under RAG Engine; Cognizes has one PostgreSQL
    for every corpus, so the tier changes nothing here (``unprovisioned`` deletes nothing). It is kept so that
    tools that set it and check it read back what they set. An app without a row has Vertex's default, Basic.
    """

    app_name = models.CharField(
        max_length=MAX_KEY_LENGTH, unique=True, help_text="The Cognizes app whose keys read and set it."
    )
    rag_managed_db_config = models.JSONField(
        default=dict,
        help_text='The ragManagedDbConfig last set, as Vertex spells it: {"basic": {}}, {"spanner": {"scaled": {}}}…',
    )
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        db_table = "vertex_rag_engine_configs"
        verbose_name = "RAG Engine config"

    def __str__(self) -> str:
        return f"ragEngineConfig of {self.app_name}"
