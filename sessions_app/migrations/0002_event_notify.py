"""Notify channel ``cognizes_events`` with "<session pk>:<version>" when an event is stored,
and with "<session pk>:deleted" when a session is deleted (its followers stop).

A trigger rather than application code, so every writer (ADK service, API, admin,
another process, plain SQL) is heard by the live views (sessions_app/live.py).
PostgreSQL delivers the notification when the inserting transaction commits.
"""

from django.db import migrations

CREATE = """
CREATE FUNCTION cognizes_notify_event() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    PERFORM pg_notify('cognizes_events', NEW.session_id::text || ':' || NEW.version::text);
    RETURN NULL;
END
$$;
CREATE TRIGGER events_notify AFTER INSERT ON events
    FOR EACH ROW EXECUTE FUNCTION cognizes_notify_event();
CREATE FUNCTION cognizes_notify_session_deleted() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    PERFORM pg_notify('cognizes_events', OLD.id::text || ':deleted');
    RETURN NULL;
END
$$;
CREATE TRIGGER sessions_notify_deleted AFTER DELETE ON sessions
    FOR EACH ROW EXECUTE FUNCTION cognizes_notify_session_deleted();
"""

DROP = """
DROP TRIGGER IF EXISTS sessions_notify_deleted ON sessions;
DROP FUNCTION IF EXISTS cognizes_notify_session_deleted();
DROP TRIGGER IF EXISTS events_notify ON events;
DROP FUNCTION IF EXISTS cognizes_notify_event();
"""


class Migration(migrations.Migration):
    dependencies = [("sessions_app", "0001_initial")]

    operations = [migrations.RunSQL(CREATE, DROP)]
