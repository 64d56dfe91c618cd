"""The Celery app: tasks are discovered in each app's ``tasks.py``; workers and beat write heartbeats."""

import atexit
import os

from celery import Celery
from celery.signals import beat_init, celeryd_init, worker_ready, worker_shutdown

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "cognizes.settings")

app = Celery("cognizes")
app.config_from_object("django.conf:settings", namespace="CELERY")
app.autodiscover_tasks()


@celeryd_init.connect
def _worker_has_a_key(**_: object) -> None:
    """A worker starts only with a secret key, as the web server does (issue 41 E).

    SystemExit, not the ImproperlyConfigured it is: Celery logs and ignores what a signal's receiver raises.
    """
    _require_key("The Celery worker")


def _require_key(server: str) -> None:
    from django.core.exceptions import ImproperlyConfigured

    from cognizes.infra import secret_key

    try:
        secret_key.require(server)
    except ImproperlyConfigured as missing:
        raise SystemExit(str(missing)) from missing


@worker_ready.connect
def _worker_beats(**_: object) -> None:
    from cognizes.infra import heartbeat  # Django is set up by now

    heartbeat.start("worker")


@worker_shutdown.connect
def _worker_stops(**_: object) -> None:
    from cognizes.infra import heartbeat

    heartbeat.stop("worker")


@beat_init.connect
def _beat_beats(**_: object) -> None:
    from cognizes.infra import heartbeat

    _require_key("Celery beat")

    heartbeat.start("beat")
    atexit.register(heartbeat.stop, "beat")  # beat sends no signal when it stops
