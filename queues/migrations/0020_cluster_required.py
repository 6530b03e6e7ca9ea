"""Cluster columns required where every row has one (after 0018 filled them), job links unique
per cluster (two Slurm clusters both have a job 5), health one row per cluster."""

import django.db.models.deletion
from django.db import migrations, models

import queues.models.cluster


class Migration(migrations.Migration):
    dependencies = [
        ("queues", "0019_default_cluster"),
    ]

    operations = [
        migrations.AlterField(
            model_name="resourceflavor",
            name="cluster",
            field=models.ForeignKey(
                default=queues.models.cluster.default_cluster_id,
                help_text="The cluster whose capacity this flavor is (workloads admitted in it run there)",
                on_delete=django.db.models.deletion.PROTECT,
                related_name="flavors",
                to="queues.cluster",
            ),
        ),
        migrations.AlterField(
            model_name="clusterjob",
            name="cluster",
            field=models.ForeignKey(
                default=queues.models.cluster.default_cluster_id,
                on_delete=django.db.models.deletion.PROTECT,
                related_name="jobs",
                to="queues.cluster",
            ),
        ),
        migrations.AlterField(
            model_name="backendhealth",
            name="cluster",
            field=models.OneToOneField(
                on_delete=django.db.models.deletion.CASCADE, related_name="health", to="queues.cluster"
            ),
        ),
        migrations.AlterField(
            model_name="backendhealth",
            name="backend",
            field=models.CharField(help_text="The cluster's backend when the row was last written", max_length=20),
        ),
        migrations.RemoveConstraint(
            model_name="clusterjob",
            name="cluster_job_unique_external_id",
        ),
        migrations.RemoveIndex(
            model_name="clusterjob",
            name="cluster_job_backend_settled",
        ),
        migrations.AddConstraint(
            model_name="clusterjob",
            constraint=models.UniqueConstraint(fields=("cluster", "external_id"), name="cluster_job_unique_external_id"),
        ),
        migrations.AddIndex(
            model_name="clusterjob",
            index=models.Index(fields=["cluster", "settled"], name="cluster_job_cluster_settled"),
        ),
    ]
