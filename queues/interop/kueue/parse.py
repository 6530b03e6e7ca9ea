"""Multi-document Kueue YAML -> ``specs`` (pure Python: no database, no Django).

Every problem is collected as a ``Problem`` naming the document, kind, name and field, so one
run reports all of them. Field names follow the document's own API version: v1beta1 writes
``spec.cohort`` and ``spec.parent``, v1beta2 ``spec.cohortName`` and ``spec.parentName``.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from decimal import Decimal
from typing import Any

import yaml

from fairshare import safe_yaml
from fairshare.errors import ValidationError as EngineValidationError
from fairshare.policy import FairSharingPolicy
from fairshare.quantities import parse_millis, parse_quantity_decimal, validate_resource_name
from queues.interop.kueue import specs
from queues.interop.kueue.reader import FieldError, Problem, Reader, join

# Metadata the API server fills in: meaningless in another system, so not kept.
SERVER_METADATA = ("uid", "resourceVersion", "generation", "creationTimestamp", "managedFields", "selfLink")
LAST_APPLIED = "kubectl.kubernetes.io/last-applied-configuration"
# Kueue's Configuration keys under admissionFairSharing -> our policy keys (same names).
ADMISSION_FAIR_SHARING_KEYS = ("usageHalfLifeTime", "usageSamplingInterval", "resourceWeights", "resetInactivityPeriod")


class ManifestError(Exception):
    """The file itself cannot be read (not YAML, not a list of documents)."""


def load_documents(text: str) -> list[Any]:
    """The documents of a multi-document YAML text; ``kind: List`` is expanded into its items."""
    try:
        raw = [doc for doc in safe_yaml.load_all(text) if doc is not None]
    except yaml.YAMLError as error:
        mark = getattr(error, "problem_mark", None)
        where = f" at line {mark.line + 1}, column {mark.column + 1}" if mark else ""
        problem = getattr(error, "problem", None) or str(error).splitlines()[0]
        raise ManifestError(f"not valid YAML{where}: {problem}") from None
    documents: list[Any] = []
    for doc in raw:
        if isinstance(doc, Mapping) and doc.get("kind") == "List" and isinstance(doc.get("items"), list):
            documents.extend(doc["items"])
        else:
            documents.append(doc)
    return documents


def parse_manifests(
    text: str,
    *,
    skip_unsupported: bool = False,
    namespace: str | None = None,
    terms: specs.Terms = specs.COMMAND_TERMS,
) -> specs.ParsedManifests:
    """Parse every document; problems are collected, not raised.

    ``skip_unsupported``: documents fairportal does not model (Topology, an AdmissionCheck or
    MultiKueueConfig it did not write, a MultiKueueCluster without ``fairportal.io/backend``,
    ProvisioningRequestConfig, a Namespace, a Deployment, ...) are listed in
    ``skipped`` instead of being errors. ``namespace``: the namespace of LocalQueues that have no
    ``metadata.namespace``, as ``kubectl apply -n`` does (one that names another is an error).
    ``terms``: how messages name those options (the command's flags or the API's parameters).
    """
    result = specs.ParsedManifests()
    seen: dict[tuple[str, str], int] = {}
    for index, doc in enumerate(load_documents(text), start=1):
        kind = doc.get("kind", "") if isinstance(doc, Mapping) else ""
        name = _metadata_name(doc)
        if skip_unsupported and _unsupported(doc):
            result.skipped.append(specs.SkippedDocument(index, str(doc.get("apiVersion")), str(kind), name))
            continue
        try:
            parsed = parse_document(index, doc, namespace=namespace, terms=terms)
        except FieldError as error:
            result.problems.append(Problem(index, str(kind), name, error.field, error.message))
            continue
        if isinstance(parsed, specs.ConfigurationSpec):
            result.configurations.append(parsed)
            continue
        key = (parsed.kind, parsed.key)
        if key in seen:
            result.problems.append(
                Problem(
                    index,
                    parsed.kind,
                    parsed.name,
                    "metadata.name",
                    f"{parsed.key!r} is already defined by document {seen[key]}",
                )
            )
            continue
        seen[key] = index
        result.objects.append(parsed)
    return result


def _unsupported(doc: Any) -> bool:
    """A well-formed Kubernetes object of a kind this import does not model."""
    if not isinstance(doc, Mapping):
        return False
    api_version, kind = doc.get("apiVersion"), doc.get("kind")
    if not isinstance(api_version, str) or not api_version or not isinstance(kind, str) or not kind:
        return False
    group = api_version.rpartition("/")[0]
    if group == specs.CONFIG_GROUP:
        return kind != specs.CONFIGURATION
    if group == specs.KUEUE_GROUP:
        return kind not in specs.KINDS or _not_fairportals(doc) is not None
    return True


def _labels(doc: Mapping[str, Any]) -> Mapping[str, Any]:
    metadata = doc.get("metadata")
    labels = metadata.get("labels") if isinstance(metadata, Mapping) else None
    return labels if isinstance(labels, Mapping) else {}


def _not_fairportals(doc: Mapping[str, Any]) -> FieldError | None:
    """Why a MultiKueue document is not one of fairportal's (None: it is, or it is another kind).

    A MultiKueueCluster is a fairportal Cluster when labelled with its backend (one without is a
    Kubernetes worker cluster, which fairportal cannot drive yet); a MultiKueueConfig or
    AdmissionCheck is read only when fairportal derived it (``app.kubernetes.io/managed-by``)."""
    kind = doc.get("kind")
    labels = _labels(doc)
    if kind == specs.MULTIKUEUE_CLUSTER and specs.BACKEND_LABEL not in labels:
        return FieldError(
            _meta_field("labels", specs.BACKEND_LABEL),
            "required: a MultiKueueCluster without it is a Kubernetes worker cluster, which fairportal cannot "
            "drive yet (give the backend, simulated, external or slurm, for one of fairportal's clusters)",
        )
    if (
        kind in (specs.MULTIKUEUE_CONFIG, specs.ADMISSION_CHECK)
        and labels.get(specs.MANAGED_BY_LABEL) != specs.MANAGED_BY
    ):
        return FieldError(
            _meta_field("labels", specs.MANAGED_BY_LABEL),
            f"a {kind} is read only when fairportal derived it ({specs.MANAGED_BY_LABEL}: {specs.MANAGED_BY}); "
            "fairportal writes its MultiKueue checks from the flavors' clusters",
        )
    return None


def _meta_field(section: str, key: str) -> str:
    """The path of one label or annotation, e.g. ``metadata.labels[fairportal.io/backend]``."""
    return f"metadata.{section}[{key}]"


def _metadata_name(doc: Any) -> str:
    if isinstance(doc, Mapping) and isinstance(doc.get("metadata"), Mapping):
        name = doc["metadata"].get("name")
        return name if isinstance(name, str) else ""
    return ""


def parse_document(
    index: int, doc: Any, *, namespace: str | None = None, terms: specs.Terms = specs.COMMAND_TERMS
) -> specs.ObjectSpec | specs.ConfigurationSpec:
    """One document -> its spec; raises FieldError for the first bad field.

    ``namespace`` fills a LocalQueue's missing ``metadata.namespace`` (kubectl's ``-n``).
    """
    if not isinstance(doc, Mapping):
        raise FieldError("", f"expected a Kubernetes object (a mapping), got {type(doc).__name__}")
    api_version = doc.get("apiVersion")
    kind = doc.get("kind")
    if not isinstance(api_version, str) or not api_version:
        raise FieldError("apiVersion", "required (e.g. kueue.x-k8s.io/v1beta2)")
    if not isinstance(kind, str) or not kind:
        raise FieldError("kind", "required (e.g. ClusterQueue)")
    group, _, version = api_version.rpartition("/")
    if group == specs.CONFIG_GROUP and kind == specs.CONFIGURATION:
        _check_version(version, api_version)
        return parse_configuration(index, version, doc)
    if group != specs.KUEUE_GROUP:
        raise FieldError(
            "apiVersion",
            f"{api_version!r} is not supported (use {specs.KUEUE_GROUP}/v1beta1 or v1beta2; "
            f"{terms.skip_unsupported} skips such documents)",
        )
    _check_version(version, api_version)
    parser = _PARSERS.get(kind)
    if parser is None:
        raise FieldError(
            "kind",
            f"{kind!r} is not supported (supported: {', '.join(specs.KINDS)}, Configuration; "
            f"{terms.skip_unsupported} skips the others)",
        )
    foreign = _not_fairportals(doc)
    if foreign is not None:
        raise FieldError(foreign.field, f"{foreign.message}; {terms.skip_unsupported} skips such documents")
    unknown: dict[str, Any] = {}
    root = Reader(doc, "", unknown)
    root.ignore("apiVersion")
    root.ignore("kind")
    notes: list[str] = []
    if root.has("status"):
        root.ignore("status")
        notes.append("status ignored: it is observed state, which fairportal computes itself")
    name, own_namespace, description = _read_metadata(
        root, notes, namespaced=kind == specs.LOCAL_QUEUE, default_namespace=namespace, terms=terms
    )
    spec = parser(index, version, name, root)
    if isinstance(spec, specs.LocalQueueSpec):
        spec.namespace = own_namespace
    if description is not None:
        spec.description = description
    root.finish()
    if unknown and kind in _NOTHING_KEPT:
        path = next(iter(unknown))
        raise FieldError(
            path,
            f"is not modelled: fairportal keeps no other field of a {kind} "
            f"({'a Cluster has no place for it' if kind == specs.MULTIKUEUE_CLUSTER else 'it derives the object'})",
        )
    spec.extra = unknown
    spec.notes = notes
    return spec


def _check_version(version: str, api_version: str) -> None:
    if version not in specs.API_VERSIONS:
        raise FieldError("apiVersion", f"{api_version!r}: version {version!r} is not supported (v1beta1 or v1beta2)")


def _read_metadata(
    root: Reader,
    notes: list[str],
    *,
    namespaced: bool,
    default_namespace: str | None = None,
    terms: specs.Terms = specs.COMMAND_TERMS,
) -> tuple[str, str, str | None]:
    meta = root.child("metadata")
    name = meta.string("name")
    if not name:
        raise FieldError("metadata.name", "required")
    namespace = ""
    if namespaced:
        namespace = meta.string("namespace")
        if namespace and default_namespace and namespace != default_namespace:
            raise FieldError(
                "metadata.namespace",
                f"{namespace[:63]!r} does not match {terms.namespace} {default_namespace[:63]!r} (as kubectl, the file "
                "wins only when they agree)",
            )
        if not namespace and default_namespace:
            namespace = default_namespace
            notes.append(f"metadata.namespace not set: {default_namespace} (from {terms.namespace})")
        if not namespace:
            raise FieldError(
                "metadata.namespace", f"required for a LocalQueue (the tenant's namespace; or pass {terms.namespace})"
            )
    dropped = [key for key in SERVER_METADATA if meta.has(key)]
    for key in dropped:
        meta.ignore(key)
    if dropped:
        notes.append(f"server-set metadata ignored: {', '.join(dropped)}")
    description: str | None = None
    if meta.has("annotations"):
        annotations = meta.take("annotations")
        if not isinstance(annotations, Mapping):
            raise FieldError("metadata.annotations", "expected a mapping of strings")
        kept = dict(annotations)
        if specs.DESCRIPTION_ANNOTATION in kept:
            description = str(kept.pop(specs.DESCRIPTION_ANNOTATION))
        if LAST_APPLIED in kept:
            kept.pop(LAST_APPLIED)
            notes.append(f"annotation {LAST_APPLIED} ignored: it describes another system's apply history")
        if kept:
            meta.unknown["metadata.annotations"] = kept
    meta.finish()
    return name, namespace, description


# -- field helpers ------------------------------------------------------------------------------


def _quantity(value: Any, field: str) -> int:
    try:
        return parse_millis(value, field)
    except EngineValidationError as error:
        raise FieldError(field, error.message) from None


def quantity_text(value: Any) -> str:
    """The text a (valid) quantity was written as: a YAML number becomes its decimal text."""
    return repr(value) if isinstance(value, float) else str(value)


def _weight(reader: Reader, key: str = "weight") -> Decimal:
    """A fairSharing weight: a Kubernetes quantity (``1``, ``0.5``, ``500m``), 0 or more."""
    field = reader.field(key)
    value = reader.take(key)
    if value is None:
        return Decimal(1)
    try:
        weight = parse_quantity_decimal(value, field, allow_negative=True)
    except EngineValidationError as error:
        raise FieldError(field, f"not a valid weight (a quantity such as 1, 0.5 or 500m): {error.message}") from None
    if weight < 0:
        raise FieldError(field, f"must be 0 or more, got {value!r}")
    return weight


def _fair_sharing_weight(spec: Reader, fields: dict[str, str], notation: dict[str, str]) -> Decimal:
    fair = spec.child("fairSharing")
    if fair.data.get("weight") is not None:
        notation[specs.WEIGHT_NOTATION] = quantity_text(fair.data.get("weight"))
    weight = _weight(fair)
    fields["weight"] = fair.field("weight")
    fair.finish()
    return weight


def _admission_mode(spec: Reader, fields: dict[str, str]) -> str:
    if not spec.has("admissionScope"):
        return ""
    scope = spec.child("admissionScope")
    if not scope.has("admissionMode"):
        raise FieldError(scope.field("admissionMode"), f"required (one of {', '.join(specs.ADMISSION_MODES)})")
    mode = scope.choice("admissionMode", list(specs.ADMISSION_MODES), "")
    fields["admission_mode"] = scope.field("admissionMode")
    scope.finish()
    return mode


def _resource_groups(spec: Reader, *, limits_allowed: bool, limits_reason: str) -> list[specs.QuotaSpec]:
    """``spec.resourceGroups`` -> quota rows, in flavor order across groups."""
    quotas: list[specs.QuotaSpec] = []
    resource_group: dict[str, int] = {}
    flavor_group: dict[str, int] = {}
    order = 0
    for group_index, raw_group in spec.items("resourceGroups"):
        group = Reader(raw_group, join(spec.field("resourceGroups"), group_index), spec.unknown)
        covered = group.take("coveredResources")
        covered_field = group.field("coveredResources")
        if not isinstance(covered, list) or not covered:
            raise FieldError(covered_field, "expected a non-empty list of resource names (e.g. [cpu, memory])")
        for position, resource in enumerate(covered):
            _resource_name(resource, join(covered_field, position))
            if resource in resource_group:
                other = resource_group[resource]
                raise FieldError(
                    join(covered_field, position),
                    f"{resource!r} is already covered by resourceGroups[{other}] (a resource belongs to one group)",
                )
            resource_group[resource] = group_index
        flavors = group.items("flavors")
        if not flavors:
            raise FieldError(group.field("flavors"), "expected at least one flavor")
        for flavor_index, raw_flavor in flavors:
            flavor = Reader(raw_flavor, join(group.field("flavors"), flavor_index), spec.unknown)
            flavor_name = flavor.string("name")
            if not flavor_name:
                raise FieldError(flavor.field("name"), "required (the name of a ResourceFlavor)")
            if flavor_name in flavor_group:
                raise FieldError(
                    flavor.field("name"),
                    f"flavor {flavor_name!r} is already listed in resourceGroups[{flavor_group[flavor_name]}]",
                )
            flavor_group[flavor_name] = group_index
            listed: list[str] = []
            for resource_index, raw_resource in flavor.items("resources"):
                item = Reader(raw_resource, join(flavor.field("resources"), resource_index), spec.unknown)
                resource = _resource_name(item.take("name"), item.field("name"))
                if resource in listed:
                    raise FieldError(item.field("name"), f"{resource!r} is listed twice for flavor {flavor_name!r}")
                listed.append(resource)
                if not item.has("nominalQuota"):
                    raise FieldError(item.field("nominalQuota"), "required")
                raw_nominal = item.take("nominalQuota")
                nominal = _quantity(raw_nominal, item.field("nominalQuota"))
                texts = {"nominal": quantity_text(raw_nominal)}
                limits: dict[str, int | None] = {}
                for key, limit in (("borrowingLimit", "borrowing_limit"), ("lendingLimit", "lending_limit")):
                    raw = item.take(key)
                    if raw is not None and not limits_allowed:
                        raise FieldError(item.field(key), f"must not be set {limits_reason}")
                    limits[key] = None if raw is None else _quantity(raw, item.field(key))
                    if raw is not None:
                        texts[limit] = quantity_text(raw)
                item.finish()
                quotas.append(
                    specs.QuotaSpec(
                        flavor=flavor_name,
                        resource=resource,
                        nominal=nominal,
                        borrowing_limit=limits["borrowingLimit"],
                        lending_limit=limits["lendingLimit"],
                        flavor_order=order,
                        path=item.path,
                        texts=texts,
                    )
                )
            if sorted(listed) != sorted(covered):
                raise FieldError(
                    flavor.field("resources"),
                    f"must list exactly the coveredResources {covered}, got {listed}",
                )
            flavor.finish()
            order += 1
        group.finish()
    return quotas


def _quota_notation(quotas: list[specs.QuotaSpec]) -> dict[str, str]:
    return {
        specs.notation_key(quota.flavor, quota.resource, limit): text
        for quota in quotas
        for limit, text in quota.texts.items()
    }


def _resource_name(value: Any, field: str) -> str:
    try:
        return validate_resource_name(value, field)
    except EngineValidationError as error:
        raise FieldError(field, error.message) from None


def _reference(spec: Reader, key: str) -> str | None:
    value = spec.string(key)
    return value or None


def _reject_other_version_field(spec: Reader, version: str, names: Mapping[str, str]) -> None:
    """A v1beta2 document using a v1beta1 field name (or the reverse) is an error, not an extra."""
    for other_version, other_name in names.items():
        if other_version != version and spec.has(other_name) and other_name != names[version]:
            raise FieldError(
                spec.field(other_name),
                f"is the {other_version} name; {specs.KUEUE_GROUP}/{version} calls it {names[version]!r}",
            )


# -- kinds ------------------------------------------------------------------------------------


def parse_resource_flavor(index: int, version: str, name: str, root: Reader) -> specs.ResourceFlavorSpec:
    spec = root.child("spec")
    labels = spec.take("nodeLabels", {})
    if not isinstance(labels, Mapping) or not all(isinstance(k, str) and isinstance(v, str) for k, v in labels.items()):
        raise FieldError(spec.field("nodeLabels"), "expected a mapping of label names to string values")
    spec.finish()
    fields = {"node_labels": "spec.nodeLabels", "name": "metadata.name"}
    cluster = _pop_meta(root, "annotations", specs.CLUSTER_ANNOTATION)
    if cluster is not None:
        fields["cluster"] = _meta_field("annotations", specs.CLUSTER_ANNOTATION)
        if not cluster:
            raise FieldError(fields["cluster"], "expected the name of a cluster (a MultiKueueCluster)")
    return specs.ResourceFlavorSpec(
        index=index,
        api_version=version,
        kind=specs.RESOURCE_FLAVOR,
        name=name,
        node_labels=dict(labels),
        cluster=cluster,
        fields=fields,
    )


def parse_cohort(index: int, version: str, name: str, root: Reader) -> specs.CohortSpec:
    spec = root.child("spec")
    _reject_other_version_field(spec, version, specs.COHORT_PARENT_FIELD)
    parent_key = specs.COHORT_PARENT_FIELD[version]
    parent = _reference(spec, parent_key)
    fields = {"name": "metadata.name", "parent": spec.field(parent_key)}
    notation: dict[str, str] = {}
    weight = _fair_sharing_weight(spec, fields, notation)
    mode = _admission_mode(spec, fields)
    quotas = _resource_groups(
        spec, limits_allowed=parent is not None, limits_reason=f"on a cohort without spec.{parent_key}"
    )
    spec.finish()
    return specs.CohortSpec(
        index=index,
        api_version=version,
        kind=specs.COHORT,
        name=name,
        parent=parent,
        weight=weight,
        admission_mode=mode,
        quotas=quotas,
        fields=fields,
        notation=notation | _quota_notation(quotas),
    )


def parse_cluster_queue(index: int, version: str, name: str, root: Reader) -> specs.ClusterQueueSpec:
    spec = root.child("spec")
    _reject_other_version_field(spec, version, specs.CLUSTER_QUEUE_COHORT_FIELD)
    cohort_key = specs.CLUSTER_QUEUE_COHORT_FIELD[version]
    cohort = _reference(spec, cohort_key)
    fields = {"name": "metadata.name", "cohort": spec.field(cohort_key)}
    if spec.data.get("namespaceSelector") == {}:
        spec.ignore("namespaceSelector")  # all namespaces: what fairportal does anyway (and exports)
    strategy = spec.choice("queueingStrategy", list(specs.QUEUEING_STRATEGIES), "BestEffortFIFO")
    fields["queueing_strategy"] = spec.field("queueingStrategy")
    stop_policy = spec.choice("stopPolicy", list(specs.STOP_POLICIES), "None")
    fields["stop_policy"] = spec.field("stopPolicy")
    preemption = spec.child("preemption")
    within = preemption.choice("withinClusterQueue", list(specs.WITHIN_CLUSTER_QUEUE), "Never")
    reclaim = preemption.choice("reclaimWithinCohort", list(specs.RECLAIM_WITHIN_COHORT), "Never")
    fields["preemption_within_cluster_queue"] = preemption.field("withinClusterQueue")
    fields["reclaim_within_cohort"] = preemption.field("reclaimWithinCohort")
    preemption.finish()
    derived_checks = _admission_checks_strategy(spec)
    notation: dict[str, str] = {}
    weight = _fair_sharing_weight(spec, fields, notation)
    mode = _admission_mode(spec, fields)
    quotas = _resource_groups(
        spec,
        limits_allowed=cohort is not None,
        limits_reason=f"when spec.{cohort_key} is empty (nothing to borrow from)",
    )
    spec.finish()
    return specs.ClusterQueueSpec(
        index=index,
        api_version=version,
        kind=specs.CLUSTER_QUEUE,
        name=name,
        cohort=cohort,
        weight=weight,
        queueing_strategy=strategy,
        admission_mode=mode,
        preemption_within_cluster_queue=within,
        reclaim_within_cohort=reclaim,
        stop_policy=stop_policy,
        quotas=quotas,
        derived_checks=derived_checks,
        fields=fields,
        notation=notation | _quota_notation(quotas),
    )


def parse_local_queue(index: int, version: str, name: str, root: Reader) -> specs.LocalQueueSpec:
    spec = root.child("spec")
    cluster_queue = spec.string("clusterQueue")
    if not cluster_queue:
        raise FieldError(spec.field("clusterQueue"), "required (the ClusterQueue this LocalQueue submits to)")
    fields = {"name": "metadata.name", "namespace": "metadata.namespace", "cluster_queue": spec.field("clusterQueue")}
    stop_policy = spec.choice("stopPolicy", list(specs.STOP_POLICIES), "None")
    fields["stop_policy"] = spec.field("stopPolicy")
    notation: dict[str, str] = {}
    weight = _fair_sharing_weight(spec, fields, notation)
    spec.finish()
    return specs.LocalQueueSpec(
        index=index,
        api_version=version,
        kind=specs.LOCAL_QUEUE,
        name=name,
        cluster_queue=cluster_queue,
        weight=weight,
        stop_policy=stop_policy,
        fields=fields,
        notation=notation,
    )


def parse_priority_class(index: int, version: str, name: str, root: Reader) -> specs.WorkloadPriorityClassSpec:
    if not root.has("value"):
        raise FieldError("value", "required (the integer priority of this class)")
    value = root.take("value")
    if isinstance(value, bool) or not isinstance(value, int):
        raise FieldError("value", f"expected an integer, got {value!r}")
    return specs.WorkloadPriorityClassSpec(
        index=index,
        api_version=version,
        kind=specs.WORKLOAD_PRIORITY_CLASS,
        name=name,
        value=value,
        description=root.string("description"),
        fields={"name": "metadata.name", "value": "value", "description": "description"},
    )


# -- clusters (MultiKueue) ----------------------------------------------------------------------

# The annotation texts a MultiKueueCluster may carry are bounded (the model bounds each field; a
# map annotation is JSON text, read only when it is this short).
MAX_MAP_ANNOTATION_CHARS = 64 * 1024


def _pop_meta(root: Reader, section: str, key: str) -> str | None:
    """Take one label or annotation out of what ``_read_metadata`` kept as unknown (a string, or
    None when absent); the rest stays unknown."""
    where = f"metadata.{section}"
    kept = root.unknown.get(where)
    if not isinstance(kept, dict) or key not in kept:
        return None
    value = kept.pop(key)
    if not kept:
        root.unknown.pop(where)
    if not isinstance(value, str):
        raise FieldError(_meta_field(section, key), f"expected a string, got {type(value).__name__}")
    return value


def _take_labels(root: Reader) -> None:
    """Move ``metadata.labels`` into ``root.unknown`` as a dict (``_read_metadata`` kept them there)."""
    labels = root.unknown.get("metadata.labels")
    if labels is not None and not isinstance(labels, Mapping):
        raise FieldError("metadata.labels", "expected a mapping of strings")
    if labels is not None:
        root.unknown["metadata.labels"] = dict(labels)


def _flag(root: Reader, key: str, default: bool) -> bool:
    text = _pop_meta(root, "annotations", key)
    if text is None:
        return default
    if text not in ("true", "false"):
        raise FieldError(_meta_field("annotations", key), f'expected "true" or "false", got {text[:20]!r}')
    return text == "true"


def _kubeconfig(spec: Reader, version: str, name: str, notes: list[str]) -> None:
    """Check ``kubeConfig`` as Kueue's KubeConfig type has it (location 1-256 characters,
    locationType Secret or Path); fairportal does not store it: it reaches the cluster through
    its backend, and export writes the Secret ``specs.kubeconfig_secret``."""
    other = "v1beta2" if version == "v1beta1" else "v1beta1"
    for wrong in specs.KUBECONFIG_PATH[other][:1]:
        if spec.has(wrong) and wrong != specs.KUBECONFIG_PATH[version][0]:
            where = "spec." + ".".join(specs.KUBECONFIG_PATH[version])
            raise FieldError(spec.field(wrong), f"is the {other} name; {specs.KUEUE_GROUP}/{version} writes {where}")
    holder = spec
    for key in specs.KUBECONFIG_PATH[version][:-1]:
        holder = holder.child(key)
    key = specs.KUBECONFIG_PATH[version][-1]
    if not holder.has(key):
        raise FieldError(
            holder.field(key), "required (Kueue needs it; fairportal writes a Secret <cluster>-kubeconfig)"
        )
    config = holder.child(key)
    location = config.string("location")
    if not location or len(location) > specs.MAX_KUBECONFIG_LOCATION:
        raise FieldError(config.field("location"), f"expected 1 to {specs.MAX_KUBECONFIG_LOCATION} characters")
    location_type = config.choice("locationType", list(specs.KUBECONFIG_LOCATION_TYPES), "Secret")
    config.finish()
    if holder is not spec:
        holder.finish()
    expected = specs.kubeconfig_secret(name)
    if (location_type, location) != ("Secret", expected):
        notes.append(
            f"{config.path} not stored (fairportal reaches this cluster through its backend); "
            f"exported as the Secret {expected}"
        )


def parse_multikueue_cluster(index: int, version: str, name: str, root: Reader) -> specs.ClusterSpec:
    """A MultiKueueCluster labelled ``fairportal.io/backend``: a fairportal Cluster, its connection
    and maps in ``fairportal.io/`` annotations (secrets as references only, as the model keeps them)."""
    _take_labels(root)
    notes: list[str] = []
    fields = {"name": "metadata.name", "description": _meta_field("annotations", specs.DESCRIPTION_ANNOTATION)}
    backend_field = _meta_field("labels", specs.BACKEND_LABEL)
    backend = _pop_meta(root, "labels", specs.BACKEND_LABEL) or ""
    if backend not in specs.CLUSTER_BACKENDS:
        raise FieldError(backend_field, f"must be one of {', '.join(specs.CLUSTER_BACKENDS)}, got {backend[:40]!r}")
    fields["backend"] = backend_field
    from_settings = _flag(root, specs.FROM_SETTINGS_ANNOTATION, False)
    fields["from_settings"] = _meta_field("annotations", specs.FROM_SETTINGS_ANNOTATION)
    enabled = _flag(root, specs.ENABLED_ANNOTATION, True)
    fields["enabled"] = _meta_field("annotations", specs.ENABLED_ANNOTATION)
    connection: dict[str, str] = {}
    for annotation, model_field in specs.CONNECTION_ANNOTATIONS:
        fields[model_field] = _meta_field("annotations", annotation)
        value = _pop_meta(root, "annotations", annotation)
        if value is not None:
            connection[model_field] = value
    maps: dict[str, Any] = {}
    for annotation, model_field in specs.MAP_ANNOTATIONS:
        fields[model_field] = where = _meta_field("annotations", annotation)
        text = _pop_meta(root, "annotations", annotation)
        if text is None:
            continue
        if len(text) > MAX_MAP_ANNOTATION_CHARS:
            raise FieldError(where, f"at most {MAX_MAP_ANNOTATION_CHARS} characters of JSON, got {len(text)}")
        try:
            maps[model_field] = json.loads(text)
        except (ValueError, RecursionError) as error:  # RecursionError: nested too deep to be a flat map
            raise FieldError(where, f"expected a JSON object of name -> value: {str(error)[:80]}") from None
    spec = root.child("spec")
    _kubeconfig(spec, version, name, notes)
    spec.finish()
    return specs.ClusterSpec(
        index=index,
        api_version=version,
        kind=specs.MULTIKUEUE_CLUSTER,
        name=name,
        backend=backend,
        from_settings=from_settings,
        enabled=enabled,
        connection=connection,
        maps=maps,
        fields=fields,
        notes=notes,
    )


def _managed(root: Reader) -> None:
    """Take the managed-by label (``_not_fairportals`` checked it is fairportal's)."""
    _take_labels(root)
    _pop_meta(root, "labels", specs.MANAGED_BY_LABEL)


def parse_multikueue_config(index: int, version: str, name: str, root: Reader) -> specs.MultiKueueConfigSpec:
    """A MultiKueueConfig fairportal derived: ``spec.clusters`` as Kueue bounds it (1 to 20 unique
    names of at most 256 characters)."""
    _managed(root)
    spec = root.child("spec")
    field = spec.field("clusters")
    raw = spec.take("clusters")
    if not isinstance(raw, list) or not 1 <= len(raw) <= specs.MAX_MULTIKUEUE_CLUSTERS:
        raise FieldError(field, f"expected a list of 1 to {specs.MAX_MULTIKUEUE_CLUSTERS} MultiKueueCluster names")
    clusters: list[str] = []
    for position, item in enumerate(raw):
        if not isinstance(item, str) or not item or len(item) > specs.MAX_KUBECONFIG_LOCATION:
            raise FieldError(join(field, position), "expected the name of a MultiKueueCluster")
        if item in clusters:
            raise FieldError(join(field, position), f"{item!r} is listed twice (Kueue: must be unique)")
        clusters.append(item)
    spec.finish()
    return specs.MultiKueueConfigSpec(
        index=index, api_version=version, kind=specs.MULTIKUEUE_CONFIG, name=name, clusters=clusters
    )


def parse_admission_check(index: int, version: str, name: str, root: Reader) -> specs.AdmissionCheckSpec:
    """A MultiKueue AdmissionCheck fairportal derived: ``controllerName`` Kueue's MultiKueue
    controller, ``parameters`` a reference to a MultiKueueConfig (Kueue's
    AdmissionCheckParametersReference: apiGroup, kind, name)."""
    _managed(root)
    spec = root.child("spec")
    controller = spec.string("controllerName")
    if controller != specs.MULTIKUEUE_CONTROLLER:
        raise FieldError(
            spec.field("controllerName"), f"must be {specs.MULTIKUEUE_CONTROLLER}, got {controller[:60]!r}"
        )
    if not spec.has("parameters"):
        raise FieldError(spec.field("parameters"), "required (the MultiKueueConfig that lists the clusters)")
    parameters = spec.child("parameters")
    for key, expected in (("apiGroup", specs.KUEUE_GROUP), ("kind", specs.MULTIKUEUE_CONFIG)):
        value = parameters.string(key)
        if value != expected:
            raise FieldError(parameters.field(key), f"must be {expected}, got {value[:60]!r}")
    config = parameters.string("name")
    if not config or len(config) > 63:
        raise FieldError(parameters.field("name"), "expected the name of a MultiKueueConfig (at most 63 characters)")
    parameters.finish()
    spec.finish()
    return specs.AdmissionCheckSpec(
        index=index,
        api_version=version,
        kind=specs.ADMISSION_CHECK,
        name=name,
        config=config,
        fields={"config": parameters.field("name")},
    )


# Kueue: at most 64 rules (AdmissionChecksStrategy.admissionChecks MaxItems=64).
MAX_ADMISSION_CHECK_RULES = 64


def _admission_checks_strategy(spec: Reader) -> list[specs.DerivedCheck]:
    """``spec.admissionChecksStrategy``: rules naming a check fairportal derives (``fairportal-``)
    are returned, not kept (export writes them again from the flavors' clusters); the other rules
    (a ProvisioningRequest check...) are kept as an unknown field, exported again as written."""
    if not spec.has("admissionChecksStrategy"):
        return []
    where = spec.field("admissionChecksStrategy")
    raw = spec.take("admissionChecksStrategy")
    if not isinstance(raw, Mapping):
        raise FieldError(where, "expected a mapping with admissionChecks")
    rules = raw.get("admissionChecks")
    rules_field = join(where, "admissionChecks")
    if not isinstance(rules, list) or len(rules) > MAX_ADMISSION_CHECK_RULES:
        raise FieldError(rules_field, f"expected a list of at most {MAX_ADMISSION_CHECK_RULES} rules")
    kept: list[Any] = []
    derived: list[specs.DerivedCheck] = []
    for position, rule in enumerate(rules):
        rule_field = join(rules_field, position)
        if not isinstance(rule, Mapping) or not isinstance(rule.get("name"), str) or not rule["name"]:
            raise FieldError(join(rule_field, "name"), "required (the name of an AdmissionCheck)")
        if not rule["name"].startswith(specs.DERIVED_PREFIX):
            kept.append(rule)
            continue
        if rule.get("onFlavors"):
            raise FieldError(
                join(rule_field, "onFlavors"),
                "a MultiKueue check applies to every flavor of the ClusterQueue (Kueue refuses it per flavor)",
            )
        others = sorted(str(key) for key in set(rule) - {"name", "onFlavors"})
        if others:
            raise FieldError(join(rule_field, str(others[0])), "is not a field of an admission check rule")
        derived.append(specs.DerivedCheck(rule["name"], join(rule_field, "name")))
    if len(derived) > 1:
        raise FieldError(derived[1].path, "a ClusterQueue has at most one MultiKueue check (as in Kueue)")
    rest = {key: value for key, value in raw.items() if key != "admissionChecks"}
    if kept or rest:
        spec.unknown[where] = {**rest, "admissionChecks": kept}
    return derived


_PARSERS: dict[str, Callable[[int, str, str, Reader], specs.ObjectSpec]] = {
    specs.MULTIKUEUE_CLUSTER: parse_multikueue_cluster,
    specs.MULTIKUEUE_CONFIG: parse_multikueue_config,
    specs.ADMISSION_CHECK: parse_admission_check,
    specs.RESOURCE_FLAVOR: parse_resource_flavor,
    specs.COHORT: parse_cohort,
    specs.CLUSTER_QUEUE: parse_cluster_queue,
    specs.LOCAL_QUEUE: parse_local_queue,
    specs.WORKLOAD_PRIORITY_CLASS: parse_priority_class,
}


# Kinds with no kueue_extra: a field fairportal does not model would be lost, so it is an error.
_NOTHING_KEPT = (specs.MULTIKUEUE_CLUSTER, specs.MULTIKUEUE_CONFIG, specs.ADMISSION_CHECK)


def parse_configuration(index: int, version: str, doc: Mapping[str, Any]) -> specs.ConfigurationSpec:
    """Kueue's Configuration: ``admissionFairSharing`` becomes policy keys; the rest is reported."""
    result = specs.ConfigurationSpec(index=index, api_version=version)
    section = doc.get("admissionFairSharing")
    for key in doc:
        if key not in ("apiVersion", "kind", "admissionFairSharing"):
            result.ignored.append(str(key))
    if section is None:
        return result
    if not isinstance(section, Mapping):
        raise FieldError("admissionFairSharing", "expected a mapping")
    for key, value in section.items():
        if key in ADMISSION_FAIR_SHARING_KEYS:
            result.policy[key] = value
        else:
            result.ignored.append(f"admissionFairSharing.{key}")
    result.implicit_weights = "resourceWeights" not in section
    try:
        FairSharingPolicy.from_mapping(result.policy, field_prefix="admissionFairSharing")
    except EngineValidationError as error:
        raise FieldError(error.field, error.message) from None
    return result
