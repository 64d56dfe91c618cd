"""Chunks keep their ``search_vector`` in the row (storage MAIN) instead of in the TOAST table.

A chunk's row (text, search text, tsvector, each about a kilobyte) is past PostgreSQL's 2 kB threshold, so
the tsvector, its largest column, went out of line; the keyword list reads it once per query lexeme
(``infra.hybrid_search.keyword_ranks``), and each read fetched and decompressed it from ``pg_toast`` again:
four buffers a read. With MAIN the text columns move out first (they are read only for the results). On
bench/knowledge_scale.py's corpus of 55,000 chunks, a keyword list over the 9,500 chunks a query matched
took 5.1x less time than over the same rows stored before. Rows stored before keep their vectors out of line
until rewritten (``VACUUM FULL knowledge_chunks``): this changes only where new rows put them, so it takes
no time on a large table.
"""

from django.db import migrations


class Migration(migrations.Migration):
    dependencies = [("knowledge_app", "0004_imports")]

    operations = [
        migrations.RunSQL(
            "ALTER TABLE knowledge_chunks ALTER COLUMN search_vector SET STORAGE MAIN",
            "ALTER TABLE knowledge_chunks ALTER COLUMN search_vector SET STORAGE EXTENDED",
        ),
    ]
