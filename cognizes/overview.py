"""What the admin's first page says is happening: per app, the jobs and documents, the processes, the failing runs.

Every number is cheap on a big database. A count walks an index and stops past
``EXACT_UP_TO`` rows; beyond that the page shows PostgreSQL's planner estimate
(``≈1.2M``), never a full count. Apps are found by skipping through the
sessions' and memories' indexes (one probe per app), not by a ``DISTINCT`` scan.
"""

from __future__ import annotations

import json
import time
from dataclasses import dataclass
from datetime import datetime, timedelta

from django.conf import settings
from django.db import connection
from django.db.models import QuerySet
from django.utils import timezone

from cognizes.infra import heartbeat
from knowledge_app.models import Corpus, Document, DocumentStatus
from memory_app.models import ConsolidationJob, JobStatus, Memory
from sessions_app.models import Event, Session
from tracing_app.models import Status, Trace

EXACT_UP_TO = 10_000
MAX_APPS = 50
FAILURES_SHOWN = 5
JOB_STATES = [JobStatus.SCHEDULED, JobStatus.QUEUED, JobStatus.RUNNING, JobStatus.FAILED]
"""The states a person acts on (done jobs are the history, listed in the jobs' admin)."""


@dataclass(frozen=True)
class Count:
    value: int
    exact: bool

    def __str__(self) -> str:
        if self.exact:
            return f"{self.value:,}"
        for size, suffix in ((1e9, "G"), (1e6, "M"), (1e3, "k")):
            if self.value >= size:
                return f"≈{self.value / size:.1f}{suffix}"
        return f"≈{self.value:,}"


def bounded_count(queryset: QuerySet) -> Count:
    """The exact count up to ``EXACT_UP_TO`` (the work stops there), else the planner's estimate."""
    counted = queryset[: EXACT_UP_TO + 1].count()  # SELECT count(*) FROM (… LIMIT n)
    if counted <= EXACT_UP_TO:
        return Count(counted, exact=True)
    plan = json.loads(queryset.explain(format="json"))
    return Count(max(int(plan[0]["Plan"]["Plan Rows"]), counted), exact=False)


@dataclass(frozen=True)
class AppRow:
    app_name: str
    sessions: Count
    events_today: Count
    memories: Count
    corpora: Count
    documents: Count


def _skip_scan(table: str) -> list[str]:
    """The distinct ``app_name``s of ``table``, one index probe each (its indexes lead with app_name)."""
    with connection.cursor() as cursor:
        cursor.execute(
            f"""
            WITH RECURSIVE apps(name) AS (
                (SELECT app_name FROM {table} ORDER BY app_name LIMIT 1)
                UNION ALL
                SELECT (SELECT app_name FROM {table} WHERE app_name > apps.name ORDER BY app_name LIMIT 1)
                FROM apps WHERE apps.name IS NOT NULL
            )
            SELECT name FROM apps WHERE name IS NOT NULL LIMIT %s
            """,
            [MAX_APPS],
        )
        return [name for (name,) in cursor.fetchall()]


def app_rows(now: datetime | None = None) -> list[AppRow]:
    """Every app with an agent, sessions or memories (up to ``MAX_APPS``), with its counts."""
    from runtime_app.agents import registered_apps  # here: it loads ADK, which loading the admin need not

    midnight = timezone.localtime(now or timezone.now()).replace(hour=0, minute=0, second=0, microsecond=0)
    names = sorted(
        {
            *registered_apps(),
            *(name for model in (Session, Memory, Corpus) for name in _skip_scan(model._meta.db_table)),
        }
    )
    return [
        AppRow(
            app_name=name,
            sessions=bounded_count(Session.objects.filter(app_name=name)),
            # Only sessions touched today can hold today's events: the listing index finds them.
            events_today=bounded_count(
                Event.objects.filter(
                    session__app_name=name,
                    session__last_update_time__gte=midnight.timestamp(),
                    timestamp__gte=midnight.timestamp(),
                )
            ),
            memories=bounded_count(Memory.objects.filter(app_name=name, status="active")),
            corpora=bounded_count(Corpus.objects.filter(app_name=name)),
            documents=bounded_count(Document.objects.filter(app_name=name)),
        )
        for name in names[:MAX_APPS]
    ]


def counts_by_state(queryset: QuerySet, states: list) -> dict[str, Count]:
    """``queryset``'s rows in each of ``states`` (its ``status``; an index on it keeps each count cheap)."""
    return {state.label: bounded_count(queryset.filter(status=state)) for state in states}


def job_counts() -> dict[str, Count]:
    """Consolidation jobs by the states a person acts on."""
    return counts_by_state(ConsolidationJob.objects.all(), JOB_STATES)


def recent_failures() -> list[ConsolidationJob]:
    return list(ConsolidationJob.objects.filter(status=JobStatus.FAILED).order_by("-finished_at")[:FAILURES_SHOWN])


DOCUMENT_STATES = [DocumentStatus.PENDING, DocumentStatus.RUNNING, DocumentStatus.FAILED]


def document_counts() -> dict[str, Count]:
    """Documents being indexed, waiting, or failed (the documents' status index)."""
    return counts_by_state(Document.objects.all(), DOCUMENT_STATES)


def failed_documents() -> list[Document]:
    return list(
        Document.objects.filter(status=DocumentStatus.FAILED).defer("content").order_by("-updated_at")[:FAILURES_SHOWN]
    )


def failing_traces(within: timedelta = timedelta(days=7)) -> list[Trace]:
    """The last runs that ended in an error (the traces' status index), within a week."""
    since = timezone.now() - within
    return list(Trace.objects.filter(status=Status.ERROR, start_time__gte=since).order_by("-start_time")[:10])


@dataclass(frozen=True)
class Process:
    role: str
    host: str
    pid: int
    alive: bool
    seen_ago: str


def processes() -> tuple[list[Process], str]:
    """The workers and beats heard from, and what is missing or wrong, said in a sentence ('' if all is well)."""
    try:
        beats = heartbeat.read()
    except Exception as error:  # Redis is down: nothing can say whether they run
        return [], f"Redis does not answer ({error.__class__.__name__}): workers and beat cannot be seen."
    now = time.time()
    shown = [Process(b.role, b.host, b.pid, b.alive, _ago(now - b.seen_at)) for b in beats]
    missing = [role for role in ("worker", "beat") if not any(p.alive and p.role == role for p in shown)]
    if not missing:
        return shown, ""
    hints = {
        "worker": "consolidation jobs wait",
        "beat": "scheduled jobs and forgetting wait (workers still "
        f"recover lost jobs every {settings.COGNIZES_JOB_RECOVERY_SECONDS:g} s)",
    }
    return shown, "; ".join(f"no {role} is running: {hints[role]}" for role in missing).capitalize() + "."


def _ago(seconds: float) -> str:
    for size, unit in ((86400, "d"), (3600, "h"), (60, "min")):
        if seconds >= size:
            return f"{seconds // size:.0f} {unit} ago"
    return f"{max(seconds, 0):.0f} s ago"
