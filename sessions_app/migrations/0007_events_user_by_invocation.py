"""The user's event of a run, by session and invocation id: the admin's trace list shows what the user asked beside
each agent run (issue 43), one lookup per row; without it each row scanned the events table.

Built concurrently: events are written while it builds.
"""

from django.contrib.postgres.operations import AddIndexConcurrently
from django.db import migrations, models


class Migration(migrations.Migration):
    atomic = False

    dependencies = [("sessions_app", "0006_event_times_to_microseconds")]

    operations = [
        AddIndexConcurrently(
            model_name="event",
            index=models.Index(
                condition=models.Q(author="user"), fields=["session", "invocation_id"], name="events_user_by_invocation"
            ),
        ),
    ]
