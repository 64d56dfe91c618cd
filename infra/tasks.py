"""What the apps' Celery tasks share (the Celery app itself is the project's: ``cognizes.celery``)."""

from django.db import InterfaceError, OperationalError

# The options of the periodic maintenance tasks (forgetting, trace retention): no
# result kept; a database outage is retried with backoff, the work being idempotent.
MAINTENANCE_TASK = {
    "ignore_result": True,
    "autoretry_for": (OperationalError, InterfaceError),
    "retry_backoff": True,
    "retry_backoff_max": 300,
    "max_retries": 3,
}
