"""Applications point at the audit rows under their new label (``core.PolicyChange``); the table
behind the model, and so the join table's column and foreign key, do not change."""

from django.db import migrations, models


class Migration(migrations.Migration):

    dependencies = [
        ("core", "0002_policychange_tenantmembership"),
        ("playground", "0002_scenario_source_api"),
    ]

    operations = [
        migrations.SeparateDatabaseAndState(
            state_operations=[
                migrations.AlterField(
                    model_name="application",
                    name="policy_changes",
                    field=models.ManyToManyField(blank=True, related_name="playground_applications", to="core.policychange"),
                ),
            ],
            database_operations=[],
        ),
    ]
