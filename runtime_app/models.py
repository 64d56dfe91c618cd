"""A2A tasks, kept in PostgreSQL so that any web process (and a restarted one) answers ``tasks/get``."""

from __future__ import annotations

from django.db import models

from cognizes.access.models import MAX_KEY_LENGTH


class A2aTask(models.Model):
    """One A2A task of an app's agent, owned by the user it ran for; ``data`` is the task as A2A sends it."""

    app_name = models.CharField(max_length=MAX_KEY_LENGTH)
    user_id = models.CharField("user id", max_length=MAX_KEY_LENGTH)
    task_id = models.CharField("task id", max_length=MAX_KEY_LENGTH)
    context_id = models.CharField(
        "context id", max_length=MAX_KEY_LENGTH, help_text="The A2A context: the Cognizes session the task ran in."
    )
    state = models.CharField(max_length=40, help_text="The task's A2A state, e.g. TASK_STATE_COMPLETED.")
    status_time_ns = models.BigIntegerField(
        null=True, blank=True, help_text="When the task's status last changed (epoch nanoseconds)."
    )
    data = models.JSONField(help_text="The whole task (status, history, artifacts), as A2A's JSON.")
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        db_table = "a2a_tasks"
        verbose_name = "A2A task"
        constraints = [
            models.UniqueConstraint(fields=["app_name", "user_id", "task_id"], name="a2a_task_unique"),
        ]
        indexes = [
            models.Index(fields=["app_name", "user_id", "status_time_ns"], name="a2a_task_listing"),
            models.Index(fields=["app_name", "user_id", "context_id"], name="a2a_task_context"),
        ]

    def __str__(self) -> str:
        return f"{self.app_name}/{self.user_id}/{self.task_id}"
