"""Remove expired sessions hourly, as a django-celery-beat row that the admin can edit."""

from django.db import migrations
from django.utils import timezone

TASK_NAME = "Remove expired sessions"


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
            "task": "sessions_app.remove_expired",
            "interval": hourly,
            "expire_seconds": 3600,
            "description": "Deletes sessions past their expire time (Vertex ttl / expireTime) with their events; "
            "they are invisible from the moment they expire.",
        },
    )
    _schedule_changed(apps)


def delete_schedule(apps, schema_editor):
    apps.get_model("django_celery_beat", "PeriodicTask").objects.filter(name=TASK_NAME).delete()
    _schedule_changed(apps)


class Migration(migrations.Migration):

    dependencies = [
        ("sessions_app", "0003_session_attributes"),
        ("django_celery_beat", "0019_alter_periodictasks_options"),
    ]

    operations = [migrations.RunPython(create_schedule, delete_schedule)]
