"""A memory's context (what it answers or continues), searched with it but never shown."""

from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [("memory_app", "0012_validity")]

    operations = [
        migrations.AddField(
            model_name="memory",
            name="context",
            field=models.TextField(
                blank=True, help_text="What it answers or continues (e.g. the turn before it): searched with it, not shown."
            ),
        ),
        migrations.AlterField(
            model_name="memory",
            name="search_text",
            field=models.TextField(blank=True, help_text="The text and its context as the keyword search sees them."),
        ),
    ]
