"""The scope index also covers ``names``: search's first pass counts how many of a scope's memories carry
each name a question mentions (a name nearly all of them carry is a speaker's, and leaves the query's
embedding), still reading no heap page.

Built concurrently under a new name before the old index goes: memories stay searchable and writable.
"""

from django.contrib.postgres.operations import AddIndexConcurrently, RemoveIndexConcurrently
from django.db import migrations, models


class Migration(migrations.Migration):
    atomic = False

    dependencies = [("memory_app", "0016_embedding_inline")]

    operations = [
        AddIndexConcurrently(
            model_name="memory",
            index=models.Index(
                fields=["app_name", "user_id", "status"], name="memories_by_scope_names",
                include=["extra_scope", "expires_at", "valid_from", "valid_until", "author", "event_time", "names"],
            ),
        ),
        RemoveIndexConcurrently(model_name="memory", name="memories_by_scope"),
    ]
