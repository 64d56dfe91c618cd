"""A run whose spans ended without an error is 'ok', not OpenTelemetry's 'unset' (the admin showed 'unset')."""

from django.db import migrations, models


class Migration(migrations.Migration):

    dependencies = [
        ('tracing_app', '0002_retention_schedule'),
    ]

    operations = [
        migrations.AlterField(
            model_name='trace',
            name='status',
            field=models.CharField(choices=[('unset', 'unset'), ('ok', 'ok'), ('error', 'error')], default='ok', help_text="'error' if any span failed, else 'ok'.", max_length=8),
        ),
        migrations.RunSQL("UPDATE traces SET status = 'ok' WHERE status = 'unset'", migrations.RunSQL.noop),
    ]
