"""What a Kueue manifest says, in fairportal's terms (pure data, no Django).

Quantities are integer millis, weights ``Decimal``; ``extra`` maps the path of every field that
fairportal does not model (``spec.flavorFungibility``) to its value, so it can be stored and
exported again. ``fields`` maps model field names to manifest paths so that a model validation
error can be reported against the line the user wrote. ``notation`` keeps each quantity's text as
written (``800Gi``, ``500m``), keyed by ``notation_key``, so export writes it back unchanged.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field
from decimal import Decimal
from typing import Any

from fairshare import types as engine

KUEUE_GROUP = "kueue.x-k8s.io"
CONFIG_GROUP = "config.kueue.x-k8s.io"
API_VERSIONS = ("v1beta1", "v1beta2")
DEFAULT_EXPORT_VERSION = "v1beta2"

RESOURCE_FLAVOR = "ResourceFlavor"
COHORT = "Cohort"
CLUSTER_QUEUE = "ClusterQueue"
LOCAL_QUEUE = "LocalQueue"
WORKLOAD_PRIORITY_CLASS = "WorkloadPriorityClass"
CONFIGURATION = "Configuration"
# MultiKueue's kinds: fairportal's clusters, and the check and config it derives from them.
MULTIKUEUE_CLUSTER = "MultiKueueCluster"
MULTIKUEUE_CONFIG = "MultiKueueConfig"
ADMISSION_CHECK = "AdmissionCheck"
KINDS = (
    RESOURCE_FLAVOR,
    COHORT,
    CLUSTER_QUEUE,
    LOCAL_QUEUE,
    WORKLOAD_PRIORITY_CLASS,
    MULTIKUEUE_CLUSTER,
    MULTIKUEUE_CONFIG,
    ADMISSION_CHECK,
)

# Field names that differ between the two API versions (v1beta1 -> v1beta2).
COHORT_PARENT_FIELD = {"v1beta1": "parent", "v1beta2": "parentName"}
CLUSTER_QUEUE_COHORT_FIELD = {"v1beta1": "cohort", "v1beta2": "cohortName"}

# Enumerations as Kueue spells them (the models' choices hold the same values; a test checks it).
# Kept here as plain tuples so that parsing needs no Django.
ADMISSION_MODES = engine.ADMISSION_MODES  # defined once, in the engine
QUEUEING_STRATEGIES = ("StrictFIFO", "BestEffortFIFO")
STOP_POLICIES = ("None", "Hold", "HoldAndDrain")
WITHIN_CLUSTER_QUEUE = ("Never", "LowerPriority", "LowerOrNewerEqualPriority", "ExceedWeight")
# Values Kueue itself accepts (ExceedWeight is KEP-752's, which Kueue never merged).
KUEUE_WITHIN_CLUSTER_QUEUE = ("Never", "LowerPriority", "LowerOrNewerEqualPriority")
RECLAIM_WITHIN_COHORT = ("Never", "LowerPriority", "Any")

# An annotation for the one fairportal field Kueue has no place for.
DESCRIPTION_ANNOTATION = "fairportal.io/description"

# -- clusters in Kueue terms (MultiKueue; apis/kueue/v1beta1|v1beta2/multikueue_types.go) ---------
# A fairportal Cluster is a MultiKueueCluster labelled with its backend; a MultiKueueCluster without
# the label is a Kubernetes worker cluster, which fairportal cannot drive yet (an unsupported document).
BACKEND_LABEL = "fairportal.io/backend"
# The flavor's cluster: an annotation, not a nodeLabel (Kueue injects nodeLabels into the pods'
# nodeSelector, and no node carries this label).
CLUSTER_ANNOTATION = "fairportal.io/cluster"
# The installation's default cluster (backend and connection from the settings).
FROM_SETTINGS_ANNOTATION = "fairportal.io/from-settings"
# The connection, as annotations of the MultiKueueCluster: (annotation, Cluster field). Secrets are
# references only (env:NAME or file:/path), as the model stores them.
CONNECTION_ANNOTATIONS = (
    ("fairportal.io/slurm-transport", "slurm_transport"),
    ("fairportal.io/slurm-bin-dir", "slurm_bin_dir"),
    ("fairportal.io/slurm-conf", "slurm_conf"),
    ("fairportal.io/rest-url", "rest_url"),
    ("fairportal.io/rest-secret", "rest_secret"),
    ("fairportal.io/rest-user", "rest_user"),
)
MAP_ANNOTATIONS = (
    ("fairportal.io/flavor-partitions", "flavor_partitions"),
    ("fairportal.io/account-queues", "account_queues"),
)
ENABLED_ANNOTATION = "fairportal.io/enabled"
CLUSTER_BACKENDS = ("simulated", "external", "slurm")
SLURM_TRANSPORTS = ("cli", "rest")
# Kueue's MultiKueue admission check controller, and what its parameters reference.
MULTIKUEUE_CONTROLLER = "kueue.x-k8s.io/multikueue"
KUBECONFIG_LOCATION_TYPES = ("Secret", "Path")
MAX_MULTIKUEUE_CLUSTERS = 20  # MultiKueueConfigSpec.clusters: MaxItems=20
MAX_KUBECONFIG_LOCATION = 256  # KubeConfig.location: MaxLength=256
# MultiKueueConfigs and AdmissionChecks fairportal derives are labelled so; their names (and the
# ClusterQueue's admission check rules naming them) start with DERIVED_PREFIX.
MANAGED_BY_LABEL = "app.kubernetes.io/managed-by"
MANAGED_BY = "fairportal"
DERIVED_PREFIX = "fairportal-"
# v1beta1 writes the kubeConfig at spec.kubeConfig, v1beta2 at spec.clusterSource.kubeConfig.
KUBECONFIG_PATH = {"v1beta1": ("kubeConfig",), "v1beta2": ("clusterSource", "kubeConfig")}


def kubeconfig_secret(cluster: str) -> str:
    """The Secret a MultiKueueCluster's kubeConfig names: ``<cluster>-kubeconfig``. fairportal never
    creates it (a Slurm or simulated cluster has no kubeconfig), so a real Kueue marks the cluster
    inactive and dispatches nothing to it."""
    return f"{cluster}-kubeconfig"


def multikueue_name(clusters: tuple[str, ...]) -> str:
    """The name of the MultiKueueConfig and AdmissionCheck for this ordered list of clusters:
    ``fairportal-<a>-<b>`` while that is a DNS label (at most 63 characters, as the check's
    ``parameters.name`` must be), else ``fairportal-`` and 16 hex digits of its SHA-256."""
    joined = DERIVED_PREFIX + "-".join(clusters)
    if len(joined) <= 63:
        return joined
    return DERIVED_PREFIX + hashlib.sha256(",".join(clusters).encode()).hexdigest()[:16]


@dataclass(frozen=True)
class Terms:
    """How a surface spells the import's options in its messages: a command's errors name its
    flags, the HTTP API's errors its parameters, never the other's."""

    skip_unsupported: str
    namespace: str
    confirm_disruptive: str


COMMAND_TERMS = Terms("--skip-unsupported", "--namespace", "--confirm-disruptive")
API_TERMS = Terms("skipUnsupported=true", "the namespace parameter", "confirmDisruptive=true")


@dataclass
class QuotaSpec:
    flavor: str
    resource: str
    nominal: int
    borrowing_limit: int | None
    lending_limit: int | None
    flavor_order: int
    path: str  # e.g. spec.resourceGroups[0].flavors[1].resources[0]
    texts: dict[str, str] = field(default_factory=dict)  # {"nominal": "800Gi", ...} as written


def notation_key(flavor: str, resource: str, limit: str) -> str:
    """The ``kueue_notation`` key of one quota quantity (``limit``: nominal, borrowing_limit,
    lending_limit); the weight's key is ``WEIGHT_NOTATION``."""
    return f"quotas[{flavor}/{resource}].{limit}"


