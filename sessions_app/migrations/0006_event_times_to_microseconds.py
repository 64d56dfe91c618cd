"""Round the stored event times to the microsecond, the one precision they are now stored and compared at.

Rows written before kept the event's exact float, which a filter at that event's own RFC 3339 time missed whenever
the float rounded up (issue 43 item 11). The arithmetic is ``sessions_app.services.to_microseconds``' (and
``datetime.fromtimestamp``'s): the fraction times 10^6 rounded to even (``round`` on float8 is ``rint``), added to
the whole seconds in microseconds (exact integers), divided once by 10^6.
"""

from django.db import migrations, models

_ROUND = "(floor(timestamp) * 1000000 + round((timestamp - floor(timestamp)) * 1000000)) / 1000000"


class Migration(migrations.Migration):
    dependencies = [
        ("sessions_app", "0005_raw_event"),
    ]

    operations = [
        migrations.RunSQL(
            f"UPDATE events SET timestamp = {_ROUND} WHERE timestamp <> {_ROUND}",
            reverse_sql=migrations.RunSQL.noop,  # the exact floats are gone; the rounded ones serve the old code too
        ),
        migrations.AlterField(
            model_name="event",
            name="timestamp",
            field=models.FloatField(
                help_text="Epoch seconds of the event to the microsecond, as filters compare it (its exact float is in "
                "data)."
            ),
        ),
    ]
