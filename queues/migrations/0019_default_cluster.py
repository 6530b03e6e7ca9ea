"""The installation's default cluster (issue 27), and everything that existed pointed at it.

One ``Cluster`` row, ``default``, with ``from_settings`` set: its backend is ``CLUSTER_BACKEND``
and its connection the ``SLURM_*`` settings, read at each use (not copied here), so an install
keeps working unchanged. Every flavor, every job link, and every workload that was admitted
(or whose job an import linked) now belongs to it; the backend health row of the backend that
``CLUSTER_BACKEND`` names becomes its health, rows of other backends (stale: no longer used)
are dropped. Backwards: the cluster columns are dropped by 0017's reversal; nothing to undo.
"""

from django.conf import settings
from django.db import migrations
from django.db.models import Q


def forwards(apps, schema_editor):
    Cluster = apps.get_model("queues", "Cluster")
    default = Cluster.objects.filter(from_settings=True).first()
    if default is None:
        name = "default"
        if Cluster.objects.filter(name=name).exists():  # not possible from 0017, but never fail
            name = "default-cluster"
        default = Cluster.objects.create(name=name, from_settings=True, backend="")
    apps.get_model("queues", "ResourceFlavor").objects.filter(cluster__isnull=True).update(cluster=default)
    apps.get_model("queues", "ClusterJob").objects.filter(cluster__isnull=True).update(cluster=default)
    apps.get_model("queues", "Workload").objects.filter(cluster__isnull=True).filter(
        Q(cluster_queue__isnull=False) | Q(admitted_at__isnull=False) | Q(cluster_job__isnull=False)
    ).update(cluster=default)
    health = apps.get_model("queues", "BackendHealth").objects
    health.exclude(backend=settings.CLUSTER_BACKEND).delete()
    health.filter(cluster__isnull=True).update(cluster=default)


class Migration(migrations.Migration):
    dependencies = [
        ("queues", "0018_clusters"),
    ]

    operations = [migrations.RunPython(forwards, migrations.RunPython.noop)]
