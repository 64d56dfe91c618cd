"""Memories keep their embedding in the row (storage MAIN) instead of in the TOAST table.

pgvector's type stores out of line (EXTERNAL), and a memory's row is just over PostgreSQL's
2 kB threshold, so every embedding lived in ``pg_toast`` and every distance computed in a scope
scan first looked it up there: about 3.5 buffers per memory instead of one. With MAIN the row's
text columns are compressed or moved out first and the 1.5 kB vector stays in line (moved out
only if nothing else makes the row fit). At 1,000,000 memories (bench/memory_scale.py, two
loads of the same data), this with 0015's covering index took the p95 of users holding 1,000 or
more memories from 44.7 to 21.4 ms for a vector search and 66.8 to 46.7 ms for a hybrid one, and
the exact searches the bench checks recall against from 105 s to 35 s. Rows stored before keep their
vectors out of line until rewritten (``VACUUM FULL memories``, or pg_repack without the lock):
this migration changes only where new rows put them, so it takes no time on a large table.
"""

from django.db import migrations


class Migration(migrations.Migration):
    dependencies = [("memory_app", "0015_memories_by_scope")]

    operations = [
        migrations.RunSQL(
            "ALTER TABLE memories ALTER COLUMN embedding SET STORAGE MAIN",
            "ALTER TABLE memories ALTER COLUMN embedding SET STORAGE EXTERNAL",
        ),
    ]
