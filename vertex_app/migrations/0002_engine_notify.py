"""Notify channel ``cognizes_vertex_engines`` when engines change (vertex_app.services forgets them).

As access's ``api_keys_notify``: a statement-level trigger, so every writer (the admin's delete,
plain SQL, another host) is heard. Inserts need no notice: only engines found are remembered.
"""

from django.db import migrations

CREATE = """
CREATE FUNCTION cognizes_notify_vertex_engines() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    PERFORM pg_notify('cognizes_vertex_engines', '');
    RETURN NULL;
END
$$;
CREATE TRIGGER vertex_engines_notify
    AFTER UPDATE OR DELETE OR TRUNCATE ON vertex_engines
    FOR EACH STATEMENT EXECUTE FUNCTION cognizes_notify_vertex_engines();
"""

DROP = """
DROP TRIGGER IF EXISTS vertex_engines_notify ON vertex_engines;
DROP FUNCTION IF EXISTS cognizes_notify_vertex_engines();
"""


class Migration(migrations.Migration):
    dependencies = [("vertex_app", "0001_initial")]

    operations = [migrations.RunSQL(CREATE, DROP)]
