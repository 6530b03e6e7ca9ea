"""Clusters: admins read and write the whole row; tenants read names and health only.

Every user also reads each cluster's ``figures`` (``queues.selectors.clusters``, the dashboard's
own: capacity, admitted, pending, health), a tenant's limited to its own namespaces and the
ClusterQueues they feed. The view passes them in the context (``figures``: a callable giving
``{cluster id: ClusterFigures}``, computed once per request, fixed queries).

The connection never carries a secret: ``rest_secret`` names where the token is
(``env:NAME`` or ``file:/path``). The default cluster (``from_settings``) takes its backend and
connection from the settings and cannot be given its own.
"""

from __future__ import annotations

import re
from typing import Any

from django.core.validators import RegexValidator
from drf_spectacular.utils import extend_schema_field
from rest_framework import serializers

from core.api.fields import ResourceQuantitiesField
from queues.api.serializers.base import PolicySerializer
from queues.api.serializers.observe import DominantShareSerializer
from queues.models import BackendHealth, Cluster
from queues.models.cluster import MAX_MAP_ENTRIES, PARTITION, QUEUE_KEY, ClusterBackendKind
from queues.selectors.clusters import ClusterFigures

LABEL_KEY = re.compile(r"^[A-Za-z0-9_][A-Za-z0-9_.-]{0,63}$")


def _names_are_labels(value: dict[str, str]) -> None:
    """Map keys: the schema cannot constrain them (no propertyNames in OpenAPI 3.0)."""
    if len(value) > MAX_MAP_ENTRIES:
        raise serializers.ValidationError(f"at most {MAX_MAP_ENTRIES} entries is too large")
    for key in value:
        if not LABEL_KEY.match(key):
            raise serializers.ValidationError(f"{key[:70]!r} is not a valid label name")


def _health(cluster: Cluster) -> BackendHealth | None:
    try:
        return cluster.health
    except BackendHealth.DoesNotExist:
        return None


class ClusterHealthSerializer(serializers.Serializer):
    """Whether the cluster answered the last call (what every user may read)."""

    reachable = serializers.BooleanField()
    unreachable_since = serializers.DateTimeField(allow_null=True)
    failures = serializers.IntegerField(help_text="Failed calls in a row")


class ClusterAdminHealthSerializer(ClusterHealthSerializer):
    """... and, for admins, when it is tried next and the last error."""

    retry_at = serializers.DateTimeField(allow_null=True)
    last_error = serializers.CharField(allow_blank=True)


def _health_body(cluster: Cluster, *, with_error: bool) -> dict[str, Any]:
    row = _health(cluster)
    body: dict[str, Any] = {
        "reachable": row is None or row.reachable,
        "unreachable_since": row.unreachable_since if row else None,
        "failures": row.failures if row else 0,
    }
    if with_error:
        body["retry_at"] = row.retry_at if row else None
        body["last_error"] = row.last_error if row else ""
    return (ClusterAdminHealthSerializer if with_error else ClusterHealthSerializer)(body).data


class ClusterStateSerializer(serializers.Serializer):
    state = serializers.ChoiceField(choices=["reachable", "unreachable", "disabled"], read_only=True)
    backing_off = serializers.BooleanField(read_only=True, help_text="Unreachable and its next try is not due yet")
    last_sync = serializers.DateTimeField(read_only=True, allow_null=True, help_text="The last sync it answered")


class ClusterFiguresSerializer(serializers.Serializer):
    """The dashboard's figures of one cluster (millis in, base units out, like every quantity)."""

    capacity = ResourceQuantitiesField(
        read_only=True, help_text="Nominal quota on its flavors (ClusterQueues, cohorts)"
    )
    capacity_display = serializers.ListField(
        child=serializers.CharField(), read_only=True, help_text='As the dashboard shows it, e.g. ["40 GPU", "672 CPU"]'
    )
    admitted = ResourceQuantitiesField(read_only=True, help_text="Requests of the workloads admitted on it now")
    admitted_display = serializers.ListField(
        child=serializers.CharField(), read_only=True, help_text="As the dashboard shows it"
    )
    admitted_workloads = serializers.IntegerField(read_only=True)
    pending_only_here = serializers.IntegerField(
        read_only=True,
        help_text="Pending workloads that can run nowhere else: jobs on its scheduler, or in ClusterQueues whose "
        "flavors are all on it",
    )
    pending_could_run = serializers.IntegerField(
        read_only=True,
        help_text="Pending workloads whose ClusterQueue holds a flavor of it (unplaced work counts on "
        "every cluster it could run on)",
    )
    utilisation = DominantShareSerializer(read_only=True, help_text="Admitted against capacity, dominant resource")
    flavors = serializers.ListField(child=serializers.CharField(), read_only=True)
    health = ClusterStateSerializer(read_only=True)


class FiguresMixin(serializers.Serializer):
    figures = serializers.SerializerMethodField()

    @extend_schema_field(ClusterFiguresSerializer(allow_null=True))
    def get_figures(self, cluster: Cluster) -> dict[str, Any] | None:
        provider = self.context.get("figures")
        found: ClusterFigures | None = provider().get(cluster.pk) if provider is not None else None
        return None if found is None else ClusterFiguresSerializer(found).data


class ClusterSummarySerializer(FiguresMixin, serializers.ModelSerializer):
    """What a tenant sees: the name, whether it is in use, its health and its own figures."""

    health = serializers.SerializerMethodField()

    class Meta:
        model = Cluster
        fields = ["id", "name", "enabled", "health", "figures"]
        read_only_fields = fields

    @extend_schema_field(ClusterHealthSerializer)
    def get_health(self, cluster: Cluster) -> dict[str, Any]:
        return _health_body(cluster, with_error=False)


class ClusterSerializer(FiguresMixin, PolicySerializer[Cluster]):
    effective_backend = serializers.CharField(read_only=True, help_text="The backend it runs on now")
    from_settings = serializers.BooleanField(read_only=True)
    health = serializers.SerializerMethodField()
    backend = serializers.ChoiceField(
        choices=ClusterBackendKind.choices,
        help_text="simulated, external or slurm (the default cluster: CLUSTER_BACKEND, not this field)",
    )
    flavor_partitions = serializers.DictField(
        child=serializers.CharField(
            max_length=64, validators=[RegexValidator(PARTITION, "not a valid Slurm partition name")]
        ),
        required=False,
        validators=[_names_are_labels],
        help_text="Flavor -> Slurm partition",
    )
    account_queues = serializers.DictField(
        child=serializers.CharField(
            max_length=127, validators=[RegexValidator(QUEUE_KEY, "not a valid namespace/local-queue")]
        ),
        required=False,
        validators=[_names_are_labels],
        help_text="Slurm account -> namespace/local-queue",
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
            "figures",
            "created_at",
        ]

    @extend_schema_field(ClusterAdminHealthSerializer)
    def get_health(self, cluster: Cluster) -> dict[str, Any]:
        return _health_body(cluster, with_error=True)