WEIGHT_NOTATION = "weight"


@dataclass
class ObjectSpec:
    """Common part of every imported object."""

    index: int
    api_version: str
    kind: str
    name: str
    description: str | None = None  # None: the manifest does not say (keep what is stored)
    extra: dict[str, Any] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)
    fields: dict[str, str] = field(default_factory=dict)
    notation: dict[str, str] = field(default_factory=dict)  # see notation_key

    @property
    def key(self) -> str:
        return self.name


@dataclass
class ResourceFlavorSpec(ObjectSpec):
    node_labels: dict[str, str] = field(default_factory=dict)
    cluster: str | None = None  # the fairportal.io/cluster annotation (None: keep, or the default)


@dataclass
class ClusterSpec(ObjectSpec):
    """A MultiKueueCluster labelled ``fairportal.io/backend``: one fairportal Cluster."""

    backend: str = ""
    from_settings: bool = False
    enabled: bool = True
    connection: dict[str, str] = field(default_factory=dict)  # Cluster field -> annotation text
    maps: dict[str, Any] = field(default_factory=dict)  # flavor_partitions / account_queues


@dataclass
class MultiKueueConfigSpec(ObjectSpec):
    """A MultiKueueConfig fairportal derived: checked against the file, never stored."""

    clusters: list[str] = field(default_factory=list)


