"""Schedule the trace retention task daily, as a django-celery-beat row that the admin can edit."""

from django.db import migrations
from django.utils import timezone

TASK_NAME = "Delete old traces"


def _schedule_changed(apps) -> None:
    # The beat scheduler reloads its schedule when this marker moves (what PeriodicTask.save() does).
    apps.get_model("django_celery_beat", "PeriodicTasks").objects.update_or_create(
        ident=1, defaults={"last_update": timezone.now()}
    )


def create_schedule(apps, schema_editor):
    IntervalSchedule = apps.get_model("django_celery_beat", "IntervalSchedule")
    PeriodicTask = apps.get_model("django_celery_beat", "PeriodicTask")
    daily = IntervalSchedule.objects.filter(every=1, period="days").first()
    if daily is None:
        daily = IntervalSchedule.objects.create(every=1, period="days")
    PeriodicTask.objects.get_or_create(
        name=TASK_NAME,
        defaults={
            "task": "tracing_app.delete_old_traces",
            "interval": daily,
            "expire_seconds": 86400,
            "description": "Deletes traces (and their spans) older than COGNIZES_TRACE_RETENTION_DAYS days.",
        },
    )
    _schedule_changed(apps)


def delete_schedule(apps, schema_editor):
    apps.get_model("django_celery_beat", "PeriodicTask").objects.filter(name=TASK_NAME).delete()
    _schedule_changed(apps)


class Migration(migrations.Migration):

    dependencies = [
        ("tracing_app", "0001_traces"),
        ("django_celery_beat", "0019_alter_periodictasks_options"),
    ]

    operations = [migrations.RunPython(create_schedule, delete_schedule)]
