"""Notify channel ``cognizes_api_keys`` when API keys change (cognizes/access/key_cache.py forgets them).

A statement-level trigger rather than application code, so every writer (the admin,
``revoke_api_key``, another host, plain SQL) is heard. Updates count only when they set
a column authentication reads: ``last_used_at``, written as keys are used, does not
empty every process's cache.
"""

from django.db import migrations

CREATE = """
CREATE FUNCTION cognizes_notify_api_keys() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    PERFORM pg_notify('cognizes_api_keys', '');
    RETURN NULL;
END
$$;
CREATE TRIGGER api_keys_notify
    AFTER UPDATE OF prefix, key_hash, app_name, user_id, read_only, revoked_at OR DELETE OR TRUNCATE ON api_keys
    FOR EACH STATEMENT EXECUTE FUNCTION cognizes_notify_api_keys();
"""

DROP = """
DROP TRIGGER IF EXISTS api_keys_notify ON api_keys;
DROP FUNCTION IF EXISTS cognizes_notify_api_keys();
"""


class Migration(migrations.Migration):
    dependencies = [("access", "0001_initial")]

    operations = [migrations.RunSQL(CREATE, DROP)]
