"""API support: idempotency keys of workload submissions, and the ``executors`` group whose
members are the executor service accounts (lifecycle reports only)."""

import django.db.models.deletion
from django.conf import settings
from django.db import migrations, models

EXECUTORS_GROUP = "executors"  # core.access.EXECUTORS_GROUP, frozen here as migrations must be


def create_executors_group(apps, schema_editor):
    apps.get_model("auth", "Group").objects.get_or_create(name=EXECUTORS_GROUP)


def keep_executors_group(apps, schema_editor):
    """Reversing leaves the group: it may hold accounts an admin added."""


class Migration(migrations.Migration):

    dependencies = [
        ('queues', '0003_merge_20261121_2232'),
        migrations.swappable_dependency(settings.AUTH_USER_MODEL),
        ('auth', '0012_alter_user_first_name_max_length'),
    ]

    operations = [
        migrations.CreateModel(
            name='IdempotencyKey',
            fields=[
                ('id', models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name='ID')),
                ('key', models.CharField(max_length=255)),
                ('request_hash', models.CharField(max_length=64)),
                ('created_at', models.DateTimeField(auto_now_add=True)),
                ('user', models.ForeignKey(on_delete=django.db.models.deletion.CASCADE, related_name='+', to=settings.AUTH_USER_MODEL)),
                ('workload', models.ForeignKey(blank=True, help_text='Set in the transaction that claimed the key; empty only until it commits', null=True, on_delete=django.db.models.deletion.CASCADE, related_name='+', to='queues.workload')),
            ],
            options={
                'constraints': [models.UniqueConstraint(fields=('user', 'key'), name='idempotency_key_unique_per_user')],
            },
        ),
        migrations.RunPython(create_executors_group, keep_executors_group),
    ]
