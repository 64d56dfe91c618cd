"""The leased rows of every app (``cognizes.infra.jobs``): a row is run by one worker at a time, and a worker never
waits for another's claim.

The apps' own tests cover the rest through their rows: a lost worker's row is run again (tests/memory/test_lost_jobs,
tests/knowledge/test_lost_documents), a run that lost its claim writes nothing and a live one keeps it
(tests/knowledge/test_fair_leases). Here, workers claiming at the same instant, on real PostgreSQL connections.
"""

from __future__ import annotations

import threading
import time

import pytest
from django.db import connection, transaction

from memory_app.consolidation import JOBS
from memory_app.models import ConsolidationJob, JobStatus

pytestmark = pytest.mark.django_db(transaction=True)

WORKERS = 8


def _job() -> ConsolidationJob:
    return ConsolidationJob.objects.create(app_name="shop", user_id="ada", session_id="s1", events=[])


def _claimed_at_once(job_id: int, workers: int) -> list[ConsolidationJob | None]:
    """What ``workers`` threads, each with its own connection, get claiming the job at the same instant."""
    start = threading.Barrier(workers)
    claims: list[ConsolidationJob | None] = []

    def worker() -> None:
        try:
            start.wait()
            claims.append(JOBS.claim(job_id))
        finally:
            connection.close()

    threads = [threading.Thread(target=worker) for _ in range(workers)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    return claims


def test_workers_claiming_one_job_at_the_same_instant_leave_it_to_exactly_one():
    for _ in range(5):
        job = _job()

        claims = _claimed_at_once(job.pk, WORKERS)

        assert len(claims) == WORKERS
        assert len([claim for claim in claims if claim is not None]) == 1
        job.refresh_from_db()
        assert (job.status, job.attempts) == (JobStatus.RUNNING, 1)


def test_a_claim_does_not_wait_for_a_job_another_worker_is_claiming():
    """SKIP LOCKED: a worker busy claiming (the row locked) costs another nothing; once it lets go, the job is free."""
    job = _job()
    locked, release = threading.Event(), threading.Event()

    def other_worker() -> None:
        try:
            with transaction.atomic():
                ConsolidationJob.objects.select_for_update().get(pk=job.pk)
                locked.set()
                release.wait(10)
        finally:
            connection.close()

    other = threading.Thread(target=other_worker)
    other.start()
    try:
        assert locked.wait(10)
        started = time.monotonic()
        assert JOBS.claim(job.pk) is None
        assert time.monotonic() - started < 2
    finally:
        release.set()
        other.join()

    claimed = JOBS.claim(job.pk)
    assert claimed is not None and claimed.attempts == 1
