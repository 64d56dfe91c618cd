"""Memories list every session they came from (deleting a session takes only its source away)."""

import django.contrib.postgres.fields
from django.db import migrations, models

BACKFILL = (
    "UPDATE memories SET source_session_ids = ARRAY[source_session_id] "
    "WHERE source_session_id <> '' AND source_session_ids = '{}'"
)


class Migration(migrations.Migration):

    dependencies = [
        ('memory_app', '0010_job_lease'),
    ]

    operations = [
        migrations.AddField(
            model_name='memory',
            name='source_session_ids',
            field=django.contrib.postgres.fields.ArrayField(base_field=models.CharField(max_length=128), blank=True, default=list, help_text='Every session it came from: deleting one of them takes only that source away.', size=None),
        ),
        migrations.AlterField(
            model_name='memory',
            name='source_session_id',
            field=models.CharField(blank=True, help_text='The session it came from first.', max_length=128),
        ),
        migrations.RunSQL(BACKFILL, migrations.RunSQL.noop),
    ]
