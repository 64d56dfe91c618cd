"""Reasoning engines: the numeric ids under which Vertex AI clients reach a Cognizes app.

Vertex AI addresses everything through ``reasoningEngines/{id}``; Cognizes
addresses it by app name. One engine per app, created once
(``manage.py vertex_engine APP``), so a client's engine id never changes.
"""

from __future__ import annotations

from django.db import models

from access.models import MAX_KEY_LENGTH


class Engine(models.Model):
    engine_id = models.BigIntegerField(
        "engine id", unique=True, help_text="The numeric id Vertex AI clients put in reasoningEngines/{id}."
    )
    app_name = models.CharField(
        max_length=MAX_KEY_LENGTH, unique=True, help_text="The Cognizes app this engine serves."
    )
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        db_table = "vertex_engines"
        verbose_name = "reasoning engine"

    def __str__(self) -> str:
        return f"reasoningEngines/{self.engine_id} → {self.app_name}"
