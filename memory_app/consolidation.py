"""Consolidation jobs: a session's new events → extracted candidates → the user's memories.

A job row is written before any work, so every ingestion is visible (admin, API)
with its status, attempts and error. A session's events are read from the
session store after the watermark of the last finished job for that session, so
adding a session again ingests only what is new and running a job twice creates
nothing twice. Jobs run on a Celery worker (``tasks.consolidate``), or inline.

The database, not the broker, says whether a job is lost. A queued or running job
carries ``lease_until``: a worker running it renews the lease while it works, and
a job still not done when its lease runs out (its worker was SIGKILLed, its
message died with a Redis restart or was never sent while Redis was down) is sent
again by ``do_recover_jobs`` (a beat task, and every worker once it has started).
A job commits its result only while it still holds its claim, so a worker that
was presumed dead and wakes up late writes nothing twice. The claim, its renewal and
its end are the leased rows' rule of every app (``JOBS``, ``cognizes.infra.jobs``);
a job's own states (scheduled, a dispatch lease while queued) are this module's.
"""

from __future__ import annotations

import functools
import logging
from dataclasses import dataclass, replace
from datetime import datetime, timedelta
from typing import Any

import kombu.exceptions
from django.conf import settings
from django.db import IntegrityError, transaction
from django.db.models import F, Max, Q
from django.utils import timezone

from cognizes.infra import jobs
from cognizes.infra.jobs import LeasedJobs
from memory_app.extraction import LlmExtractor, get_extractor
from memory_app.models import ConsolidationJob, JobStatus, Memory, MemoryBankConfig, MemoryRevision
from memory_app.profiles import do_store_profiles, draft_profiles
from memory_app.services import (
    Generation,
    RevisionMark,
    customization_for,
    do_remember,
    get_bank_config,
    scope_keys_of,
)
from sessions_app import services as session_services

logger = logging.getLogger(__name__)
KNOWN_MEMORIES_FOR_EXTRACTION = 50
# The tasks are sent by name: consolidation is what the tasks call, not the other way round.
CONSOLIDATE = "memory_app.tasks.consolidate"
CONSOLIDATE_WHEN_DUE = "memory_app.tasks.consolidate_when_due"


def _lease() -> timedelta:
    return timedelta(seconds=settings.COGNIZES_JOB_LEASE_SECONDS)


JOBS = LeasedJobs(
    ConsolidationJob,
    waiting=(JobStatus.QUEUED, JobStatus.FAILED),  # a failed job is run again by its task's retry
    running=JobStatus.RUNNING,
    failed=JobStatus.FAILED,
    lease=_lease,
)


class JobTakenOver(Exception):
    """This run's claim on the job was lost (its lease ran out and another run took it): it commits nothing."""


def do_enqueue_session(
    *,
    app_name: str,
    user_id: str,
    session_id: str,
    custom_metadata: dict[str, Any] | None = None,
    run_inline: bool = False,
    generation: Generation = Generation(),
) -> ConsolidationJob:
    """Record a job for the session's new events and run it (on a worker, or now)."""
    generation.check()
    job = ConsolidationJob.objects.create(
        app_name=app_name,
        user_id=user_id,
        session_id=session_id,
        custom_metadata=dict(custom_metadata or {}),
        lease_until=_redispatch_time(),
        **_generation_fields(generation),
    )
    return _dispatch(job, run_inline)


def do_enqueue_events(
    *,
    app_name: str,
    user_id: str,
    events: list[dict[str, Any]],
    session_id: str = "",
    custom_metadata: dict[str, Any] | None = None,
    run_inline: bool = False,
    extra_scope: dict[str, str] | None = None,
    generation: Generation = Generation(),
) -> ConsolidationJob:
    """Record a job for events given directly (not read from the session store)."""
    generation.check()
    job = ConsolidationJob.objects.create(
        app_name=app_name,
        user_id=user_id,
        session_id=session_id,
        events=events,
        custom_metadata=dict(custom_metadata or {}),
        extra_scope=dict(extra_scope or {}),
        lease_until=_redispatch_time(),
        **_generation_fields(generation),
    )
    return _dispatch(job, run_inline)


def _generation_fields(generation: Generation) -> dict[str, Any]:
    return {
        "consolidate": generation.consolidate,
        "metadata_merge": generation.metadata_merge,
        "allowed_kinds": list(generation.allowed_kinds),
        "revision_labels": dict(generation.revision_labels),
        "revision_ttl": generation.revision_ttl,
        "keep_revisions": generation.keep_revisions,
    }


