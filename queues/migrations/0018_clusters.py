"""Clusters (issue 27): the Cluster table, and nullable cluster columns on flavors, workloads,
job links and backend health (filled by 0018, required from 0019)."""

import django.db.models.deletion
from django.db import migrations, models

import core.validators
import queues.models.cluster


class Migration(migrations.Migration):
    dependencies = [
        ("queues", "0017_reason_shortages"),
    ]

    operations = [
        migrations.CreateModel(
            name="Cluster",
            fields=[
                ("id", models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name="ID")),
                (
                    "name",
                    models.CharField(max_length=63, unique=True, validators=[core.validators.validate_dns_label]),
                ),
                ("description", models.CharField(blank=True, max_length=200)),
                (
                    "from_settings",
                    models.BooleanField(
                        default=False,
                        editable=False,
                        help_text="The installation's default cluster: backend CLUSTER_BACKEND, connection and maps "
                        "from the SLURM_* settings",
                    ),
                ),
                (
                    "backend",
                    models.CharField(
                        blank=True,
                        choices=[("simulated", "simulated"), ("external", "external"), ("slurm", "slurm")],
                        help_text="simulated, external or slurm (empty only for the default cluster: CLUSTER_BACKEND)",
                        max_length=20,
                    ),
                ),
                (
                    "enabled",
                    models.BooleanField(default=True, help_text="A disabled cluster is neither synced nor started on"),
                ),
                (
                    "slurm_transport",
                    models.CharField(
                        blank=True,
                        choices=[("cli", "cli (Slurm's client tools)"), ("rest", "rest (slurmrestd with a JWT)")],
                        default="cli",
                        max_length=4,
                    ),
                ),
                (
                    "slurm_bin_dir",
                    models.CharField(
                        blank=True,
                        help_text="cli: directory of squeue, sacct, scontrol, scancel, sbatch (empty: PATH)",
                        max_length=400,
                        validators=[queues.models.cluster.validate_absolute_path],
                    ),
                ),
                (
                    "slurm_conf",
                    models.CharField(
                        blank=True,
                        help_text="cli: the cluster's slurm.conf (SLURM_CONF for its commands; empty: the worker's)",
                        max_length=400,
                        validators=[queues.models.cluster.validate_absolute_path],
                    ),
                ),
                (
                    "rest_url",
                    models.CharField(
                        blank=True,
                        help_text="rest: slurmrestd, http(s)://host:port",
                        max_length=500,
                        validators=[queues.models.cluster.validate_rest_url],
                    ),
                ),
                (
                    "rest_secret",
                    models.CharField(
                        blank=True,
                        help_text="rest: where the JWT is, env:VARIABLE or file:/path (the token itself is never "
                        "stored)",
                        max_length=410,
                        validators=[queues.models.cluster.validate_secret_ref],
                    ),
                ),
                (
                    "rest_user",
                    models.CharField(
                        blank=True,
                        help_text="rest: X-SLURM-USER-NAME (the user the token belongs to)",
                        max_length=64,
                        validators=[queues.models.cluster.validate_user_name],
                    ),
                ),
                (
                    "flavor_partitions",
                    models.JSONField(blank=True, default=dict, help_text='Flavor -> Slurm partition, e.g. {"a100": "gpu"}'),
                ),
                (
                    "account_queues",
                    models.JSONField(
                        blank=True,
                        default=dict,
                        help_text='Slurm account -> namespace/local-queue its held jobs are imported into, e.g. '
                        '{"physics": "team-physics/main"}',
                    ),
                ),
                ("created_at", models.DateTimeField(auto_now_add=True)),
            ],
            options={
                "ordering": ["name"],
                "constraints": [
                    models.UniqueConstraint(
                        condition=models.Q(("from_settings", True)), fields=("from_settings",), name="cluster_one_default"
                    ),
                    models.CheckConstraint(
                        condition=models.Q(models.Q(("backend", ""), ("from_settings", True)), ("backend__in", ("simulated", "external", "slurm")), _connector="OR"),
                        name="cluster_backend_valid",
                    ),
                ],
            },
        ),
        migrations.AddField(
            model_name="resourceflavor",
            name="cluster",
            field=models.ForeignKey(
                null=True, on_delete=django.db.models.deletion.PROTECT, related_name="flavors", to="queues.cluster"
            ),
        ),
        migrations.AddField(
            model_name="workload",
            name="cluster",
            field=models.ForeignKey(
                blank=True,
                db_index=False,
                help_text="The cluster it runs or last ran on (its flavors' cluster, set at admission)",
                null=True,
                on_delete=django.db.models.deletion.PROTECT,
                related_name="workloads",
                to="queues.cluster",
            ),
        ),
        migrations.AddField(
            model_name="clusterjob",
            name="cluster",
            field=models.ForeignKey(
                null=True, on_delete=django.db.models.deletion.PROTECT, related_name="jobs", to="queues.cluster"
            ),
        ),
        migrations.AddField(
            model_name="backendhealth",
            name="cluster",
            field=models.OneToOneField(
                null=True, on_delete=django.db.models.deletion.CASCADE, related_name="health", to="queues.cluster"
            ),
        ),
    ]
