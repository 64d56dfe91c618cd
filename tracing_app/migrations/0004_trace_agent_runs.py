"""The trace list leads with agent runs (issue 43): each trace says which agent ran in it and which tools it called.

Traces stored before are filled from their spans, by the same rule the exporter's refresh applies. The index of
agent runs is built concurrently: traces are written while it builds.
"""

from django.contrib.postgres.operations import AddIndexConcurrently
from django.db import migrations, models
from django.db.models import Q

BACKFILL = """
UPDATE traces AS t SET agent_name = agg.agent_name, tool_calls = agg.tool_calls
FROM (
    SELECT
        s.trace_id,
        left(COALESCE(
            (array_agg(s.attributes ->> 'gen_ai.agent.name' ORDER BY s.start_time)
                FILTER (WHERE s.attributes ->> 'gen_ai.operation.name' = 'invoke_agent'
                        AND s.attributes ? 'gen_ai.agent.name'))[1],
            ''
        ), 255) AS agent_name,
        COALESCE(
            jsonb_agg(s.attributes -> 'gen_ai.tool.name' ORDER BY s.start_time)
                FILTER (WHERE starts_with(s.name, 'execute_tool ') AND s.attributes ? 'gen_ai.tool.name'
                        AND s.attributes ->> 'gen_ai.tool.name' <> '(merged tools)'),
            '[]'::jsonb
        ) AS tool_calls
    FROM spans AS s
    GROUP BY s.trace_id
) AS agg
WHERE t.trace_id = agg.trace_id
"""


class Migration(migrations.Migration):
    atomic = False

    dependencies = [
        ("tracing_app", "0003_trace_status_ok"),
    ]

    operations = [
        migrations.AddField(
            model_name="trace",
            name="agent_name",
            field=models.CharField(
                blank=True,
                help_text="The agent invoked (gen_ai.agent.name of the first invoke_agent span); empty for a trace "
                "of protocol plumbing alone (MCP, A2A, HTTP), in which no agent ran.",
                max_length=255,
                verbose_name="agent",
            ),
        ),
        migrations.AddField(
            model_name="trace",
            name="tool_calls",
            field=models.JSONField(
                blank=True,
                default=list,
                help_text="The names of the tools the run called, in order (one per execute_tool span).",
                verbose_name="tool calls",
            ),
        ),
        migrations.RunSQL(BACKFILL, migrations.RunSQL.noop),
        AddIndexConcurrently(
            model_name="trace",
            index=models.Index(
                condition=~Q(agent_name=""), fields=["-start_time"], name="traces_agent_runs_by_time"
            ),
        ),
    ]
