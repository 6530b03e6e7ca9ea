"""Every short resource of a pending reason, stored beside its sentence (``WorkloadReason.shortages``)
and the queue head's for the workloads explained by reference (``PendingOrder.by_reference_shortages``)."""

from importlib import import_module

from django.db import migrations, models

# SQLite rebuilds a table to add a column, which it refuses while a view reads it: the
# PendingPosition view over the queue order is dropped first and made again last (as 0015 does).
_order_view = import_module("queues.migrations.0006_pending_order")


class Migration(migrations.Migration):
    dependencies = [
        ("queues", "0016_quantity_notation"),
    ]

    operations = [
        migrations.RunPython(_order_view.drop_view, _order_view.create_view),
        migrations.AddField(
            model_name="pendingorder",
            name="by_reference_shortages",
            field=models.JSONField(
                blank=True,
                default=list,
                help_text="The short resources that reason names (the head's), as WorkloadReason.shortages",
            ),
        ),
        migrations.AddField(
            model_name="workloadreason",
            name="shortages",
            field=models.JSONField(
                blank=True,
                default=list,
                help_text=(
                    "The short resources its own sentence names, dominant first: "
                    "[{resource, flavor, requested, available, ceiling}] in millis (see shortage_rows)"
                ),
            ),
        ),
        migrations.RunPython(_order_view.create_view, _order_view.drop_view),
    ]
