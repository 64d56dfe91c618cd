"""Consolidation jobs are never stuck: a killed worker's job is taken over, a run that lost its claim writes nothing.

The main test kills a real Celery worker process with SIGKILL in the middle of a
job (the container OOM kill) and starts a second one: the job must finish within
a minute of that start, not after the broker's visibility timeout (an hour).
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading
import time
from datetime import timedelta
from pathlib import Path

from django.db import connections
from django.utils import timezone
from django_celery_beat.models import PeriodicTask

from cognizes.celery import app as celery_app
from memory_app import consolidation
from memory_app.extraction import OfflineExtractor
from memory_app.models import ConsolidationJob, JobStatus, Memory, MemoryRevision
from tests.memory.sessions import TEXTS, session_with_events
from tests.polling import wait_for
from tests.processes import ROOT, database_env

APP = "lost_jobs"
LEASE_SECONDS = 3

# A worker whose extractor stalls (a slow model call) after saying it started.
STALLING_WORKER = """
import os, pathlib, sys, time
import django
django.setup()
from memory_app import consolidation

class Stalls:
    def __init__(self, *bank_model):
        pass

    def extract(self, *args, **kwargs):
        pathlib.Path(os.environ["STARTED_FILE"]).touch()
        time.sleep(3600)

consolidation.get_extractor = Stalls
from cognizes.celery import app
app.worker_main(["worker", "--pool", "solo", "-n", "doomed@%h", "--without-mingle", "--without-gossip",
                 "--loglevel", "INFO"])
"""


def _worker(command: list[str], log: Path, **env: str) -> subprocess.Popen:
    return subprocess.Popen(
        command,
        cwd=ROOT,
        env={**database_env(), "COGNIZES_JOB_LEASE_SECONDS": str(LEASE_SECONDS), **env},
        stdout=log.open("w"),
        stderr=subprocess.STDOUT,
        start_new_session=True,
    )


def test_a_job_whose_worker_was_sigkilled_is_finished_by_the_next_worker(transactional_db, tmp_path):
    celery_app.control.purge()
    session_with_events(APP)
    started = tmp_path / "started"
    doomed = _worker([sys.executable, "-c", STALLING_WORKER], tmp_path / "doomed.log", STARTED_FILE=str(started))
    try:
        job = consolidation.do_enqueue_session(app_name=APP, user_id="ada", session_id="s1")
        wait_for(started.exists, 60, "the first worker starts the job")
        assert ConsolidationJob.objects.get(pk=job.pk).status == JobStatus.RUNNING
        os.killpg(doomed.pid, signal.SIGKILL)
        doomed.wait(10)
    finally:
        if doomed.poll() is None:
            os.killpg(doomed.pid, signal.SIGKILL)

    second = _worker(
        [
            sys.executable,
            "-m",
            "celery",
            "-A",
            "cognizes",
            "worker",
            "--pool",
            "solo",
            "-n",
            "second@%h",
            "--without-mingle",
            "--without-gossip",
            "--loglevel",
            "INFO",
        ],
        tmp_path / "second.log",
    )
    try:
        took = wait_for(
            lambda: ConsolidationJob.objects.get(pk=job.pk).status == JobStatus.DONE,
            60,
            "the job is done after the second worker starts",
        )
    finally:
        os.killpg(second.pid, signal.SIGTERM)
        second.wait(30)
    print(f"job done {took:.1f} s after the second worker started (lease {LEASE_SECONDS} s)")
    done = ConsolidationJob.objects.get(pk=job.pk)
    assert done.attempts == 2 and done.lease_until is None
    assert sorted(Memory.objects.values_list("text", flat=True)) == sorted(TEXTS)
    assert MemoryRevision.objects.count() == len(TEXTS)  # one clean run's worth


# A process that claims a job and dies at the commit point, its memories not committed (as they must not be),
# leaving the job running under a lease nobody renews. Its own message, if any, is the test's to send.
DIES_AT_THE_COMMIT_POINT = """
import os, sys
import django
django.setup()
from memory_app import consolidation

