"""The Celery app: tasks are discovered in each app's ``tasks.py``."""

import os

from celery import Celery
from django.db import InterfaceError, OperationalError

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "cognizes.settings")

app = Celery("cognizes")
app.config_from_object("django.conf:settings", namespace="CELERY")
app.autodiscover_tasks()

# The options of the periodic maintenance tasks (forgetting, trace retention): no
# result kept; a database outage is retried with backoff, the work being idempotent.
MAINTENANCE_TASK = {
    "ignore_result": True,
    "autoretry_for": (OperationalError, InterfaceError),
    "retry_backoff": True,
    "retry_backoff_max": 300,
    "max_retries": 3,
}
