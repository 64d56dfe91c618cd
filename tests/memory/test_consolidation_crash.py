"""A job that dies after writing its memories but before saving its watermark must not ingest its events twice."""

from __future__ import annotations

import pytest

from memory_app import consolidation
from memory_app.models import ConsolidationJob, JobStatus, Memory, MemoryRevision
from tests.memory.sessions import TEXTS, session_with_events

pytestmark = pytest.mark.django_db

APP = "crash_app"


def test_memories_and_the_watermark_commit_together(monkeypatch):
    session_with_events(APP)
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