consolidation._send = lambda *args, **kwargs: None
job = consolidation.do_enqueue_session(app_name=sys.argv[1], user_id=sys.argv[2], session_id="s1")
print(job.pk, flush=True)
consolidation.do_remember = lambda **kwargs: os._exit(9)
consolidation.run_job(job.pk)
"""


def test_a_job_whose_claimant_died_is_taken_over_without_beat(transactional_db, tmp_path):
    """Issue 25: a redelivered message that meets the dead claimant's lease comes back when it ends, and a job
    with no message left is recovered by the worker itself; no beat runs."""
    celery_app.control.purge()
    for user in ("ada", "bob"):
        session_with_events(APP, user_id=user)
    worker = _worker(
        [
            sys.executable,
            "-m",
            "celery",
            "-A",
            "cognizes",
            "worker",
            "--pool",
            "solo",
            "-n",
            "alone@%h",
            "--without-mingle",
            "--without-gossip",
            "--loglevel",
            "INFO",
        ],
        tmp_path / "worker.log",
        COGNIZES_JOB_RECOVERY_SECONDS="2",
    )
    try:
        time.sleep(LEASE_SECONDS + 3)  # past the worker's first recovery: what follows is not found by it
        # Both claimants at once: one after the other, the first one's lease could run out (and its job be taken
        # over) while the second was still starting on a loaded machine.
        claimants = {
            user: subprocess.Popen(
                [sys.executable, "-c", DIES_AT_THE_COMMIT_POINT, APP, user],
                cwd=ROOT,
                env={**database_env(), "COGNIZES_JOB_LEASE_SECONDS": "8"},
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                text=True,
            )
            for user in ("ada", "bob")
        }
        jobs = {}
        for user, claimant in claimants.items():
            said, complaint = claimant.communicate(timeout=120)
            assert claimant.returncode == 9, complaint
            jobs[user] = int(said.split()[0])
        assert set(ConsolidationJob.objects.values_list("status", flat=True)) == {JobStatus.RUNNING}
        consolidation._send(consolidation.CONSOLIDATE, jobs["ada"])  # ada's message is redelivered; bob's is lost

        took = wait_for(
            lambda: set(ConsolidationJob.objects.values_list("status", flat=True)) == {JobStatus.DONE},
            40,
            "both jobs are done, no beat running",
        )
    finally:
        os.killpg(worker.pid, signal.SIGTERM)
        worker.wait(30)
    print(f"both jobs done {took:.1f} s after their claimant died (its lease 8 s)")
    assert Memory.objects.filter(user_id="ada").count() == Memory.objects.filter(user_id="bob").count() == len(TEXTS)


class _Gate(OfflineExtractor):
    """The offline extractor, held at its start until the test opens the gate."""

    def __init__(self) -> None:
        self.entered, self.gate = threading.Event(), threading.Event()

    def extract(self, *args, **kwargs):
        self.entered.set()
        assert self.gate.wait(60)
        return super().extract(*args, **kwargs)


def test_a_run_that_lost_its_lease_commits_nothing(transactional_db, monkeypatch):
    """A worker presumed dead (a long stall) that wakes up after a takeover must not write its memories too."""
    session_with_events(APP)
    job = consolidation.do_enqueue_session(app_name=APP, user_id="ada", session_id="s1", run_inline=False)
    stalled = _Gate()
    monkeypatch.setattr(consolidation, "get_extractor", lambda *bank_model: stalled)
    first = threading.Thread(target=lambda: (consolidation.run_job(job.pk), connections.close_all()))
    first.start()
    assert stalled.entered.wait(30)

    # Its lease runs out (no heartbeat reached the database), the job is recovered and run by another worker.
    ConsolidationJob.objects.filter(pk=job.pk).update(lease_until=timezone.now() - timedelta(seconds=1))
    assert consolidation.do_recover_jobs() == [job.pk]
    monkeypatch.setattr(consolidation, "get_extractor", lambda *bank_model: OfflineExtractor())
    consolidation.run_job(job.pk)
    stalled.gate.set()
    first.join(30)

    done = ConsolidationJob.objects.get(pk=job.pk)
    assert (done.status, done.attempts) == (JobStatus.DONE, 2)
    assert MemoryRevision.objects.count() == len(TEXTS)  # the late run added no revision


def test_a_running_job_with_a_live_lease_is_left_alone(db):
    session_with_events(APP)
    job = consolidation.do_enqueue_session(app_name=APP, user_id="ada", session_id="s1")
    ConsolidationJob.objects.filter(pk=job.pk).update(
        status=JobStatus.RUNNING, attempts=1, lease_until=timezone.now() + timedelta(seconds=30)
    )
    assert consolidation.do_recover_jobs() == []
    consolidation.run_job(job.pk)  # a duplicate message for it
    assert ConsolidationJob.objects.get(pk=job.pk).attempts == 1 and Memory.objects.count() == 0


def test_jobs_lost_before_running_are_recovered(db):
    """A queued job whose message was lost, and a scheduled one whose due-time message was lost."""
    session_with_events(APP)
    session_with_events(APP, session_id="s2")
    queued = consolidation.do_enqueue_session(app_name=APP, user_id="ada", session_id="s1")
    scheduled = consolidation.do_schedule_session(app_name=APP, user_id="ada", session_id="s2", delay_seconds=1)
    assert consolidation.do_recover_jobs() == []  # neither is lost yet
    past = timezone.now() - timedelta(minutes=5)
    ConsolidationJob.objects.filter(pk=queued.pk).update(lease_until=past)
    ConsolidationJob.objects.filter(pk=scheduled.pk).update(not_before=past)
    assert consolidation.do_recover_jobs() == [queued.pk, scheduled.pk]
    assert set(ConsolidationJob.objects.values_list("status", flat=True)) == {JobStatus.QUEUED}
    assert consolidation.do_recover_jobs() == []  # sent once, not on every beat


def test_recovery_runs_every_30_seconds_as_an_editable_beat_row(db):
    task = PeriodicTask.objects.get(task="memory_app.recover_jobs")
    assert (task.interval.every, task.interval.period, task.enabled) == (30, "seconds", True)
