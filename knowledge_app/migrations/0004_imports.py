"""Imports (ragFiles:import): a record per import, with the documents it added, recovered like documents."""

import django.db.models.deletion
from django.db import migrations, models


class Migration(migrations.Migration):

    dependencies = [
        ('knowledge_app', '0003_document_metadata'),
    ]

    operations = [
        migrations.CreateModel(
            name='Import',
            fields=[
                ('id', models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name='ID')),
                ('app_name', models.CharField(max_length=128)),
                ('uris', models.JSONField(default=list, help_text='The gs:// and file:// URIs asked for, as given.')),
                ('chunk_size', models.PositiveIntegerField(blank=True, help_text="Asked for; else the corpus's.", null=True)),
                ('chunk_overlap', models.PositiveIntegerField(blank=True, help_text="Asked for; else the corpus's.", null=True)),
                ('status', models.CharField(choices=[('pending', 'pending'), ('running', 'running'), ('added', 'added'), ('failed', 'failed')], default='pending', max_length=16)),
                ('files_found', models.PositiveIntegerField(default=0, help_text='Files under the URIs (known once running).')),
                ('added_count', models.PositiveIntegerField(default=0, help_text='Files that became new documents.')),
                ('skipped_count', models.PositiveIntegerField(default=0, help_text='Files whose bytes were in the corpus already (the same content hash).')),
                ('refused_count', models.PositiveIntegerField(default=0, help_text='Files that could not be added (unreadable, empty, too large, outside the root).')),
                ('failures', models.JSONField(blank=True, default=list, help_text='The first refused files, with why.')),
                ('error', models.TextField(blank=True, help_text='Why the import could not run at all.')),
                ('attempts', models.PositiveIntegerField(default=0)),
                ('lease_until', models.DateTimeField(blank=True, help_text='A running import not renewed by then is presumed lost (worker killed) and run again.', null=True)),
                ('created_at', models.DateTimeField(auto_now_add=True)),
                ('updated_at', models.DateTimeField(auto_now=True)),
                ('finished_at', models.DateTimeField(blank=True, help_text='When its files were all added (or it failed).', null=True)),
                ('corpus', models.ForeignKey(on_delete=django.db.models.deletion.CASCADE, related_name='imports', to='knowledge_app.corpus')),
                ('documents', models.ManyToManyField(blank=True, db_table='knowledge_import_documents', help_text='The documents this import added: it is done when all are indexed (or failed).', related_name='imports', to='knowledge_app.document')),
            ],
            options={
                'db_table': 'knowledge_imports',
                'indexes': [models.Index(fields=['app_name', 'corpus', 'id'], name='imports_by_corpus'), models.Index(fields=['status', 'lease_until'], name='imports_by_status')],
            },
        ),
    ]
