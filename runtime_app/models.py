"""A2A tasks, kept in PostgreSQL so that any web process (and a restarted one) answers ``tasks/get``; ADK's eval sets
and eval results, kept there instead of in files beside the agents (``runtime_app.evals``)."""

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


class EvalSet(models.Model):
    """An ADK eval set of an app: the cases ``adk eval`` and ``adk web``'s eval tab run the agent against."""

    app_name = models.CharField(max_length=MAX_KEY_LENGTH)
    eval_set_id = models.CharField(
        "eval set id", max_length=MAX_KEY_LENGTH, help_text="ADK's id: letters, digits and underscores."
    )
    name = models.TextField(blank=True, help_text="ADK's display name (the id, for sets made by adk web).")
    description = models.TextField(blank=True)
    creation_timestamp = models.FloatField(help_text="When ADK made the set (epoch seconds), as ADK reports it.")

    class Meta:
        db_table = "eval_sets"
        verbose_name = "eval set"
        constraints = [models.UniqueConstraint(fields=["app_name", "eval_set_id"], name="eval_set_unique")]
        ordering = ["app_name", "eval_set_id"]

    def __str__(self) -> str:
        return f"{self.app_name}/{self.eval_set_id}"


class EvalCase(models.Model):
    """One case of an eval set (a conversation, or a scenario), in the set's order."""

    eval_set = models.ForeignKey(EvalSet, on_delete=models.CASCADE, related_name="cases")
    eval_id = models.TextField("eval case id")
    position = models.IntegerField(help_text="Where the case stands in the set (ADK keeps cases in order).")
    document = models.TextField(
        help_text="The case as ADK's JSON (EvalCase); text, not jsonb, which refuses a \\u0000 a message may hold."
    )

    class Meta:
        db_table = "eval_cases"
        verbose_name = "eval case"
        constraints = [models.UniqueConstraint(fields=["eval_set", "eval_id"], name="eval_case_unique")]
        ordering = ["eval_set", "position"]

    def __str__(self) -> str:
        return self.eval_id


class EvalSetResult(models.Model):
    """The result of one run of an eval set: each case's status and metric scores, kept whole as ADK made it."""

    app_name = models.CharField(max_length=MAX_KEY_LENGTH)
    eval_set_id = models.CharField("eval set id", max_length=MAX_KEY_LENGTH)
    result_name = models.TextField(
        help_text="ADK's eval_set_result_name ({app}_{set}_{time}): what ADK lists and fetches results by."
    )
    creation_timestamp = models.FloatField(help_text="When the run finished (epoch seconds), as ADK reports it.")
    document = models.TextField(help_text="The result as ADK's JSON (EvalSetResult), sessions included.")

    class Meta:
        db_table = "eval_set_results"
        verbose_name = "eval result"
        constraints = [models.UniqueConstraint(fields=["app_name", "result_name"], name="eval_set_result_unique")]
        ordering = ["app_name", "-creation_timestamp"]

    def __str__(self) -> str:
        return self.result_name
