"""Consolidation jobs carry a lease; a beat row every 30 s sends again the jobs whose lease ran out."""

from django.db import migrations, models
from django.utils import timezone

TASK_NAME = "Recover lost consolidation jobs"


def _schedule_changed(apps) -> None:
    # The beat scheduler reloads its schedule when this marker moves (what PeriodicTask.save() does).
    apps.get_model("django_celery_beat", "PeriodicTasks").objects.update_or_create(
        ident=1, defaults={"last_update": timezone.now()}
    )


def create_schedule(apps, schema_editor):
    IntervalSchedule = apps.get_model("django_celery_beat", "IntervalSchedule")
    PeriodicTask = apps.get_model("django_celery_beat", "PeriodicTask")
    every_30s = IntervalSchedule.objects.filter(every=30, period="seconds").first()
    if every_30s is None:
        every_30s = IntervalSchedule.objects.create(every=30, period="seconds")
    PeriodicTask.objects.get_or_create(
        name=TASK_NAME,
        defaults={
            "task": "memory_app.recover_jobs",
            "interval": every_30s,
            "expire_seconds": 30,
            "description": (
                "Sends again the consolidation jobs that are lost: running past their lease (the worker was "
                "killed), queued but never started (the message was lost), or scheduled and overdue."
            ),
        },
    )
    _schedule_changed(apps)


def delete_schedule(apps, schema_editor):
    apps.get_model("django_celery_beat", "PeriodicTask").objects.filter(name=TASK_NAME).delete()
    _schedule_changed(apps)


class Migration(migrations.Migration):

    dependencies = [
        ("memory_app", "0009_revision_labels_and_ttl"),
        ("django_celery_beat", "0019_alter_periodictasks_options"),
    ]

    operations = [
        migrations.AddField(
            model_name="consolidationjob",
            name="lease_until",
            field=models.DateTimeField(
                blank=True, null=True,
                help_text="A queued or running job not done by then is presumed lost (worker killed, message lost) "
                "and sent again. The worker running it renews it.",
            ),
        ),
        migrations.RunPython(create_schedule, delete_schedule),
    ]
