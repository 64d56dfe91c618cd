"""Jobs by state, newest finish first: the admin's overview counts queued, running and failed jobs and
lists the last failures from this index instead of scanning every job.

Built concurrently: jobs are written while it builds.
"""

from django.contrib.postgres.operations import AddIndexConcurrently
from django.db import migrations, models


class Migration(migrations.Migration):
    atomic = False

    dependencies = [("memory_app", "0017_scope_index_names")]

    operations = [
        AddIndexConcurrently(
            model_name="consolidationjob",
            index=models.Index(fields=["status", "-finished_at"], name="jobs_by_status"),
        ),
    ]