@dataclass(frozen=True)
class StreamTrigger:
    """When a stream's pending events are turned into memories (Vertex's generation rule).

    With none of the three set, at once. ``event_count``: once that many are pending;
    ``idle``: once the stream has been quiet that long; ``interval``: that long after
    the first pending event. The first condition met wins.
    """

    event_count: int | None = None
    idle: timedelta | None = None
    interval: timedelta | None = None

    def waits(self) -> bool:
        return bool(self.event_count or self.idle or self.interval)

    @classmethod
    def of_bank(cls, config: MemoryBankConfig) -> StreamTrigger:
        """The app's default trigger (its memory bank config's ``generation_trigger``)."""
        rule = config.generation_trigger or {}
        idle, interval = rule.get("idle_seconds"), rule.get("interval_seconds")
        return cls(
            event_count=rule.get("event_count") or None,
            idle=timedelta(seconds=idle) if idle else None,
            interval=timedelta(seconds=interval) if interval else None,
        )


def do_ingest_stream(
    *,
    app_name: str,
    user_id: str,
    stream: str,
    events: list[dict[str, Any]],
    extra_scope: dict[str, str] | None = None,
    custom_metadata: dict[str, Any] | None = None,
    generation: Generation = Generation(),
    trigger: StreamTrigger = StreamTrigger(),
    force_flush: bool = False,
) -> ConsolidationJob:
    """Add events to the stream's pending job, and generate from it when ``trigger`` (or ``force_flush``) says so.

    One pending job per stream (and scope): events ingested again (same id) are
    kept once; metadata adds up; the options of the job's first ingestion hold.
    A due job runs through ``consolidate_when_due`` like a session's end.
    """
    generation.check()
    key = {
        "app_name": app_name,
        "user_id": user_id,
        "stream": stream,
        "extra_scope": dict(extra_scope or {}),
        "status": JobStatus.SCHEDULED,
    }
    for _ in range(3):
        try:
            with transaction.atomic():
                job = ConsolidationJob.objects.select_for_update().filter(**key).first()
                created = job is None
                if created:
                    job = ConsolidationJob(**key, events=[], **_generation_fields(generation))
                assert job is not None  # found or made
                events_before: list[dict[str, Any]] = job.events or []  # a stream's job starts with []
                seen = {event.get("id") for event in events_before if event.get("id")}
                job.events = [*events_before, *(e for e in events if not e.get("id") or e["id"] not in seen)]
                job.custom_metadata = {**job.custom_metadata, **(custom_metadata or {})}
                counted = trigger.event_count is not None and len(job.events) >= trigger.event_count
                due = force_flush or not trigger.waits() or counted
                job.not_before = timezone.now() if due else _stream_due(job, trigger)
                job.save()
        except IntegrityError:  # another process opened the stream's pending job meanwhile: add to that one
            continue
        if due or (created and job.not_before):
            countdown = max(0.0, (job.not_before - timezone.now()).total_seconds())  # type: ignore[operator]  # set
            transaction.on_commit(functools.partial(_send, CONSOLIDATE_WHEN_DUE, job.pk, countdown=countdown))
        return job
    raise RuntimeError(f"could not add events to stream {stream!r}")


def _stream_due(job: ConsolidationJob, trigger: StreamTrigger) -> datetime | None:
    """When a pending stream job is due by time: quiet for ``idle``, or ``interval`` after it opened."""
    now = timezone.now()
    times = [now + trigger.idle] if trigger.idle else []
    if trigger.interval:
        times.append((job.created_at or now) + trigger.interval)
    return min(times) if times else None


def do_schedule_session(*, app_name: str, user_id: str, session_id: str, delay_seconds: float) -> ConsolidationJob:
    """Ingest the session once it has been quiet for ``delay_seconds`` (its "end").

    One scheduled job per session: each call pushes its due time back. A
    Celery task (``consolidate_when_due``) waits for the due time and runs it.
    """
    due = timezone.now() + timedelta(seconds=delay_seconds)
    scope = {"app_name": app_name, "user_id": user_id, "session_id": session_id, "status": JobStatus.SCHEDULED}
    for _ in range(3):
        with transaction.atomic():
            job = ConsolidationJob.objects.select_for_update().filter(**scope).first()
            if job is not None:
                job.not_before = due
                job.save(update_fields=["not_before"])
                return job
        try:
            with transaction.atomic():
                job = ConsolidationJob.objects.create(**scope, not_before=due)
        except IntegrityError:  # another process scheduled it meanwhile: push that one back
            continue
        transaction.on_commit(functools.partial(_send, CONSOLIDATE_WHEN_DUE, job.pk, countdown=delay_seconds))
        return job
    raise RuntimeError(f"could not schedule consolidation of session {session_id}")


