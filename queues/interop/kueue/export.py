"""The stored policy as Kueue manifests (``kueue.x-k8s.io`` v1beta1 or v1beta2).

The output imports back unchanged (round trip): every modelled field is written explicitly,
every quantity in the notation the manifest wrote it in (``kueue_notation``: ``800Gi`` stays
``800Gi`` for any resource, ``500m`` stays ``500m``),
fields kept from an earlier import (``kueue_extra``) are put back at their paths, and the
description travels as the ``fairportal.io/description`` annotation. Reads a fixed number of
queries (eight) whatever the size of the installation.

Clusters (when there is more than the installation's default one): every ``Cluster`` is a
``MultiKueueCluster`` (``multikueue_cluster``), every flavor names its cluster in the
``fairportal.io/cluster`` annotation, and a ClusterQueue whose flavors are on several clusters
gets the MultiKueue ``AdmissionCheck`` (and its ``MultiKueueConfig``) derived from them, listing
the clusters in the queue's flavor order. Import reads them back (``apply``); the derived check
and config are checked there, never stored.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

import yaml
from django.db.models import Prefetch

from fairshare.quota.scopes import ancestry
from queues.interop.kueue import specs
from queues.interop.kueue.notation import quantity_notation, weight_notation
from queues.models import (
    AdmissionMode,
    Cluster,
    ClusterQueue,
    ClusterQueueQuota,
    Cohort,
    CohortQuota,
    LocalQueue,
    ResourceFlavor,
    WorkloadPriorityClass,
)

# Modes Kueue's own API accepts in admissionScope; the others are fairportal's extensions.
KUEUE_ADMISSION_MODES = (AdmissionMode.USAGE_BASED, AdmissionMode.NO_FAIR_SHARING)
_FIRST_RESOURCES = ("cpu", "memory", "ephemeral-storage")
_PATH_TOKEN = re.compile(r"([^.\[\]]+)|\[(\d+)\]")


@dataclass
class ExportResult:
    documents: list[dict[str, Any]] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)

    def to_yaml(self) -> str:
        return yaml.safe_dump_all(self.documents, sort_keys=False, default_flow_style=False, explicit_start=True)


def _resource_key(resource: str) -> tuple[int, str]:
    return (_FIRST_RESOURCES.index(resource), "") if resource in _FIRST_RESOURCES else (len(_FIRST_RESOURCES), resource)


def resource_groups(rows: Iterable[Any], notation: dict[str, str] | None = None) -> list[dict[str, Any]]:
    """Quota rows -> Kueue ``resourceGroups``, each quantity in its ``notation`` (the owner's
    ``kueue_notation``; see ``quantity_notation``).

    Kueue puts each resource and each flavor in exactly one group, so flavors that cover the
    same set of resources form one group; groups and flavors keep the stored flavor order.
    """
    by_flavor: dict[str, dict[str, Any]] = {}
    for row in rows:
        by_flavor.setdefault(row.flavor.name, {})[row.resource] = row
    groups: dict[tuple[str, ...], list[dict[str, Any]]] = {}
    for flavor_name, quotas in by_flavor.items():
        covered = tuple(sorted(quotas, key=_resource_key))
        resources = []
        for resource in covered:
            row = quotas[resource]
            item: dict[str, Any] = {"name": resource}
            for limit, key in (
                ("nominal", "nominalQuota"),
                ("borrowing_limit", "borrowingLimit"),
                ("lending_limit", "lendingLimit"),
            ):
                amount = getattr(row, limit)
                if amount is not None:
                    written = (notation or {}).get(specs.notation_key(flavor_name, resource, limit))
                    item[key] = quantity_notation(amount, resource, written)
            resources.append(item)
        groups.setdefault(covered, []).append({"name": flavor_name, "resources": resources})
    return [{"coveredResources": list(covered), "flavors": flavors} for covered, flavors in groups.items()]


def _metadata(
    name: str,
    description: str,
    extra: dict[str, Any],
    namespace: str | None = None,
    annotations: dict[str, str] | None = None,
) -> dict[str, Any]:
    metadata: dict[str, Any] = {"name": name}
    if namespace:
        metadata["namespace"] = namespace
    annotations = dict(extra.get("metadata.annotations") or {}) | (annotations or {})
    if description:
        annotations[specs.DESCRIPTION_ANNOTATION] = description
    if annotations:
        metadata["annotations"] = annotations
    return metadata


def place_extra(document: dict[str, Any], extra: dict[str, Any], where: str, warnings: list[str]) -> None:
    """Put kept fields back at their paths; a path that no longer fits is reported, not lost."""
    for path, value in extra.items():
        if path == "metadata.annotations":
            continue  # merged by _metadata
        tokens = [(name, int(index) if index else None) for name, index in _PATH_TOKEN.findall(path)]
        node: Any = document
        placed = True
        for position, (name, index) in enumerate(tokens):
            last = position == len(tokens) - 1
            if index is not None:
                if not isinstance(node, list) or index >= len(node):
                    placed = False
                    break
                if last:
                    placed = False  # a whole list item is never an extra
                    break
                node = node[index]
                continue
            if not isinstance(node, dict):
                placed = False
                break
            if last:
                node[name] = value
            else:
                node = node.setdefault(name, {} if tokens[position + 1][1] is None else [])
        if not placed:
            warnings.append(f"{where}: kept field {path} no longer fits the exported object and was left out")


def _emit(
    result: ExportResult,
    api_version: str,
    kind: str,
    obj: Any,
    where: str,
    *,
    annotation: str | None = None,
    namespace: str | None = None,
    annotations: dict[str, str] | None = None,
    **body: Any,
) -> None:
    """Add ``obj``'s manifest to ``result``: its metadata, ``body``, and the Kueue fields it kept
    (``kueue_extra``) put back in place (a conflict is a warning naming ``where``). The metadata's
    description is ``obj.description`` unless ``annotation`` says otherwise."""
    text = obj.description if annotation is None else annotation
    metadata = _metadata(obj.name, text, obj.kueue_extra, namespace=namespace, annotations=annotations)
    document = _document(api_version, kind, metadata, **body)
    place_extra(document, obj.kueue_extra, where, result.warnings)
    result.documents.append(document)


def _with_quotas(spec: dict[str, Any], owner: Cohort | ClusterQueue) -> dict[str, Any]:
    """``spec`` with ``resourceGroups`` from ``owner``'s prefetched quota rows (none when there
    are no rows)."""
    groups = resource_groups(owner.quotas.all(), owner.kueue_notation)
    if groups:
        spec["resourceGroups"] = groups
    return spec


def _document(api_version: str, kind: str, metadata: dict[str, Any], **body: Any) -> dict[str, Any]:
    return {"apiVersion": f"{specs.KUEUE_GROUP}/{api_version}", "kind": kind, "metadata": metadata, **body}


def _admission_scope(mode: str, where: str, warnings: list[str]) -> dict[str, Any]:
    if mode not in KUEUE_ADMISSION_MODES:
        warnings.append(
            f"{where}: admissionMode {mode} is a fairportal extension; Kueue accepts only "
            f"{' and '.join(KUEUE_ADMISSION_MODES)}"
        )
    return {"admissionMode": mode}


def _weight(obj: Cohort | ClusterQueue | LocalQueue) -> str:
    return weight_notation(obj.weight, obj.kueue_notation.get(specs.WEIGHT_NOTATION))


def _cohort_depth(cohort: Cohort, by_id: dict[int, Cohort]) -> int:
    parent_of = {pk: node.parent_id for pk, node in by_id.items() if node.parent_id in by_id}
    return len(ancestry(cohort.pk, parent_of)) - 1


def export_manifests(api_version: str = specs.DEFAULT_EXPORT_VERSION) -> ExportResult:
    """Every ResourceFlavor, WorkloadPriorityClass, Cohort, ClusterQueue and LocalQueue."""
    if api_version not in specs.API_VERSIONS:
        raise ValueError(f"api version must be one of {', '.join(specs.API_VERSIONS)}, got {api_version!r}")
    result = ExportResult()
    warnings = result.warnings

    clusters = list(Cluster.objects.order_by("name"))
    # One cluster that is the installation's default: a single-cluster Kueue setup, as before.
    with_clusters = len(clusters) > 1 or any(not cluster.from_settings for cluster in clusters)
    if with_clusters:
        for cluster in clusters:
            result.documents.append(multikueue_cluster(cluster, api_version))

    for flavor in ResourceFlavor.objects.select_related("cluster").order_by("name"):
        spec: dict[str, Any] = {"nodeLabels": dict(flavor.node_labels)} if flavor.node_labels else {}
        on = {specs.CLUSTER_ANNOTATION: flavor.cluster.name} if with_clusters else None
        where = f"ResourceFlavor {flavor.name}"
        _emit(result, api_version, specs.RESOURCE_FLAVOR, flavor, where, annotations=on, spec=spec)

    for priority_class in WorkloadPriorityClass.objects.order_by("name"):
        body: dict[str, Any] = {"value": priority_class.value}
        if priority_class.description:
            body["description"] = priority_class.description
        where = f"WorkloadPriorityClass {priority_class.name}"
        _emit(result, api_version, specs.WORKLOAD_PRIORITY_CLASS, priority_class, where, annotation="", **body)

    cohort_quotas = Prefetch(
        "quotas", queryset=CohortQuota.objects.select_related("flavor").order_by("flavor__name", "resource")
    )
    cohorts = list(Cohort.objects.select_related("parent").prefetch_related(cohort_quotas))
    by_id = {cohort.pk: cohort for cohort in cohorts}
    for cohort in sorted(cohorts, key=lambda c: (_cohort_depth(c, by_id), c.name)):
        where = f"Cohort {cohort.name}"
        spec = {}
        if cohort.parent is not None:
            spec[specs.COHORT_PARENT_FIELD[api_version]] = cohort.parent.name
        spec["fairSharing"] = {"weight": _weight(cohort)}
        if cohort.admission_mode:
            spec["admissionScope"] = _admission_scope(cohort.admission_mode, where, warnings)
            warnings.append(
                f"{where}: admissionScope on a Cohort follows KEP-4136; Kueue's Cohort API does not have it yet"
            )
        _emit(result, api_version, specs.COHORT, cohort, where, spec=_with_quotas(spec, cohort))

    queue_quotas = Prefetch(
        "quotas",
        queryset=ClusterQueueQuota.objects.select_related("flavor__cluster").order_by(
            "flavor_order", "flavor__name", "resource"
        ),
    )
    queues = list(ClusterQueue.objects.select_related("cohort").prefetch_related(queue_quotas).order_by("name"))
    checks = {queue.pk: _spanned_clusters(queue) for queue in queues}
    for spanned in dict.fromkeys(spanned for spanned in checks.values() if spanned):
        _multikueue_check(result, api_version, spanned)
    for queue in queues:
        where = f"ClusterQueue {queue.name}"
        spec = {}
        if queue.cohort is not None:
            spec[specs.CLUSTER_QUEUE_COHORT_FIELD[api_version]] = queue.cohort.name
        if "spec.namespaceSelector" not in queue.kueue_extra:
            spec["namespaceSelector"] = {}  # fairportal does not restrict namespaces: all may submit
        spec["queueingStrategy"] = queue.queueing_strategy
        if queue.preemption_within_cluster_queue not in specs.KUEUE_WITHIN_CLUSTER_QUEUE:
            warnings.append(
                f"{where}: withinClusterQueue {queue.preemption_within_cluster_queue} is a fairportal extension "
                f"(KEP-752); Kueue accepts only {', '.join(specs.KUEUE_WITHIN_CLUSTER_QUEUE)}"
            )
        spec["preemption"] = {
            "withinClusterQueue": queue.preemption_within_cluster_queue,
            "reclaimWithinCohort": queue.reclaim_within_cohort,
        }
        spec["stopPolicy"] = queue.stop_policy
        spec["fairSharing"] = {"weight": _weight(queue)}
        if queue.admission_mode:
            spec["admissionScope"] = _admission_scope(queue.admission_mode, where, warnings)
        _emit(result, api_version, specs.CLUSTER_QUEUE, queue, where, spec=_with_quotas(spec, queue))
        if checks[queue.pk]:
            _with_multikueue_check(result.documents[-1], queue, specs.multikueue_name(checks[queue.pk]), warnings)

    for local in LocalQueue.objects.select_related("namespace", "cluster_queue").order_by("namespace__name", "name"):
        where = f"LocalQueue {local.key}"
        spec = {
            "clusterQueue": local.cluster_queue.name,
            "stopPolicy": local.stop_policy,
            "fairSharing": {"weight": _weight(local)},
        }
        _emit(result, api_version, specs.LOCAL_QUEUE, local, where, namespace=local.namespace.name, spec=spec)
    return result


# -- clusters as MultiKueue ----------------------------------------------------------------------


def multikueue_cluster(cluster: Cluster, api_version: str) -> dict[str, Any]:
    """One Cluster as a MultiKueueCluster: the backend as the ``fairportal.io/backend`` label, the
    connection and maps as ``fairportal.io/`` annotations (the token's *reference*, never a secret),
    and a kubeConfig naming the Secret ``<name>-kubeconfig``, which nothing creates: a real Kueue
    marks such a cluster inactive and dispatches nothing to it (it is not a Kubernetes cluster)."""
    annotations: dict[str, str] = {}
    if cluster.description:
        annotations[specs.DESCRIPTION_ANNOTATION] = cluster.description
    if cluster.from_settings:
        annotations[specs.FROM_SETTINGS_ANNOTATION] = "true"
    if not cluster.enabled:
        annotations[specs.ENABLED_ANNOTATION] = "false"
    for annotation, field_name in specs.CONNECTION_ANNOTATIONS:
        value = getattr(cluster, field_name)
        if value and not (field_name == "slurm_transport" and value == "cli"):
            annotations[annotation] = value
    for annotation, field_name in specs.MAP_ANNOTATIONS:
        mapping = getattr(cluster, field_name)
        if mapping:
            annotations[annotation] = json.dumps(mapping, sort_keys=True, separators=(",", ":"))
    metadata: dict[str, Any] = {"name": cluster.name, "labels": {specs.BACKEND_LABEL: cluster.effective_backend}}
    if annotations:
        metadata["annotations"] = annotations
    kube_config = {"locationType": "Secret", "location": specs.kubeconfig_secret(cluster.name)}
    spec: dict[str, Any] = kube_config
    for key in reversed(specs.KUBECONFIG_PATH[api_version]):
        spec = {key: spec}
    return _document(api_version, specs.MULTIKUEUE_CLUSTER, metadata, spec=spec)


def _spanned_clusters(queue: ClusterQueue) -> tuple[str, ...]:
    """The clusters of ``queue``'s flavors in its flavor order (Kueue's Incremental dispatcher
    tries a MultiKueueConfig's clusters in list order), when there are several; else ``()``."""
    ordered = tuple(dict.fromkeys(row.flavor.cluster.name for row in queue.quotas.all()))
    return ordered if len(ordered) > 1 else ()


def _multikueue_check(result: ExportResult, api_version: str, clusters: tuple[str, ...]) -> None:
    """The MultiKueueConfig listing ``clusters`` and the AdmissionCheck naming it (one pair per
    distinct list), labelled as fairportal's: an import checks them and derives them again."""
    name = specs.multikueue_name(clusters)
    labels = {specs.MANAGED_BY_LABEL: specs.MANAGED_BY}
    if len(clusters) > specs.MAX_MULTIKUEUE_CLUSTERS:
        result.warnings.append(
            f"MultiKueueConfig {name}: {len(clusters)} clusters; Kueue accepts at most {specs.MAX_MULTIKUEUE_CLUSTERS}"
        )
    result.documents.append(
        _document(
            api_version,
            specs.MULTIKUEUE_CONFIG,
            {"name": name, "labels": dict(labels)},
            spec={"clusters": list(clusters)},
        )
    )
    parameters = {"apiGroup": specs.KUEUE_GROUP, "kind": specs.MULTIKUEUE_CONFIG, "name": name}
    result.documents.append(
        _document(
            api_version,
            specs.ADMISSION_CHECK,
            {"name": name, "labels": dict(labels)},
            spec={"controllerName": specs.MULTIKUEUE_CONTROLLER, "parameters": parameters},
        )
    )


def _with_multikueue_check(document: dict[str, Any], queue: ClusterQueue, check: str, warnings: list[str]) -> None:
    """Add the derived MultiKueue check to a ClusterQueue spanning clusters, after the rules it
    kept from an import (a check of another controller, a ProvisioningRequest...)."""
    spec = document["spec"]
    kept = spec.get("admissionChecksStrategy") or {}
    rules = [rule for rule in kept.get("admissionChecks") or [] if rule.get("name") != check]
    spec["admissionChecksStrategy"] = {**kept, "admissionChecks": [*rules, {"name": check}]}
    if "admissionChecks" in spec:
        warnings.append(
            f"ClusterQueue {queue.name}: Kueue refuses spec.admissionChecks next to spec.admissionChecksStrategy "
            f"(the MultiKueue check {check}); move the kept checks into admissionChecksStrategy"
        )
