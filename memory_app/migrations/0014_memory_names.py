"""The names a memory mentions (memory_app.names), found for the memories stored before."""

import django.contrib.postgres.fields
from django.db import migrations, models

BATCH = 2000


def find_names(apps, schema_editor):
    from memory_app.names import names

    Memory = apps.get_model("memory_app", "Memory")
    batch = []
    for memory in Memory.objects.only("id", "text").iterator(chunk_size=BATCH):
        memory.names = names(memory.text)
        batch.append(memory)
        if len(batch) == BATCH:
            Memory.objects.bulk_update(batch, ["names"])
            batch = []
    Memory.objects.bulk_update(batch, ["names"])


class Migration(migrations.Migration):
    dependencies = [("memory_app", "0013_memory_context")]

    operations = [
        migrations.AddField(
            model_name="memory",
            name="names",
            field=django.contrib.postgres.fields.ArrayField(
                base_field=models.CharField(max_length=256), blank=True, default=list,
                help_text="The names its text mentions, casefolded (memory_app.names): a question naming them ranks it higher.",
                size=None,
            ),
        ),
        migrations.RunPython(find_names, migrations.RunPython.noop, elidable=True),
    ]
