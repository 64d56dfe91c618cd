"""Structured profiles (issue 45 item 1): a memory's type and structured content, a revision's structured data,
the structured memory configs of an app's memory bank config, and the profile fields' admin (a proxy).

The type has a database default, so rows written outside the ORM (an import's COPY, benchmarks) are statements.
"""

from django.db import migrations, models


class Migration(migrations.Migration):

    dependencies = [
        ('memory_app', '0019_bank_customizations_per_scope'),
    ]

    operations = [
        migrations.CreateModel(
            name='ProfileField',
            fields=[
            ],
            options={
                'verbose_name': 'profile field',
                'proxy': True,
                'indexes': [],
                'constraints': [],
            },
            bases=('memory_app.memory',),
        ),
        migrations.AddField(
            model_name='memory',
            name='memory_type',
            field=models.CharField(choices=[('natural_language', 'natural language'), ('structured_profile', 'structured profile field')], db_default='natural_language', default='natural_language', help_text='A natural-language statement, or one field of a structured profile (memory_app.profiles).', max_length=32),
        ),
        migrations.AddField(
            model_name='memory',
            name='structured_content',
            field=models.JSONField(blank=True, help_text='A profile field\'s value: {"schema_id": "user-profile", "data": {"city": "Lyon"}}; empty for statements.', null=True),
        ),
        migrations.AddField(
            model_name='memorybankconfig',
            name='structured_memory_configs',
            field=models.JSONField(blank=True, default=list, help_text='Structured profiles (Vertex\'s structuredMemoryConfigs), checked by memory_app.profile_schema: [{"scope_keys": ["user_id"], "schema_configs": [{"id": "user-profile", "memory_type": "STRUCTURED_PROFILE", "schema": {"type": "OBJECT", "properties": {"city": {"type": "STRING"}}}}]}].'),
        ),
        migrations.AddField(
            model_name='memoryrevision',
            name='structured_data',
            field=models.JSONField(blank=True, help_text="A profile field's data after the change (Vertex's structuredData).", null=True),
        ),
    ]