def run_when_due(job_id: int) -> None:
    """Run a scheduled job if it is due; else send the check again for when it will be.

    A job that left "scheduled" but did not finish (a retry after an outage) runs again.
    """
    job = ConsolidationJob.objects.filter(pk=job_id).first()
    if job is None or job.status == JobStatus.DONE:
        return
    if job.status == JobStatus.SCHEDULED:
        remaining = (job.not_before - timezone.now()).total_seconds() if job.not_before else 0
        if remaining > 0:
            _send(CONSOLIDATE_WHEN_DUE, job_id, countdown=remaining)
            return
        ConsolidationJob.objects.filter(pk=job_id, status=JobStatus.SCHEDULED).update(
            status=JobStatus.QUEUED, lease_until=_redispatch_time()
        )
    run_job(job_id)


def _dispatch(job: ConsolidationJob, run_inline: bool) -> ConsolidationJob:
    if run_inline:
        run_job(job.pk)
        job.refresh_from_db()
        return job
    transaction.on_commit(lambda: _send(CONSOLIDATE, job.pk))
    return job


def _send(task: str, job_id: int, *, countdown: float = 0) -> None:
    """Hand a job to the broker; while the broker is down, leave it to ``do_recover_jobs``.

    The job row is already committed, so nothing is lost: a queued job is marked
    lost at once (recovered as soon as a worker and the broker are back), and a
    scheduled one is recovered once it is overdue. The request that made it succeeds.
    """
    try:
        jobs.send(task, job_id, countdown=min(countdown, settings.COGNIZES_JOB_MAX_COUNTDOWN_SECONDS))
    except kombu.exceptions.OperationalError as error:  # the broker is unreachable (after Celery's own retries)
        logger.warning("job %s not sent (%s): it is sent again once the broker is back", job_id, error)
        ConsolidationJob.objects.filter(pk=job_id, status=JobStatus.QUEUED).update(lease_until=timezone.now())


def run_job(job_id: int) -> None:
    """Run one job to the end if it is free to run; idempotent. Errors propagate for retry.

    Free: queued, failed (a retry), or running with its lease run out (its worker
    vanished). A job that is done is left alone; one that a run holds (a live
    lease) is come back to when the lease ends: its holder may be dead, having
    claimed it and died before committing, and its lease is the only sign.
    """
    now = timezone.now()
    job = JOBS.claim(job_id, started_at=now)
    if job is None:
        held_until = (
            ConsolidationJob.objects.filter(pk=job_id, status=JobStatus.RUNNING, lease_until__gte=now)
            .values_list("lease_until", flat=True)
            .first()
        )
        if held_until is not None:  # come back once the lease ends: its holder may be dead
            wait = (held_until - now).total_seconds() + 1
            transaction.on_commit(lambda: _send(CONSOLIDATE, job_id, countdown=wait))
        return
    try:
        with JOBS.renewed(job):
            _run(job)
    except JobTakenOver:
        logger.warning("consolidation job %s: taken over by another run after its lease ran out", job.pk)
    except Exception as error:
        JOBS.finish(job, status=JobStatus.FAILED, error=f"{type(error).__name__}: {error}")
        raise


def do_recover_jobs(limit: int = 500) -> list[int]:
    """Send again every job that is lost: lease run out while queued or running, or scheduled and overdue.

    Each is set back to queued with a fresh dispatch lease in one statement (so
    two recoveries at once do not both send it), then sent. Returns their ids.
    """
    now = timezone.now()
    lost = (
        JOBS.lost(now)
        | Q(status=JobStatus.QUEUED, lease_until__lt=now)  # its dispatch lease ran out: no worker started it
        | Q(status=JobStatus.SCHEDULED, not_before__lt=now - _lease())
    )
    with transaction.atomic():
        ids = list(
            ConsolidationJob.objects.select_for_update(skip_locked=True)
            .filter(lost)
            .order_by("id")
            .values_list("id", flat=True)[:limit]
        )
        ConsolidationJob.objects.filter(pk__in=ids).update(status=JobStatus.QUEUED, lease_until=_redispatch_time())
    for job_id in ids:
        _send(CONSOLIDATE, job_id)
    if ids:
        logger.warning("consolidation jobs %s were lost (worker gone or message lost): sent again", ids)
    return ids


def _redispatch_time() -> datetime:
    """When a queued job that no worker has started is presumed lost and sent again."""
    return timezone.now() + timedelta(seconds=settings.COGNIZES_JOB_REDISPATCH_SECONDS)


