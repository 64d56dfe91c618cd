"""Example Store (Vertex's ``exampleStores``, issue 47 item 3): few-shot examples an agent is shown, found by what the
user asks.

A store belongs to an app. Each example keeps what a client sent (``content``: the storedContentsExample as
Vertex spells it) beside what search needs: its search key, the function names its expected answer calls, and the
key's vector from the embedder memories use (its id kept, as for memories). Stores hold tens to thousands of
examples and every search names one store, so search is an exact scan of the store's rows, not an HNSW index:
exact, and fast at that size.
"""

from __future__ import annotations

from django.contrib.postgres.fields import ArrayField
from django.db import models
from pgvector.django import VectorField

from cognizes.access.models import MAX_KEY_LENGTH
from cognizes.infra.embedders import DIMENSIONS


class ExampleStore(models.Model):
    app_name = models.CharField(max_length=MAX_KEY_LENGTH, help_text="The app whose keys reach the store.")
    display_name = models.CharField(max_length=256, help_text="A name for people (Vertex's displayName).")
    description = models.TextField(blank=True)
    embedding_model = models.CharField(
        max_length=256,
        blank=True,
        help_text="The vertexEmbeddingModel a client asked for, kept to be read back; Cognizes embeds with its own.",
    )
    create_time = models.DateTimeField(auto_now_add=True)
    update_time = models.DateTimeField(auto_now=True)

    class Meta:
        db_table = "example_stores"
        indexes = [models.Index(fields=["app_name", "id"], name="example_stores_by_app")]

    def __str__(self) -> str:
        return f"{self.display_name} ({self.app_name})"


class StoredExample(models.Model):
    store = models.ForeignKey(ExampleStore, on_delete=models.CASCADE, related_name="examples")
    example_id = models.CharField(max_length=256, help_text="Given by the client, or made up; unique in the store.")
    display_name = models.CharField(max_length=256, blank=True)
    search_key = models.TextField(help_text="What a search is compared to: given, or the last content's text.")
    content = models.JSONField(help_text="The storedContentsExample as Vertex spells it (camelCase), as stored.")
    function_names = ArrayField(
        models.CharField(max_length=256),
        default=list,
        blank=True,
        help_text="The functions the expected contents call (what the functionNames filter matches).",
    )
    embedding = VectorField(dimensions=DIMENSIONS)
    embedder = models.CharField(max_length=256, help_text="The id of the embedder that made the vector.")
    create_time = models.DateTimeField(auto_now_add=True)
    update_time = models.DateTimeField(auto_now=True)

    class Meta:
        db_table = "stored_examples"
        constraints = [models.UniqueConstraint(fields=["store", "example_id"], name="stored_examples_unique_id")]

    def __str__(self) -> str:
        return self.search_key[:80]
