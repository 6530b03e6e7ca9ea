"""Helpers the benchmarks share (each script puts ``bench/`` on the path by being run from it)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any
from urllib.parse import urlparse


def ensure_database(database_url: str, *, refill: bool = False) -> None:
    """Create the benchmark's database when it does not exist (connecting to ``postgres``);
    ``refill`` drops it first."""
    import psycopg

    url = urlparse(database_url)
    name = url.path.lstrip("/")
    admin = url._replace(path="/postgres").geturl()
    with psycopg.connect(admin, autocommit=True) as connection:
        if refill:
            connection.execute(f'DROP DATABASE IF EXISTS "{name}"')
        if not connection.execute("SELECT 1 FROM pg_database WHERE datname = %s", [name]).fetchone():
            connection.execute(f'CREATE DATABASE "{name}"')


def one_queue_cluster(
    name: str,
    *,
    cpus: int,
    tenants: dict[str, float],
    flavors: Mapping[str, Mapping[str, Any] | None] | None = None,
) -> None:
    """An emptied database (migrated, flushed) with one usage-based ClusterQueue of ``cpus`` CPUs
    and 1Ti of memory per flavor, and a namespace (``tenants``: name -> weight) with LocalQueue
    ``main`` each. ``flavors``: flavor name -> the fields of the ``Cluster`` it belongs to (None:
    the default cluster), in the queue's flavor order; default one flavor ``default``."""
    from django.core.management import call_command

    from fairshare.quantities import parse_millis
    from queues.models import (
        AdmissionMode,
        Cluster,
        ClusterQueue,
        ClusterQueueQuota,
        LocalQueue,
        Namespace,
        ResourceFlavor,
    )

    call_command("migrate", verbosity=0, interactive=False)
    call_command("flush", verbosity=0, interactive=False)
    cq = ClusterQueue.objects.create(name=name, admission_mode=AdmissionMode.USAGE_BASED)
    for order, (flavor_name, cluster_fields) in enumerate((flavors or {"default": None}).items()):
        extra = {"cluster": Cluster.objects.create(**cluster_fields)} if cluster_fields is not None else {}
        flavor = ResourceFlavor.objects.create(name=flavor_name, **extra)
        for resource, amount in (("cpu", str(cpus)), ("memory", "1Ti")):
            ClusterQueueQuota.objects.create(
                cluster_queue=cq, flavor=flavor, flavor_order=order, resource=resource, nominal=parse_millis(amount)
            )
    for tenant, weight in tenants.items():
        namespace = Namespace.objects.create(name=tenant, weight=weight)
        LocalQueue.objects.create(namespace=namespace, name="main", cluster_queue=cq)