def _run(job: ConsolidationJob) -> None:
    events, watermark = _new_events(job)
    config = get_bank_config(job.app_name)  # read once: customization, model, profiles and revisions follow it
    # The customization of the job's scope (Vertex's customizationConfigs: most specific match, else the default).
    customization = customization_for(config, scope_keys_of(user_id=job.user_id, extra_scope=job.extra_scope))
    candidates = []
    if customization.natural_language_memories:
        known = list(
            Memory.objects.for_scope(job.app_name, job.user_id)
            .active()
            .statements()
            .filter(extra_scope=job.extra_scope)
            .order_by("-updated_at")
            .values_list("id", "text")[:KNOWN_MEMORIES_FOR_EXTRACTION]
        )
        extractor = get_extractor(config.generation_model)
        shown = [(str(memory_id), text) for memory_id, text in known]
        if isinstance(extractor, LlmExtractor) and (customization.revisions_per_candidate or 1) > 1:
            shown = with_earlier_revisions(shown, customization.revisions_per_candidate or 1)
        candidates = extractor.extract(events, known=shown, session_id=job.session_id, config=customization)
    if job.custom_metadata:
        candidates = [replace(c, metadata={**c.metadata, **job.custom_metadata}) for c in candidates]
    profiles = draft_profiles(
        app_name=job.app_name, user_id=job.user_id, extra_scope=job.extra_scope, events=events, config=config
    )
    generation = Generation(
        consolidate=job.consolidate,
        metadata_merge=job.metadata_merge,
        allowed_kinds=tuple(job.allowed_kinds),
        revision_labels=job.revision_labels,
        revision_ttl=job.revision_ttl,
        keep_revisions=job.keep_revisions,
    )
    # The memories and the watermark that says their events are done commit together: a job that
    # dies in between leaves neither, so its retry ingests each event once (issue 11). Only while
    # this run still holds the job: one that lost it to a takeover commits nothing.
    with transaction.atomic():
        if not JOBS.held(job).select_for_update().exists():
            raise JobTakenOver(job.pk)
        outcome = do_remember(
            app_name=job.app_name,
            user_id=job.user_id,
            candidates=candidates,
            cause=job_cause(job.pk),
            extra_scope=job.extra_scope,
            generation=generation,
        )
        profile_outcome = do_store_profiles(
            app_name=job.app_name,
            user_id=job.user_id,
            extra_scope=job.extra_scope,
            values=profiles.values,
            vectors=profiles.vectors,
            cause=job_cause(job.pk),
            mark=RevisionMark.of(config, generation),
        )
        job.outcome = {
            "created": [str(i) for i in [*outcome.created, *profile_outcome.created]],
            "updated": [str(i) for i in [*outcome.updated, *profile_outcome.updated]],
            "superseded": [str(i) for i in outcome.superseded],
        }
        job.watermark = watermark
        job.status, job.error, job.finished_at, job.lease_until = JobStatus.DONE, "", timezone.now(), None
        job.memories_created = len(outcome.created) + len(profile_outcome.created)
        job.memories_updated = len(outcome.updated) + len(outcome.superseded) + len(profile_outcome.updated)
        job.save(
            update_fields=[
                "watermark",
                "status",
                "error",
                "finished_at",
                "lease_until",
                "memories_created",
                "memories_updated",
                "outcome",
            ]
        )
    logger.info("consolidation job %s: %s created, %s updated", job.pk, job.memories_created, job.memories_updated)


def with_earlier_revisions(known: list[tuple[str, str]], count: int) -> list[tuple[str, str]]:
    """Known memories with the texts of up to ``count - 1`` earlier revisions, for a model consolidating.

    Vertex's ``revisions_per_candidate_count``: how much of each memory's history the model sees
    (1: the current text only). One query for all of them.
    """
    current = dict(known)
    earlier: dict[str, list[str]] = {}
    rows = (
        MemoryRevision.objects.filter(memory_id__in=[memory_id for memory_id, _ in known])
        .exclude(text_before="")
        .exclude(text_before=F("text_after"))  # merges and status changes: the text did not change
        .order_by("memory_id", "-id")
        .values_list("memory_id", "text_before")
    )
    for memory_id, text in rows:
        texts = earlier.setdefault(str(memory_id), [])
        if len(texts) < count - 1 and text not in texts and text != current.get(str(memory_id)):
            texts.append(text)
    return [
        (memory_id, f"{text} (earlier: {' | '.join(earlier[memory_id])})" if earlier.get(memory_id) else text)
        for memory_id, text in known
    ]


def job_cause(job_id: int) -> str:
    """The cause written on the revisions a job makes: what a job made is found by it."""
    return f"consolidation job {job_id}"


def _new_events(job: ConsolidationJob) -> tuple[list[dict[str, Any]], int]:
    if job.events is not None:
        return list(job.events), 0
    done = (
        ConsolidationJob.objects.filter(
            app_name=job.app_name,
            user_id=job.user_id,
            session_id=job.session_id,
            status=JobStatus.DONE,
            events__isnull=True,
        ).aggregate(watermark=Max("watermark"))["watermark"]
        or 0
    )
    stored = session_services.get_events_after(
        app_name=job.app_name, user_id=job.user_id, session_id=job.session_id, after_version=done
    )
    if stored is None:
        raise session_services.SessionNotFound(f"Session {job.session_id} not found.")
    return [event for _, event in stored], (stored[-1][0] if stored else done)
