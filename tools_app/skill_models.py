"""Agent skills (issue 47 item 5): the Agent Registry's ``skills``, each a zip of ``SKILL.md`` and its files, kept in
revisions.

A skill belongs to an app, as the app's agent and MCP servers in the registry do, and is found by the same keys.
Each upload is a new revision (the zip as uploaded, checked by ``tools_app.skill_zips``); the newest is the
default one clients download. The description is embedded (the memories' embedder) so ``skills:retrieve`` and
``skills:search`` rank by meaning, in any language.
"""

from __future__ import annotations

from django.db import models
from pgvector.django import VectorField

from cognizes.access.models import MAX_KEY_LENGTH
from cognizes.infra.embedders import DIMENSIONS


class SkillState(models.TextChoices):
    ACTIVE = "ACTIVE", "active"
    DEPRECATED = "DEPRECATED", "deprecated (still downloadable)"
    DISABLED = "DISABLED", "disabled (not found by search, not downloadable)"


class Skill(models.Model):
    app_name = models.CharField(max_length=MAX_KEY_LENGTH, help_text="The app whose keys find the skill.")
    skill_id = models.CharField(
        max_length=63, help_text="The last part of its name: lowercase letters, digits and single '.', '_' or '-'."
    )
    display_name = models.CharField(max_length=256, help_text="Its SKILL.md name, unless given another.")
    description = models.TextField(help_text="What it does and when to use it (what search matches).")
    license = models.CharField(max_length=256, blank=True)
    compatibility = models.CharField(max_length=500, blank=True)
    labels = models.JSONField(default=dict, blank=True)
    state = models.CharField(max_length=16, choices=SkillState.choices, default=SkillState.ACTIVE)
    embedding = VectorField(dimensions=DIMENSIONS, null=True, blank=True)
    embedder = models.CharField(max_length=256, blank=True)
    create_time = models.DateTimeField(auto_now_add=True)
    update_time = models.DateTimeField(auto_now=True)

    class Meta:
        db_table = "skills"
        constraints = [models.UniqueConstraint(fields=["app_name", "skill_id"], name="skills_unique_id")]

    def __str__(self) -> str:
        return f"{self.skill_id} ({self.app_name})"


class SkillRevision(models.Model):
    skill = models.ForeignKey(Skill, on_delete=models.CASCADE, related_name="revisions")
    zipped = models.BinaryField(help_text="The zip as uploaded (checked: bounded, no links, no paths out).")
    sha256 = models.CharField(max_length=64)
    frontmatter = models.JSONField(default=dict, help_text="SKILL.md's front matter, as parsed.")
    files = models.JSONField(default=list, help_text="The paths in the zip, for people.")
    create_time = models.DateTimeField(auto_now_add=True)

    class Meta:
        db_table = "skill_revisions"
        ordering = ["-id"]

    def __str__(self) -> str:
        return f"{self.skill.skill_id} revision {self.pk}"
