"""Owned apps (issue 45 item 2), and the notify channel ``cognizes_owned_apps`` (cognizes/access/ownership.py forgets
what it remembered when a row changes or goes; inserts need no notice, as only owners found are remembered)."""

from django.db import migrations, models

CREATE = """
CREATE FUNCTION cognizes_notify_owned_apps() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    PERFORM pg_notify('cognizes_owned_apps', '');
    RETURN NULL;
END
$$;
CREATE TRIGGER owned_apps_notify
    AFTER UPDATE OR DELETE OR TRUNCATE ON owned_apps
    FOR EACH STATEMENT EXECUTE FUNCTION cognizes_notify_owned_apps();
"""

DROP = """
DROP TRIGGER IF EXISTS owned_apps_notify ON owned_apps;
DROP FUNCTION IF EXISTS cognizes_notify_owned_apps();
"""


class Migration(migrations.Migration):
    dependencies = [("access", "0002_api_key_notify")]

    operations = [
        migrations.CreateModel(
            name="OwnedApp",
            fields=[
                ("id", models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name="ID")),
                ("app_name", models.CharField(help_text="The app that was made.", max_length=128, unique=True)),
                (
                    "owner_app",
                    models.CharField(
                        db_index=True,
                        help_text="The app whose key made it, and whose keys reach it.",
                        max_length=128,
                    ),
                ),
                ("created_at", models.DateTimeField(auto_now_add=True)),
            ],
            options={
                "verbose_name": "app made by another app",
                "verbose_name_plural": "apps made by other apps",
                "db_table": "owned_apps",
            },
        ),
        migrations.RunSQL(CREATE, DROP),
    ]
