"""Memories hold from ``valid_from`` until ``valid_until``: point-in-time search (``as_of``).

Existing memories hold from when what they remember happened (else when they were
stored); superseded ones until what replaced them happened (else their last change).
"""

import django.utils.timezone
from django.db import migrations, models

BACKFILL = """
UPDATE memories SET valid_from = coalesce(event_time, created_at);
UPDATE memories m SET valid_until = greatest(coalesce(n.event_time, n.created_at), m.valid_from)
FROM memories n WHERE m.status = 'superseded' AND m.superseded_by_id = n.id;
UPDATE memories SET valid_until = greatest(updated_at, valid_from) WHERE status = 'superseded' AND valid_until IS NULL;
"""


class Migration(migrations.Migration):
    dependencies = [("memory_app", "0011_memory_source_sessions")]

    operations = [
        migrations.AddField(
            model_name="memory",
            name="valid_from",
            field=models.DateTimeField(
                default=django.utils.timezone.now,
                help_text="From when it holds: when what it remembers happened, else when it was stored.",
            ),
        ),
        migrations.AddField(
            model_name="memory",
            name="valid_until",
            field=models.DateTimeField(
                blank=True, null=True,
                help_text="Until when it held: set when a newer memory superseded it; empty while it holds.",
            ),
        ),
        migrations.RunSQL(BACKFILL, migrations.RunSQL.noop),
    ]
