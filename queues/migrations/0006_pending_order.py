"""Queue positions move off the workload rows into one order list per ClusterQueue (issue 12)."""

import django.db.models.deletion
from django.db import migrations, models

_VIEW = {
    "postgresql": (
        "CREATE VIEW queues_pendingposition AS "
        "SELECT (e.value)::bigint AS workload_id, o.cluster_queue_id, e.ordinality::integer AS position "
        "FROM queues_pendingorder o "
        "CROSS JOIN LATERAL jsonb_array_elements_text(o.workload_ids) WITH ORDINALITY AS e(value, ordinality)"
    ),
    "sqlite": (
        "CREATE VIEW queues_pendingposition AS "
        "SELECT CAST(e.value AS INTEGER) AS workload_id, o.cluster_queue_id, e.key + 1 AS position "
        "FROM queues_pendingorder o, json_each(o.workload_ids) e"
    ),
}


def create_view(apps, schema_editor):
    schema_editor.execute(_VIEW[schema_editor.connection.vendor])


def drop_view(apps, schema_editor):
    schema_editor.execute("DROP VIEW IF EXISTS queues_pendingposition")


class Migration(migrations.Migration):
    dependencies = [("queues", "0005_api_simulation_runs")]

    operations = [
        migrations.RemoveField(model_name="workload", name="queue_position"),
        migrations.AlterField(
            model_name="workload",
            name="wall_time_seconds",
            field=models.PositiveIntegerField(
                default=0,
                help_text="Of the current admission once it ended; while admitted, derived on read from admitted_at",
            ),
        ),
        migrations.CreateModel(
            name="PendingOrder",
            fields=[
                (
                    "cluster_queue",
                    models.OneToOneField(
                        on_delete=django.db.models.deletion.CASCADE,
                        primary_key=True,
                        related_name="pending_order",
                        serialize=False,
                        to="queues.clusterqueue",
                    ),
                ),
                ("workload_ids", models.JSONField(default=list, help_text="Workload ids, first in line first")),
                ("planned_at", models.DateTimeField(help_text="When the pass that wrote this order planned")),
            ],
            options={"ordering": ["cluster_queue_id"]},
        ),
        migrations.CreateModel(
            name="PendingPosition",
            fields=[
                (
                    "workload",
                    models.OneToOneField(
                        db_constraint=False,
                        on_delete=django.db.models.deletion.DO_NOTHING,
                        primary_key=True,
                        related_name="pending_position",
                        serialize=False,
                        to="queues.workload",
                    ),
                ),
                ("position", models.PositiveIntegerField()),
                (
                    "cluster_queue",
                    models.ForeignKey(
                        db_constraint=False,
                        on_delete=django.db.models.deletion.DO_NOTHING,
                        related_name="+",
                        to="queues.clusterqueue",
                    ),
                ),
            ],
            options={"db_table": "queues_pendingposition", "managed": False},
        ),
        migrations.RunPython(create_view, drop_view),
    ]
