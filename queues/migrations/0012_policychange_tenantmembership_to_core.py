"""PolicyChange and TenantMembership now belong to ``core`` (its 0002): queues forgets them in
Django's state only; the tables and their rows stay, owned by ``core``."""

from django.db import migrations


class Migration(migrations.Migration):

    dependencies = [
        ("playground", "0003_policy_changes_to_core"),
        ("queues", "0011_delete_simulationrun"),
    ]

    operations = [
        migrations.SeparateDatabaseAndState(
            state_operations=[
                migrations.RemoveField(model_name="tenantmembership", name="namespace"),
                migrations.RemoveField(model_name="tenantmembership", name="user"),
                migrations.DeleteModel(name="PolicyChange"),
                migrations.DeleteModel(name="TenantMembership"),
            ],
            database_operations=[],
        ),
    ]
