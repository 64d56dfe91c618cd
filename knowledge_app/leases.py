"""The leased rows of knowledge_app: documents to index and imports to run (``cognizes.infra.jobs``).

Each is ``running`` under one worker's lease while it runs, the lease renewed while the work goes on however long
it takes (a 117-page PDF embedded for longer than its lease was once taken over by a second worker, three times,
then failed: issue 41 J1); a worker killed mid-run leaves a lease that runs out, and recovery sends the row again.
A row whose worker was lost ``MAX_ATTEMPTS`` times fails, saying so, rather than running for ever.
"""

from __future__ import annotations

from datetime import timedelta

from django.conf import settings

from cognizes.infra.jobs import LeasedJobs
from knowledge_app.models import Document, DocumentStatus, Import, ImportStatus

MAX_ATTEMPTS = 3


def lease() -> timedelta:
    """How long a claim holds: a running row not renewed by then is presumed lost."""
    return timedelta(seconds=settings.COGNIZES_KNOWLEDGE_LEASE_SECONDS)


DOCUMENTS = LeasedJobs(
    Document,
    waiting=(DocumentStatus.PENDING,),
    running=DocumentStatus.RUNNING,
    failed=DocumentStatus.FAILED,
    lease=lease,
    max_attempts=MAX_ATTEMPTS,
    claimed_at="served_at",  # a pause for another's turn, or new content, sets its attempts back to 0
)
IMPORTS = LeasedJobs(
    Import,
    waiting=(ImportStatus.PENDING,),
    running=ImportStatus.RUNNING,
    failed=ImportStatus.FAILED,
    lease=lease,
    max_attempts=MAX_ATTEMPTS,
)
