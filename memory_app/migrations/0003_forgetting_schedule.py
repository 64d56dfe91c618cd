"""Schedule the forgetting task hourly, as a django-celery-beat row that the admin can edit."""

from django.db import migrations
from django.utils import timezone

TASK_NAME = "Forget weak and expired memories"


def _schedule_changed(apps) -> None:
    # The beat scheduler reloads its schedule when this marker moves (what PeriodicTask.save() does).
    apps.get_model("django_celery_beat", "PeriodicTasks").objects.update_or_create(
        ident=1, defaults={"last_update": timezone.now()}
    )


def create_schedule(apps, schema_editor):
    IntervalSchedule = apps.get_model("django_celery_beat", "IntervalSchedule")
    PeriodicTask = apps.get_model("django_celery_beat", "PeriodicTask")
    hourly = IntervalSchedule.objects.filter(every=1, period="hours").first()
    if hourly is None:
        hourly = IntervalSchedule.objects.create(every=1, period="hours")
    PeriodicTask.objects.get_or_create(
        name=TASK_NAME,
        defaults={
            "task": "memory_app.forget",
            "interval": hourly,
            # A run still queued when the next one is due is dropped, not stacked up.
            "expire_seconds": 3600,
            "description": (
                "Decays memory strength by age (half-life per kind, slowed by importance and use), "
                "forgets memories below COGNIZES_MEMORY_FORGET_BELOW and expired ones, and erases "
                "memories forgotten more than COGNIZES_MEMORY_PURGE_AFTER_DAYS ago."
            ),
        },
    )
    _schedule_changed(apps)


def delete_schedule(apps, schema_editor):
    PeriodicTask = apps.get_model("django_celery_beat", "PeriodicTask")
    PeriodicTask.objects.filter(name=TASK_NAME).delete()
    _schedule_changed(apps)


class Migration(migrations.Migration):

    dependencies = [
        ("memory_app", "0002_memories"),
        ("django_celery_beat", "0019_alter_periodictasks_options"),
    ]

    operations = [migrations.RunPython(create_schedule, delete_schedule)]
