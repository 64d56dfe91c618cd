"""A job that dies after writing its memories but before saving its watermark must not ingest its events twice."""

from __future__ import annotations

import time

import pytest

from memory_app import consolidation
from memory_app.models import ConsolidationJob, JobStatus, Memory, MemoryRevision
from sessions_app import services as sessions

pytestmark = pytest.mark.django_db

APP = "crash_app"
TEXTS = ["I live in Lisbon.", "I have a cat named Miso.", "I play the cello.", "My sister is called Ana."]


def session_with_events() -> None:
    sessions.do_create_session(app_name=APP, user_id="ada", session_id="s1", delta=sessions.StateDelta(), now=time.time())
    for version, text in enumerate(TEXTS, start=1):
        data = f'{{"author": "user", "id": "e{version}", "content": {{"role": "user", "parts": [{{"text": "{text}"}}]}}}}'
        sessions.do_append_event(app_name=APP, user_id="ada", session_id="s1", expected_version=version,
                                 event=sessions.NewEvent(
                                     event_id=f"e{version}", invocation_id="i", author="user", branch=None,
                                     timestamp=time.time(), data_json=data, preview=text,
                                     state_delta=sessions.StateDelta()))


def test_memories_and_the_watermark_commit_together(monkeypatch):
    session_with_events()
    job = consolidation.do_enqueue_session(app_name=APP, user_id="ada", session_id="s1")
    save = ConsolidationJob.save

    def crash_before_the_watermark(self, *args, **kwargs):
        if "watermark" in (kwargs.get("update_fields") or ()):
            raise ConnectionError("worker died")  # after do_remember, before the job is marked done
        return save(self, *args, **kwargs)

    monkeypatch.setattr(ConsolidationJob, "save", crash_before_the_watermark)
    with pytest.raises(ConnectionError):
        consolidation.run_job(job.pk)
    monkeypatch.setattr(ConsolidationJob, "save", save)
    consolidation.run_job(job.pk)  # the retry

    assert ConsolidationJob.objects.get(pk=job.pk).status == JobStatus.DONE
    assert sorted(Memory.objects.values_list("text", flat=True)) == sorted(TEXTS)
    # One create revision per memory, as one clean run writes: no re-merge of what the first try stored.
    assert set(MemoryRevision.objects.values_list("action", flat=True)) == {"create"}
    assert MemoryRevision.objects.count() == len(TEXTS)
