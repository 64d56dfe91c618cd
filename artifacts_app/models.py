"""Artifacts: named files of a session (or of a user, ``user:`` names), each save a new version.

Metadata and content live apart (``ArtifactVersion`` and ``ArtifactContent``), so
listing versions never reads their bytes.
"""

from __future__ import annotations

from django.db import models

from cognizes.access.models import MAX_KEY_LENGTH

MAX_FILENAME_LENGTH = 1024


class Artifact(models.Model):
    """One named file; ``latest_version`` is the number its last save got (versions count from 0, as ADK's)."""

    app_name = models.CharField(max_length=MAX_KEY_LENGTH)
    user_id = models.CharField("user id", max_length=MAX_KEY_LENGTH)
    session_id = models.CharField(
        "session id", max_length=MAX_KEY_LENGTH, blank=True, help_text="Empty for a user's artifact (a user: name)."
    )
    filename = models.CharField(max_length=MAX_FILENAME_LENGTH)
    latest_version = models.IntegerField(default=0)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        db_table = "artifacts"
        constraints = [
            models.UniqueConstraint(
                fields=["app_name", "user_id", "session_id", "filename"], name="artifacts_unique_name"
            )
        ]

    def __str__(self) -> str:
        return self.filename


class ArtifactVersion(models.Model):
    """One saved version: what ADK's ``ArtifactVersion`` says of it, and the part without its bytes."""

    artifact = models.ForeignKey(Artifact, on_delete=models.CASCADE, related_name="versions")
    version = models.IntegerField()
    mime_type = models.CharField(max_length=255, blank=True)
    size = models.BigIntegerField(default=0, help_text="Bytes of inline data (or of the text).")
    custom_metadata = models.JSONField(default=dict, blank=True)
    part = models.JSONField(help_text="The saved google.genai Part, without inline data's bytes.")
    create_time = models.FloatField(help_text="Epoch seconds.")

    class Meta:
        db_table = "artifact_versions"
        ordering = ["version"]
        constraints = [models.UniqueConstraint(fields=["artifact", "version"], name="artifact_versions_unique")]

    def __str__(self) -> str:
        return f"{self.artifact.filename} v{self.version}"


class ArtifactContent(models.Model):
    """The bytes of an inline-data version, read only when the artifact is loaded or downloaded."""

    version = models.OneToOneField(ArtifactVersion, on_delete=models.CASCADE, primary_key=True, related_name="content")
    data = models.BinaryField()

    class Meta:
        db_table = "artifact_contents"

    def __str__(self) -> str:
        return f"content of artifact version {self.version_id}"
