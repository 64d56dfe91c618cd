"""Old traces are deleted by a daily beat task; recent ones stay."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.utils import timezone
from django_celery_beat.models import PeriodicTask

from tests.tracing.factories import record_trace
from tracing_app.models import Span, Trace
from tracing_app.tasks import delete_old_traces

pytestmark = pytest.mark.django_db


def test_traces_older_than_the_retention_are_deleted_with_their_spans(settings):
    settings.COGNIZES_TRACE_RETENTION_DAYS = 7
    record_trace("a" * 32, start=timezone.now() - timedelta(days=8))
    record_trace("b" * 32, start=timezone.now() - timedelta(days=6))

    assert delete_old_traces.apply().get() == 1

    assert list(Trace.objects.values_list("trace_id", flat=True)) == ["b" * 32]
    assert Span.objects.count() == 3
    assert delete_old_traces.apply().get() == 0  # a second run changes nothing


def test_the_retention_task_is_scheduled_daily_and_editable_in_the_admin():
    task = PeriodicTask.objects.get(name="Delete old traces")

    assert task.task == "tracing_app.delete_old_traces"
    assert (task.interval.every, task.interval.period) == (1, "days")
    assert task.enabled
