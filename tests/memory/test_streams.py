"""Event streams (Vertex ingestEvents): pending events generate memories when their trigger says so, on a worker."""

from __future__ import annotations

import time
from datetime import timedelta

import pytest

from memory_app.consolidation import StreamTrigger, do_ingest_stream
from memory_app.models import ConsolidationJob, JobStatus, Memory

pytestmark = pytest.mark.django_db(transaction=True)

APP = "stream_app"


def said(text: str, event_id: str = "") -> dict:
    return {
        "author": "user",
        "content": {"role": "user", "parts": [{"text": text}]},
        **({"id": event_id} if event_id else {}),
    }


def ingest(*events: dict, stream: str = "", **options) -> ConsolidationJob:
    return do_ingest_stream(app_name=APP, user_id="ada", stream=stream, events=list(events), **options)


def memories() -> list[str]:
    return sorted(Memory.objects.filter(app_name=APP).values_list("text", flat=True))


def wait_for(predicate, timeout: float = 30.0):
    deadline = time.monotonic() + timeout
    while not (result := predicate()) and time.monotonic() < deadline:
        time.sleep(0.1)
    return result


def test_without_a_rule_events_are_generated_from_at_once(celery_worker):
    ingest(said("I live in Lisbon."))

    assert wait_for(memories) == ["I live in Lisbon."]


def test_an_event_count_rule_waits_for_that_many_events(celery_worker):
    rule = StreamTrigger(event_count=3)
    first = ingest(said("I live in Lisbon."), said("I have a cat named Miso."), trigger=rule)
    time.sleep(1.0)
    assert memories() == [] and ConsolidationJob.objects.get(pk=first.pk).status == JobStatus.SCHEDULED

    third = ingest(said("I play the cello."), trigger=rule)

    assert third.pk == first.pk  # one pending job per stream
    assert len(wait_for(memories)) == 3


def test_an_idle_rule_generates_once_the_stream_is_quiet(celery_worker):
    ingest(said("I live in Lisbon."), trigger=StreamTrigger(idle=timedelta(seconds=1.5)))
    assert memories() == []

    assert wait_for(memories, timeout=20) == ["I live in Lisbon."]


def test_force_flush_generates_what_is_pending_now(celery_worker):
    ingest(said("I live in Lisbon."), trigger=StreamTrigger(event_count=10))
    ingest(said("I have a cat named Miso."), trigger=StreamTrigger(event_count=10), force_flush=True)

    assert wait_for(lambda: len(memories()) == 2)


def test_streams_and_event_ids_keep_events_apart_and_once():
    rule = StreamTrigger(event_count=100)
    a = ingest(said("one", "e1"), said("two", "e2"), stream="a", trigger=rule)
    ingest(said("one again", "e1"), stream="a", trigger=rule)
    b = ingest(said("three"), stream="b", trigger=rule)
    scoped = ingest(said("four"), stream="a", trigger=rule, extra_scope={"agent": "travel"})

    assert len({a.pk, b.pk, scoped.pk}) == 3
    assert [e["id"] for e in ConsolidationJob.objects.get(pk=a.pk).events] == ["e1", "e2"]
