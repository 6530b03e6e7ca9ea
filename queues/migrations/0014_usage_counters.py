"""Admitted-usage counters per LocalQueue, ClusterQueue and resource, filled from the rows.

It also drops the workloads' three single-column foreign-key indexes, which the composite
indexes already lead with: a state change rewrites every index of the row. The backfill sums
the resource rows of every admitted workload (the join the usage sample ran before); from then
on the transitions keep the counters (queues/services/usage_counters.py).
"""

import django.db.models.deletion
from django.db import migrations, models

BACKFILL = """
INSERT INTO queues_admittedusage (local_queue_id, cluster_queue_id, resource, amount, workloads)
SELECT w.local_queue_id, w.cluster_queue_id, r.resource, SUM(r.amount), COUNT(*)
  FROM queues_workload w JOIN queues_workloadresource r ON r.workload_id = w.id
 WHERE w.state = 'Admitted'
 GROUP BY w.local_queue_id, w.cluster_queue_id, r.resource
"""


def leave_room_for_updates(apps: object, schema_editor: object) -> None:
    """PostgreSQL: half of each page free, so a counter's update stays on its page (a HOT
    update: no index entry written). Every transition rewrites many counter rows."""
    if schema_editor.connection.vendor == "postgresql":  # type: ignore[attr-defined]
        schema_editor.execute("ALTER TABLE queues_admittedusage SET (fillfactor = 50)")  # type: ignore[attr-defined]


class Migration(migrations.Migration):
    dependencies = [
        ("queues", "0013_priority_class_policy"),
    ]

    operations = [
        migrations.CreateModel(
            name="AdmittedUsage",
            fields=[
                ("id", models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name="ID")),
                ("resource", models.CharField(max_length=253)),
                (
                    "amount",
                    models.BigIntegerField(default=0, help_text="Millis of the resource held by admitted workloads"),
                ),
                ("workloads", models.IntegerField(default=0, help_text="Admitted workloads that request the resource")),
                (
                    "cluster_queue",
                    models.ForeignKey(
                        blank=True,
                        db_index=False,
                        null=True,
                        on_delete=django.db.models.deletion.CASCADE,
                        related_name="+",
                        to="queues.clusterqueue",
                    ),
                ),
                (
                    "local_queue",
                    models.ForeignKey(
                        db_index=False,
                        on_delete=django.db.models.deletion.CASCADE,
                        related_name="+",
                        to="queues.localqueue",
                    ),
                ),
            ],
            options={
                "ordering": ["local_queue_id", "cluster_queue_id", "resource"],
                "constraints": [
                    models.UniqueConstraint(
                        fields=("local_queue", "cluster_queue", "resource"), name="admitted_usage_key"
                    )
                ],
            },
        ),
        migrations.RunPython(leave_room_for_updates, migrations.RunPython.noop),
        # The composite indexes lead with each of these keys; every state change rewrote three
        # more indexes for nothing.
        migrations.AlterField(
            model_name="workload",
            name="cluster_queue",
            field=models.ForeignKey(
                blank=True,
                db_index=False,
                help_text="Where it is admitted (the LocalQueue's ClusterQueue at admission time)",
                null=True,
                on_delete=django.db.models.deletion.PROTECT,
                related_name="admitted_workloads",
                to="queues.clusterqueue",
            ),
        ),
        migrations.AlterField(
            model_name="workload",
            name="local_queue",
            field=models.ForeignKey(
                db_index=False,
                on_delete=django.db.models.deletion.PROTECT,
                related_name="workloads",
                to="queues.localqueue",
            ),
        ),
        migrations.AlterField(
            model_name="workload",
            name="namespace",
            field=models.ForeignKey(
                db_index=False,
                on_delete=django.db.models.deletion.PROTECT,
                related_name="workloads",
                to="queues.namespace",
            ),
        ),
        migrations.RunSQL(
            sql=BACKFILL,
            reverse_sql=migrations.RunSQL.noop,
        ),
    ]
