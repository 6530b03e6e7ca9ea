"""PolicyChange and TenantMembership move from queues to the kernel (``core``).

Only Django's picture of the models moves: the tables keep their names (``queues_policychange``,
``queues_tenantmembership``, set as ``db_table``) and every row stays where it is. The content
types (and so the permissions granted on them) follow the models to the ``core`` label.
"""

import django.db.models.deletion
from django.conf import settings
from django.db import migrations, models

MOVED = ("policychange", "tenantmembership")


def relabel_content_types(old, new):  # noqa: ANN001, ANN201 - migration helper
    def relabel(apps, schema_editor):  # noqa: ANN001 - migration signature
        ContentType = apps.get_model("contenttypes", "ContentType")
        rows = ContentType.objects.using(schema_editor.connection.alias)
        for model in MOVED:
            if not rows.filter(app_label=new, model=model).exists():
                rows.filter(app_label=old, model=model).update(app_label=new)

    return relabel


class Migration(migrations.Migration):

    dependencies = [
        ("core", "0001_hash_existing_api_tokens"),
        ("queues", "0011_delete_simulationrun"),
        ("contenttypes", "0002_remove_content_type_name"),
        migrations.swappable_dependency(settings.AUTH_USER_MODEL),
    ]

    operations = [
        migrations.SeparateDatabaseAndState(
            state_operations=[
                migrations.CreateModel(
                    name='PolicyChange',
                    fields=[
                        ('id', models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name='ID')),
                        ('at', models.DateTimeField(auto_now_add=True, db_index=True)),
                        ('actor_name', models.CharField(blank=True, help_text='Kept when the user is deleted', max_length=150)),
                        ('surface', models.CharField(choices=[('admin', 'Django admin'), ('ui', 'Web UI'), ('api', 'REST API'), ('cli', 'Command line'), ('playground', 'Playground'), ('system', 'Control loop')], max_length=20)),
                        ('action', models.CharField(choices=[('create', 'Created'), ('update', 'Updated'), ('delete', 'Deleted')], max_length=10)),
                        ('object_type', models.CharField(db_index=True, max_length=60)),
                        ('object_id', models.CharField(blank=True, max_length=64)),
                        ('object_repr', models.CharField(max_length=200)),
                        ('before', models.JSONField(blank=True, null=True)),
                        ('after', models.JSONField(blank=True, null=True)),
                        ('note', models.TextField(blank=True)),
                        ('actor', models.ForeignKey(blank=True, null=True, on_delete=django.db.models.deletion.SET_NULL, to=settings.AUTH_USER_MODEL)),
                    ],
                    options={
                        'db_table': 'queues_policychange',
                        'ordering': ['-at', '-id'],
                        'indexes': [models.Index(fields=['object_type', 'object_id'], name='policy_change_object')],
                    },
                ),
                migrations.CreateModel(
                    name='TenantMembership',
                    fields=[
                        ('id', models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name='ID')),
                        ('role', models.CharField(choices=[('viewer', 'Viewer'), ('editor', 'Editor')], default='viewer', max_length=10)),
                        ('namespace', models.ForeignKey(on_delete=django.db.models.deletion.CASCADE, related_name='memberships', to='queues.namespace')),
                        ('user', models.ForeignKey(on_delete=django.db.models.deletion.CASCADE, related_name='memberships', to=settings.AUTH_USER_MODEL)),
                    ],
                    options={
                        'db_table': 'queues_tenantmembership',
                        'ordering': ['namespace__name', 'user__username'],
                        'constraints': [models.UniqueConstraint(fields=('user', 'namespace'), name='tenant_membership_unique'), models.CheckConstraint(condition=models.Q(('role__in', ['viewer', 'editor'])), name='tenant_role_valid')],
                    },
                ),
            ],
            database_operations=[],  # the tables exist (created by queues' migrations)
        ),
        migrations.RunPython(relabel_content_types("queues", "core"), relabel_content_types("core", "queues")),
    ]
