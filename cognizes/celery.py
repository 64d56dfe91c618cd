"""The Celery app: tasks are discovered in each app's ``tasks.py``; workers and beat write heartbeats."""

import atexit
import os

from celery import Celery
from celery.signals import beat_init, worker_ready, worker_shutdown

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "cognizes.settings")

app = Celery("cognizes")
app.config_from_object("django.conf:settings", namespace="CELERY")
app.autodiscover_tasks()


@worker_ready.connect
def _worker_beats(**_: object) -> None:
    from infra import heartbeat  # Django is set up by now

    heartbeat.start("worker")


@worker_shutdown.connect
def _worker_stops(**_: object) -> None:
    from infra import heartbeat

    heartbeat.stop("worker")


@beat_init.connect
def _beat_beats(**_: object) -> None:
    from infra import heartbeat

    heartbeat.start("beat")
    atexit.register(heartbeat.stop, "beat")  # beat sends no signal when it stops
