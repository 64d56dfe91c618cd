"""Chunks keep their ``search_vector`` and ``embedding`` in the row (storage MAIN) instead of in the TOAST table.

A chunk's row (text, search text, tsvector, each about a kilobyte, and a 1.5 kB vector) is past PostgreSQL's
2 kB threshold, so its two largest columns lived in ``pg_toast``, and every read of them was a lookup there
(about four buffers): the keyword list reads a matching chunk's tsvector once per query lexeme
(``cognizes.infra.hybrid_search.keyword_ranks``), and an exact scan of a corpus reads every chunk's vector. With MAIN
the text columns move out instead (they are read for the results only). On bench/knowledge_scale.py
(``--chunks 300000 --corpora 60``, two loads of the same data): a keyword list over the 9,500 chunks a query
matched in a 55,000-chunk corpus 3x faster with the tsvector in the row; vector search p95 7.2 / 35.2 / 10.4 ms
→ 3.7 / 15.6 / 8.8 ms and hybrid 8.8 / 39.1 / 66.8 → 5.7 / 22.6 / 71.7 ms (small / medium / large corpora)
with the vector in the row too, for 12% more space (2.15 → 2.42 GB). Rows stored before keep their columns out
of line until rewritten (``VACUUM FULL knowledge_chunks``): this changes only where new rows put them, so it
takes no time on a large table.
"""

from django.db import migrations


class Migration(migrations.Migration):
    dependencies = [("knowledge_app", "0004_imports")]

    operations = [
        migrations.RunSQL(
            "ALTER TABLE knowledge_chunks ALTER COLUMN search_vector SET STORAGE MAIN",
            "ALTER TABLE knowledge_chunks ALTER COLUMN search_vector SET STORAGE EXTENDED",
        ),
        migrations.RunSQL(
            "ALTER TABLE knowledge_chunks ALTER COLUMN embedding SET STORAGE MAIN",
            "ALTER TABLE knowledge_chunks ALTER COLUMN embedding SET STORAGE EXTERNAL",
        ),
    ]
