"""The scope index covers what search's pass over a scope reads, so that pass reads no heap page.

Built concurrently before the old index goes: memories stay searchable and writable throughout.
"""

from django.contrib.postgres.operations import AddIndexConcurrently, RemoveIndexConcurrently
from django.db import migrations, models


class Migration(migrations.Migration):
    atomic = False

    dependencies = [("memory_app", "0014_memory_names")]

    operations = [
        AddIndexConcurrently(
            model_name="memory",
            index=models.Index(
                fields=["app_name", "user_id", "status"], name="memories_by_scope",
                include=["extra_scope", "expires_at", "valid_from", "valid_until", "author", "event_time"],
            ),
        ),
        RemoveIndexConcurrently(model_name="memory", name="memories_scope"),
    ]
