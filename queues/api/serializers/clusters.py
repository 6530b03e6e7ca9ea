"""Clusters: admins read and write the whole row; tenants read names and health only.

The connection never carries a secret: ``rest_secret`` names where the token is
(``env:NAME`` or ``file:/path``). The default cluster (``from_settings``) takes its backend and
connection from the settings and cannot be given its own.
"""

from __future__ import annotations

from typing import Any

from rest_framework import serializers

from queues.api.serializers.base import PolicySerializer
from queues.models import BackendHealth, Cluster


def _health(cluster: Cluster) -> BackendHealth | None:
    try:
        return cluster.health
    except BackendHealth.DoesNotExist:
        return None


class ClusterHealthField(serializers.Field):
    """Whether the cluster answered the last call (``last_error`` for admins only)."""

    def __init__(self, *, with_error: bool, **kwargs: Any) -> None:
        kwargs.update(source="*", read_only=True)
        super().__init__(**kwargs)
        self.with_error = with_error

    def to_representation(self, cluster: Cluster) -> dict[str, Any]:
        row = _health(cluster)
        body: dict[str, Any] = {
            "reachable": row is None or row.reachable,
            "unreachable_since": row.unreachable_since.isoformat() if row and row.unreachable_since else None,
            "failures": row.failures if row else 0,
        }
        if self.with_error:
            body["retry_at"] = row.retry_at.isoformat() if row and row.retry_at else None
            body["last_error"] = row.last_error if row else ""
        return body


class ClusterSummarySerializer(serializers.ModelSerializer):
    """What a tenant sees: the name, whether it is in use, and its health."""

    health = ClusterHealthField(with_error=False)

    class Meta:
        model = Cluster
        fields = ["id", "name", "enabled", "health"]
        read_only_fields = fields


class ClusterSerializer(PolicySerializer[Cluster]):
    effective_backend = serializers.CharField(read_only=True, help_text="The backend it runs on now")
    from_settings = serializers.BooleanField(read_only=True)
    health = ClusterHealthField(with_error=True)
    flavor_partitions = serializers.DictField(
        child=serializers.CharField(max_length=64), required=False, help_text="Flavor -> Slurm partition"
    )
    account_queues = serializers.DictField(
        child=serializers.CharField(max_length=127), required=False, help_text="Slurm account -> namespace/queue"
    )

    class Meta:
        model = Cluster
        fields = [
            "id",
            "name",
            "description",
            "from_settings",
            "backend",
            "effective_backend",
            "enabled",
            "slurm_transport",
            "slurm_bin_dir",
            "slurm_conf",
            "rest_url",
            "rest_secret",
            "rest_user",
            "flavor_partitions",
            "account_queues",
            "health",
            "created_at",
        ]
