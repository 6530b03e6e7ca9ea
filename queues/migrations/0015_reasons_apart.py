"""Pending reasons leave the workload row for their own narrow table (``WorkloadReason``).

The reasons of pending workloads move across as they are (each with its own sentence); the next
pass explains the later waiting workloads of a long queue by reference to its head. Reversed,
every pending workload gets its rendered sentence back on its row.
"""

from importlib import import_module

import django.db.models.deletion
from django.db import migrations, models

# SQLite rebuilds a table to add or drop a column, which it refuses while a view reads it: the
# PendingPosition view over the queue order is dropped first and made again last.
_order_view = import_module("queues.migrations.0006_pending_order")


def move_reasons_apart(apps, schema_editor):
    workload = apps.get_model("queues", "Workload")._meta.db_table
    reason = apps.get_model("queues", "WorkloadReason")._meta.db_table
    schema_editor.execute(
        f"INSERT INTO {reason} (workload_id, code, message, behind_id) "
        f"SELECT id, pending_reason_code, pending_reason_message, NULL FROM {workload} "
        "WHERE state = 'Pending' AND (pending_reason_code <> '' OR pending_reason_message <> '')"
    )


def move_reasons_back(apps, schema_editor):
    workload = apps.get_model("queues", "Workload")._meta.db_table
    reason = apps.get_model("queues", "WorkloadReason")._meta.db_table
    order = apps.get_model("queues", "PendingOrder")._meta.db_table
    schema_editor.execute(
        f"UPDATE {workload} SET "
        f"pending_reason_code = COALESCE((SELECT r.code FROM {reason} r WHERE r.workload_id = {workload}.id), ''), "
        "pending_reason_message = COALESCE(("
        "SELECT CASE WHEN r.behind_id IS NULL THEN r.message ELSE COALESCE(o.by_reference, '') END "
        f"FROM {reason} r LEFT JOIN {order} o ON o.cluster_queue_id = r.behind_id "
        f"WHERE r.workload_id = {workload}.id), '') "
        "WHERE state = 'Pending'"
    )


class Migration(migrations.Migration):
    dependencies = [
        ("queues", "0014_usage_counters"),
    ]

    operations = [
        migrations.RunPython(_order_view.drop_view, _order_view.create_view),
        migrations.AddField(
            model_name="pendingorder",
            name="by_reference",
            field=models.TextField(
                blank=True,
                default="",
                help_text="The reason of the waiting workloads explained by reference to the queue's head",
            ),
        ),
        migrations.CreateModel(
            name="WorkloadReason",
            fields=[
                (
                    "workload",
                    models.OneToOneField(
                        on_delete=django.db.models.deletion.CASCADE,
                        primary_key=True,
                        related_name="reason",
                        serialize=False,
                        to="queues.workload",
                    ),
                ),
                (
                    "code",
                    models.CharField(blank=True, help_text="Machine-readable, e.g. InsufficientQuota", max_length=40),
                ),
                (
                    "message",
                    models.TextField(blank=True, help_text="The sentence; empty when explained by reference (behind)"),
                ),
                (
                    "behind",
                    models.ForeignKey(
                        blank=True,
                        db_constraint=False,
                        help_text="Explained by reference to the head of this ClusterQueue's order",
                        null=True,
                        on_delete=django.db.models.deletion.DO_NOTHING,
                        related_name="+",
                        to="queues.pendingorder",
                    ),
                ),
            ],
            options={
                "ordering": ["workload_id"],
            },
        ),
        migrations.RunPython(move_reasons_apart, move_reasons_back),
        migrations.RemoveField(model_name="workload", name="pending_reason_code"),
        migrations.RemoveField(model_name="workload", name="pending_reason_message"),
        migrations.RunPython(_order_view.create_view, _order_view.drop_view),
    ]