@dataclass
class AdmissionCheckSpec(ObjectSpec):
    """A MultiKueue AdmissionCheck fairportal derived: checked against the file, never stored."""

    config: str = ""


@dataclass(frozen=True)
class DerivedCheck:
    """A ClusterQueue's admission check rule naming a check fairportal derives (not stored)."""

    name: str
    path: str


@dataclass
class CohortSpec(ObjectSpec):
    parent: str | None = None
    weight: Decimal = Decimal(1)
    admission_mode: str = ""
    quotas: list[QuotaSpec] = field(default_factory=list)


@dataclass
class ClusterQueueSpec(ObjectSpec):
    cohort: str | None = None
    weight: Decimal = Decimal(1)
    queueing_strategy: str = "BestEffortFIFO"
    admission_mode: str = ""
    preemption_within_cluster_queue: str = "Never"
    reclaim_within_cohort: str = "Never"
    stop_policy: str = "None"
    quotas: list[QuotaSpec] = field(default_factory=list)
    derived_checks: list[DerivedCheck] = field(default_factory=list)


@dataclass
class LocalQueueSpec(ObjectSpec):
    namespace: str = ""
    cluster_queue: str = ""
    weight: Decimal = Decimal(1)
    stop_policy: str = "None"

    @property
    def key(self) -> str:
        return f"{self.namespace}/{self.name}"


@dataclass
class WorkloadPriorityClassSpec(ObjectSpec):
    value: int = 0


@dataclass
class ConfigurationSpec:
    """The ``admissionFairSharing`` section of Kueue's Configuration, as policy keys."""

    index: int
    api_version: str
    policy: dict[str, Any] = field(default_factory=dict)  # camelCase keys of FairSharingPolicy
    ignored: list[str] = field(default_factory=list)  # other sections, reported, not applied
    # admissionFairSharing is present but has no resourceWeights: Kueue then weighs every resource 1.
    implicit_weights: bool = False


@dataclass(frozen=True)
class SkippedDocument:
    """A document of a kind fairportal does not model, skipped on request (``--skip-unsupported``)."""

    index: int
    api_version: str
    kind: str
    name: str

    def __str__(self) -> str:
        label = f"{self.kind} {self.name}" if self.name else self.kind
        return f"document {self.index}: {label} ({self.api_version})"


@dataclass
class ParsedManifests:
    objects: list[ObjectSpec] = field(default_factory=list)
    configurations: list[ConfigurationSpec] = field(default_factory=list)
    problems: list[Any] = field(default_factory=list)  # list[Problem]
    skipped: list[SkippedDocument] = field(default_factory=list)  # with skip_unsupported

    def of_kind(self, kind: str) -> list[Any]:
        return [obj for obj in self.objects if obj.kind == kind]
