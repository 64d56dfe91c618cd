"""Each app's turn in the indexing queue (issue 41 J1): workers share themselves fairly between apps."""

from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [("knowledge_app", "0007_memory_files_owned")]

    operations = [
        migrations.CreateModel(
            name="IndexingTurn",
            fields=[
                ("id", models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name="ID")),
                ("app_name", models.CharField(max_length=128, unique=True)),
                ("served_at", models.DateTimeField(
                    help_text="When a worker last claimed one of this app's documents.")),
            ],
            options={"db_table": "knowledge_indexing_turns"},
        ),
    ]
