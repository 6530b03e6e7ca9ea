"""Admitted and pending workload counters per LocalQueue (``WorkloadCount`` and its appended
changes, ``WorkloadCountChange``), filled from the rows.

The backfill counts the workloads per LocalQueue and state (the count the usage sample ran
before); from then on the paths that create workloads or change their state append changes
and the usage sample folds them (queues/services/usage_counters.py).
"""

import django.db.models.deletion
from django.db import migrations, models

BACKFILL = """
INSERT INTO queues_workloadcount (local_queue_id, admitted, pending)
SELECT local_queue_id, COUNT(*) FILTER (WHERE state = 'Admitted'), COUNT(*) FILTER (WHERE state = 'Pending')
  FROM queues_workload
 WHERE state IN ('Admitted', 'Pending')
 GROUP BY local_queue_id
"""


def leave_room_for_updates(apps: object, schema_editor: object) -> None:
    """PostgreSQL: half of each page free, so a fold's update of a count stays on its page (a
    HOT update: no index entry written), as for the admitted-usage counters."""
    if schema_editor.connection.vendor == "postgresql":  # type: ignore[attr-defined]
        schema_editor.execute("ALTER TABLE queues_workloadcount SET (fillfactor = 50)")  # type: ignore[attr-defined]


class Migration(migrations.Migration):
    dependencies = [
        ("queues", "0021_workload_command"),
    ]

    operations = [
        migrations.CreateModel(
            name="WorkloadCount",
            fields=[
                (
                    "local_queue",
                    models.OneToOneField(
                        on_delete=django.db.models.deletion.CASCADE,
                        primary_key=True,
                        related_name="+",
                        serialize=False,
                        to="queues.localqueue",
                    ),
                ),
                ("admitted", models.IntegerField(default=0, help_text="Workloads of the LocalQueue in state Admitted")),
                ("pending", models.IntegerField(default=0, help_text="Workloads of the LocalQueue in state Pending")),
            ],
            options={
                "ordering": ["local_queue_id"],
            },
        ),
        migrations.CreateModel(
            name="WorkloadCountChange",
            fields=[
                ("id", models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name="ID")),
                ("admitted", models.IntegerField(default=0)),
                ("pending", models.IntegerField(default=0)),
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
        ),
        migrations.RunPython(leave_room_for_updates, migrations.RunPython.noop),
        migrations.RunSQL(sql=BACKFILL, reverse_sql=migrations.RunSQL.noop),
    ]
