"""Apply parsed Kueue manifests to the database: one transaction, all or nothing, audited.

A dry run performs exactly the same writes and validations and then rolls the transaction
back, so the diff it shows is the one an apply would produce (nothing is guessed). Every
object goes through ``full_clean()`` (the one validation path); a failing object is undone
with its savepoint so the others can still be checked and every problem reported at once.
Objects not named in the file are left alone (no pruning).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any, TypeVar

from django.core.exceptions import NON_FIELD_ERRORS, ValidationError
from django.db import models, transaction

from core.audit import Audit
from core.models import Surface
from queues.admission.load import admission_units
from queues.interop.kueue import specs
from queues.interop.kueue.configuration import compare_configuration
from queues.interop.kueue.diff import changes, flat_state
from queues.interop.kueue.parse import ManifestError, parse_manifests
from queues.interop.kueue.reader import Problem
from queues.interop.kueue.report import (
    CREATED,
    DERIVED,
    UNCHANGED,
    UPDATED,
    ImportFailed,
    ImportRefused,
    ImportReport,
    ObjectResult,
)
from queues.interop.kueue.safety import find_disruptions
from queues.locks import advisory_xact_locks
from queues.models import (
    Cluster,
    ClusterQueue,
    ClusterQueueQuota,
    Cohort,
    CohortQuota,
    LocalQueue,
    Namespace,
    ResourceFlavor,
    WorkloadPriorityClass,
)
from queues.services.policy import QuotaRow, apply_stop_rule, mixed_clusters, replace_quota_rows

_M = TypeVar("_M", bound=models.Model)

_QUOTA_FIELDS = {"nominal": "nominalQuota", "borrowing_limit": "borrowingLimit", "lending_limit": "lendingLimit"}


class _SpecProblems(Exception):
    """Problems of one object, raised inside its savepoint so its writes are undone."""

    def __init__(self, problems: list[tuple[str, str]]) -> None:
        super().__init__(problems)
        self.problems = problems


def import_manifests(
    text: str,
    *,
    dry_run: bool,
    actor: Any = None,
    surface: str = Surface.CLI,
    skip_unsupported: bool = False,
    namespace: str | None = None,
    confirm_disruptive: bool = False,
    terms: specs.Terms = specs.COMMAND_TERMS,
) -> ImportReport:
    """Import every document of ``text``; raises ImportFailed (nothing saved) on bad input.

    ``skip_unsupported``, ``namespace`` and ``terms``: see ``parse.parse_manifests``. The report lists every
    deletion and re-parenting (``safety.find_disruptions``), each with what admitted work depends
    on it; a real import with any such dependency raises ImportRefused (nothing saved) unless
    ``confirm_disruptive``. A real import first takes every admission unit's lock
    (``admission:<unit>``, in key order, as a pass takes its own one first), so no pass admits
    work onto what the import checks until it commits; a dry run takes no lock.
    """
    report = ImportReport(dry_run=dry_run)
    try:
        parsed = parse_manifests(text, skip_unsupported=skip_unsupported, namespace=namespace, terms=terms)
    except ManifestError as error:
        report.problems.append(Problem(0, "", "", "", str(error)))
        raise ImportFailed(report) from None
    report.problems.extend(parsed.problems)
    report.skipped = list(parsed.skipped)
    report.configurations = [compare_configuration(configuration) for configuration in parsed.configurations]
    if report.problems:
        raise ImportFailed(report)
    with transaction.atomic():
        if not dry_run:
            advisory_xact_locks([f"admission:{unit.key}" for unit in admission_units()])
        report.disruptions = find_disruptions(parsed)
        _Importer(report, actor, surface).run(parsed)
        if report.problems:
            raise ImportFailed(report)  # rolls the whole transaction back
        if not dry_run and not confirm_disruptive and report.dependent_disruptions:
            report.refused = True
            raise ImportRefused(report)  # rolls the whole transaction back
        if dry_run:
            transaction.set_rollback(True)
    return report


def _field_problems(error: ValidationError, field_map: dict[str, str], prefix: str = "") -> list[tuple[str, str]]:
    problems: list[tuple[str, str]] = []
    for field, messages in error.message_dict.items():
        if field == NON_FIELD_ERRORS:
            path = prefix
        else:
            path = field_map.get(field, f"{prefix}.{field}" if prefix else field)
        problems.append((path, "; ".join(messages)))
    return problems


class _Importer:
    def __init__(self, report: ImportReport, actor: Any, surface: str) -> None:
        self.report = report
        self.actor = actor
        self.surface = surface
        self.failed: dict[tuple[str, str], int] = {}  # (kind, key) -> document index

    # -- plumbing ---------------------------------------------------------------------------

    def problem(self, spec: specs.ObjectSpec, field: str, message: str) -> None:
        self.report.problems.append(Problem(spec.index, spec.kind, spec.key, field, message))
        self.failed.setdefault((spec.kind, spec.key), spec.index)

    def missing(self, kind: str, name: str) -> str:
        """Why a referenced object is not there: not defined, or defined but failed above."""
        if (kind, name) in self.failed:
            return f"{kind} {name!r} could not be imported (see document {self.failed[(kind, name)]})"
        return f"{kind} {name!r} is neither in the file nor stored"

    def save(
        self,
        spec: specs.ObjectSpec,
        instance: _M,
        *,
        created: bool,
        assign: Callable[[_M], None],
        after_save: Callable[[_M], None] | None = None,
    ) -> _M | None:
        """Assign, validate and save one object in a savepoint; record its diff and audit row."""
        before_flat = {} if created else flat_state(instance)
        audit = Audit.created(instance) if created else Audit.of(instance, stored=False)  # just read
        try:
            with transaction.atomic():
                assign(instance)
                try:
                    instance.full_clean()
                except ValidationError as error:
                    raise _SpecProblems(_field_problems(error, spec.fields)) from None
                instance.save()
                if after_save is not None:
                    after_save(instance)
        except _SpecProblems as failure:
            for field, message in failure.problems:
                self.problem(spec, field, message)
            return None
        diff = changes(before_flat, flat_state(type(instance)._default_manager.get(pk=instance.pk)))
        action = CREATED if created else (UPDATED if diff else UNCHANGED)
        if action != UNCHANGED:
            audit.record(
                actor=self.actor,
                surface=self.surface,
                note=f"Kueue import, document {spec.index} ({spec.kind}, {spec.api_version})",
            )
        self.report.objects.append(
            ObjectResult(
                index=spec.index,
                kind=spec.kind,
                name=spec.key,
                action=action,
                changes=diff,
                unknown_fields=sorted(spec.extra),
                notes=list(spec.notes),
            )
        )
        return instance

    def created_on_the_way(self, instance: models.Model, spec: specs.ObjectSpec, kind: str, note: str) -> None:
        """An object the file implies but does not define (a referenced cohort, a namespace)."""
        Audit.created(instance).record(
            actor=self.actor, surface=self.surface, note=f"Kueue import, document {spec.index}: {note}"
        )
        self.report.objects.append(
            ObjectResult(index=spec.index, kind=kind, name=str(instance), action=CREATED, notes=[note])
        )

    def replace_quotas(
        self,
        spec: specs.ObjectSpec,
        owner: Cohort | ClusterQueue,
        model: type[CohortQuota] | type[ClusterQueueQuota],
        owner_field: str,
        quotas: Iterable[specs.QuotaSpec],
    ) -> None:
        """The file's resourceGroups are the full quota of ``owner``: rows are replaced (by the
        policy service's ``replace_quota_rows``), once every row is valid. The parser has refused
        a resource listed twice, so rows are checked without their owner, as the service does."""
        quotas = list(quotas)
        flavors = {f.name: f for f in ResourceFlavor.objects.filter(name__in={q.flavor for q in quotas})}
        problems: list[tuple[str, str]] = []
        rows: list[QuotaRow] = []
        for quota in quotas:
            flavor = flavors.get(quota.flavor)
            if flavor is None:
                flavor_path = quota.path.rsplit(".resources[", 1)[0] + ".name"
                problem = (flavor_path, self.missing(specs.RESOURCE_FLAVOR, quota.flavor))
                if problem not in problems:  # one line per missing flavor, not one per resource
                    problems.append(problem)
                continue
            row = model(
                **{owner_field: owner},
                flavor=flavor,
                resource=quota.resource,
                nominal=quota.nominal,
                borrowing_limit=quota.borrowing_limit,
                lending_limit=quota.lending_limit,
            )
            if isinstance(row, ClusterQueueQuota):  # a ClusterQueue tries its flavors in order
                row.flavor_order = quota.flavor_order
            try:
                row.full_clean(exclude=[owner_field])
            except ValidationError as error:
                field_map = {name: f"{quota.path}.{kueue}" for name, kueue in _QUOTA_FIELDS.items()}
                problems.extend(_field_problems(error, field_map, quota.path))
                continue
            rows.append(row)
        if problems:
            raise _SpecProblems(problems)
        replace_quota_rows(owner, rows)

    # -- kinds, in dependency order -----------------------------------------------------------

    def run(self, parsed: specs.ParsedManifests) -> None:
        for spec in parsed.of_kind(specs.MULTIKUEUE_CLUSTER):
            self.cluster(spec)
        for spec in parsed.of_kind(specs.RESOURCE_FLAVOR):
            self.resource_flavor(spec)
        for spec in parsed.of_kind(specs.WORKLOAD_PRIORITY_CLASS):
            self.priority_class(spec)
        self.cohorts(parsed.of_kind(specs.COHORT), parsed.of_kind(specs.CLUSTER_QUEUE))
        for spec in parsed.of_kind(specs.CLUSTER_QUEUE):
            self.cluster_queue(spec)
        for spec in parsed.of_kind(specs.LOCAL_QUEUE):
            self.local_queue(spec)
        self.derived(parsed)
        self.one_cluster_per_workload(parsed)

    def cluster(self, spec: specs.ClusterSpec) -> None:
        """A MultiKueueCluster -> a Cluster: backend, enabled, connection and maps are the whole
        object (an absent annotation empties its field). The installation's default cluster
        (``fairportal.io/from-settings``) takes its backend and connection from the settings, so
        only its description and enabled flag are imported."""
        instance = Cluster.objects.filter(name=spec.name).first()
        stored_default = instance is not None and instance.from_settings
        if spec.from_settings != stored_default:
            default = Cluster.objects.filter(from_settings=True).values_list("name", flat=True).first()
            if spec.from_settings:
                message = f"this installation's default cluster is {default!r}, not {spec.name!r}"
            else:
                message = 'this is the installation\'s default cluster: it needs "true" (backend and connection come from the settings)'
            self.problem(spec, spec.fields["from_settings"], message)
            return
        if spec.from_settings and instance is not None and spec.backend != instance.effective_backend:
            spec.notes.append(
                f"backend {spec.backend} not applied: the default cluster's backend is CLUSTER_BACKEND "
                f"({instance.effective_backend})"
            )

        def assign(cluster: Cluster) -> None:
            cluster.enabled = spec.enabled
            if spec.description is not None:
                cluster.description = spec.description
            cluster.backend = "" if spec.from_settings else spec.backend
            for _, field in specs.CONNECTION_ANNOTATIONS:
                setattr(cluster, field, spec.connection.get(field, "cli" if field == "slurm_transport" else ""))
            for _, field in specs.MAP_ANNOTATIONS:
                setattr(cluster, field, spec.maps.get(field, {}))

        self.save(spec, instance or Cluster(name=spec.name), created=instance is None, assign=assign)

    def derived(self, parsed: specs.ParsedManifests) -> None:
        """MultiKueueConfigs and AdmissionChecks are derived from the flavors' clusters, never
        stored: each is checked against the file (its clusters exist, its config is there) and
        listed as ``derived``."""
        configs = {spec.name: spec for spec in parsed.of_kind(specs.MULTIKUEUE_CONFIG)}
        in_file = {spec.name for spec in parsed.of_kind(specs.MULTIKUEUE_CLUSTER)} | {
            document.name for document in self.report.skipped if document.kind == specs.MULTIKUEUE_CLUSTER
        }
        named = {name for config in configs.values() for name in config.clusters}
        stored = set(Cluster.objects.filter(name__in=named).values_list("name", flat=True))
        for config in configs.values():
            for position, name in enumerate(config.clusters):
                if name not in in_file and name not in stored:
                    self.problem(config, f"spec.clusters[{position}]", self.missing(specs.MULTIKUEUE_CLUSTER, name))
            self.listed_as_derived(config)
        for check in parsed.of_kind(specs.ADMISSION_CHECK):
            if check.config not in configs:
                self.problem(
                    check,
                    check.fields["config"],
                    f"MultiKueueConfig {check.config!r} is not in the file (fairportal does not store them)",
                )
            self.listed_as_derived(check)

    def listed_as_derived(self, spec: specs.ObjectSpec) -> None:
        self.report.objects.append(
            ObjectResult(
                index=spec.index,
                kind=spec.kind,
                name=spec.key,
                action=DERIVED,
                notes=[*spec.notes, "not stored: export derives it from the clusters of each ClusterQueue's flavors"],
            )
        )

    def one_cluster_per_workload(self, parsed: specs.ParsedManifests) -> None:
        """After every write: each ClusterQueue the file names or whose flavor it touches still
        places a workload on one cluster (``policy.mixed_clusters``), and a ClusterQueue's
        MultiKueue check in the file lists every cluster its flavors are on."""
        queue_specs = {spec.name: spec for spec in parsed.of_kind(specs.CLUSTER_QUEUE)}
        flavor_specs = {spec.name: spec for spec in parsed.of_kind(specs.RESOURCE_FLAVOR)}
        rows_by_queue: dict[str, list[ClusterQueueQuota]] = {}
        touched = ClusterQueueQuota.objects.filter(
            models.Q(cluster_queue__name__in=queue_specs) | models.Q(flavor__name__in=flavor_specs)
        ).values_list("cluster_queue_id", flat=True)
        for row in ClusterQueueQuota.objects.filter(cluster_queue_id__in=touched).select_related(
            "cluster_queue", "flavor__cluster"
        ):
            rows_by_queue.setdefault(row.cluster_queue.name, []).append(row)
        checks = {spec.name: spec for spec in parsed.of_kind(specs.ADMISSION_CHECK)}
        configs = {spec.name: spec for spec in parsed.of_kind(specs.MULTIKUEUE_CONFIG)}
        for queue_name, rows in sorted(rows_by_queue.items()):
            problem = mixed_clusters([(row.flavor, row.resource) for row in rows])
            queue_spec = queue_specs.get(queue_name)
            if problem:
                if queue_spec is not None:
                    self.problem(queue_spec, "spec.resourceGroups", problem)
                else:
                    moved = sorted({row.flavor.name for row in rows} & set(flavor_specs))
                    flavor_spec = flavor_specs[moved[0]]
                    field = flavor_spec.fields.get("cluster", "metadata.name")
                    self.problem(flavor_spec, field, f"ClusterQueue {queue_name}: {problem}")
                continue
            if queue_spec is None or not queue_spec.derived_checks:
                continue
            check_ref = queue_spec.derived_checks[0]
            check = checks.get(check_ref.name)
            config = configs.get(check.config) if check is not None else None
            if config is None:
                continue  # the check was not in the file (or reported above): export derives it anyway
            on = sorted({row.flavor.cluster.name for row in rows} - set(config.clusters))
            if on:
                self.problem(
                    queue_spec,
                    check_ref.path,
                    f"AdmissionCheck {check_ref.name} dispatches to {', '.join(config.clusters)[:200]} but flavors of "
                    f"this ClusterQueue are on {', '.join(on)[:200]} (the flavor's {specs.CLUSTER_ANNOTATION} decides)",
                )

    def resource_flavor(self, spec: specs.ResourceFlavorSpec) -> None:
        instance = ResourceFlavor.objects.filter(name=spec.name).first()
        created = instance is None

        cluster = None
        if spec.cluster is not None:
            cluster = Cluster.objects.filter(name=spec.cluster).first()
            if cluster is None:
                self.problem(spec, spec.fields["cluster"], self.missing(specs.MULTIKUEUE_CLUSTER, spec.cluster))
                return

        def assign(flavor: ResourceFlavor) -> None:
            if cluster is not None:
                flavor.cluster = cluster
            flavor.node_labels = spec.node_labels
            flavor.kueue_extra = spec.extra
            if spec.description is not None:
                flavor.description = spec.description

        self.save(spec, instance or ResourceFlavor(name=spec.name), created=created, assign=assign)

    def priority_class(self, spec: specs.WorkloadPriorityClassSpec) -> None:
        instance = WorkloadPriorityClass.objects.filter(name=spec.name).first()

        def assign(priority_class: WorkloadPriorityClass) -> None:
            priority_class.value = spec.value
            priority_class.description = spec.description or ""
            priority_class.kueue_extra = spec.extra

        self.save(spec, instance or WorkloadPriorityClass(name=spec.name), created=instance is None, assign=assign)

    def cohorts(self, cohort_specs: list[specs.CohortSpec], queue_specs: list[specs.ClusterQueueSpec]) -> None:
        """Cohorts by name first (so parents can refer to each other), then their fields.

        Kueue lets a ClusterQueue or cohort name a cohort that has no object of its own; here
        every cohort is a row, so such a cohort is created (and reported) with defaults.
        """
        defined = {spec.name: spec for spec in cohort_specs}
        referrers: dict[str, specs.ObjectSpec] = {}
        for cohort_spec in cohort_specs:
            if cohort_spec.parent:
                referrers.setdefault(cohort_spec.parent, cohort_spec)
        for queue_spec in queue_specs:
            if queue_spec.cohort:
                referrers.setdefault(queue_spec.cohort, queue_spec)
        existing = set(Cohort.objects.filter(name__in=set(defined) | set(referrers)).values_list("name", flat=True))
        placeholders: set[str] = set()
        for name in sorted((set(defined) | set(referrers)) - existing):
            spec: specs.ObjectSpec = defined.get(name) or referrers[name]
            cohort = Cohort(name=name)
            try:
                cohort.full_clean()
            except ValidationError as error:
                field = (
                    "metadata.name"
                    if name in defined
                    else spec.fields.get("parent" if spec.kind == specs.COHORT else "cohort", "")
                )
                self.problem(spec, field, "; ".join(error.message_dict.get("name", ["invalid"])))
                continue
            cohort.save()
            if name in defined:
                placeholders.add(name)
            else:
                self.created_on_the_way(
                    cohort, spec, specs.COHORT, f"cohort {name!r} has no Cohort document; created with defaults"
                )
        for cohort_spec in cohort_specs:
            self.cohort(cohort_spec, created=cohort_spec.name in placeholders)

    def cohort(self, spec: specs.CohortSpec, *, created: bool) -> None:
        instance = Cohort.objects.filter(name=spec.name).first()
        if instance is None:  # its name was invalid: already reported
            return

        def assign(cohort: Cohort) -> None:
            cohort.parent = Cohort.objects.filter(name=spec.parent).first() if spec.parent else None
            cohort.weight = spec.weight
            cohort.admission_mode = spec.admission_mode
            cohort.kueue_extra = spec.extra
            cohort.kueue_notation = spec.notation
            if spec.description is not None:
                cohort.description = spec.description

        def quotas(cohort: Cohort) -> None:
            self.replace_quotas(spec, cohort, CohortQuota, "cohort", spec.quotas)

        self.save(spec, instance, created=created, assign=assign, after_save=quotas)

    def cluster_queue(self, spec: specs.ClusterQueueSpec) -> None:
        instance = ClusterQueue.objects.filter(name=spec.name).first()

        def assign(queue: ClusterQueue) -> None:
            queue.cohort = Cohort.objects.filter(name=spec.cohort).first() if spec.cohort else None
            if spec.cohort and queue.cohort is None:
                raise _SpecProblems([(spec.fields["cohort"], f"cohort {spec.cohort!r} could not be created")])
            queue.weight = spec.weight
            queue.queueing_strategy = spec.queueing_strategy
            queue.admission_mode = spec.admission_mode
            queue.preemption_within_cluster_queue = spec.preemption_within_cluster_queue
            queue.reclaim_within_cohort = spec.reclaim_within_cohort
            queue.stop_policy = spec.stop_policy
            queue.kueue_extra = spec.extra
            queue.kueue_notation = spec.notation
            if spec.description is not None:
                queue.description = spec.description

        def quotas(queue: ClusterQueue) -> None:
            self.replace_quotas(spec, queue, ClusterQueueQuota, "cluster_queue", spec.quotas)

        self.save(
            spec, instance or ClusterQueue(name=spec.name), created=instance is None, assign=assign, after_save=quotas
        )

    def local_queue(self, spec: specs.LocalQueueSpec) -> None:
        namespace = Namespace.objects.filter(name=spec.namespace).first()
        if namespace is None:
            namespace = Namespace(name=spec.namespace)
            try:
                namespace.full_clean()
            except ValidationError as error:
                self.problem(spec, "metadata.namespace", "; ".join(error.message_dict.get("name", ["invalid"])))
                return
            namespace.save()
            self.created_on_the_way(
                namespace, spec, "Namespace", f"namespace {spec.namespace!r} did not exist; created with weight 1"
            )
        cluster_queue = ClusterQueue.objects.filter(name=spec.cluster_queue).first()
        if cluster_queue is None:
            self.problem(spec, spec.fields["cluster_queue"], self.missing(specs.CLUSTER_QUEUE, spec.cluster_queue))
            return
        instance = LocalQueue.objects.filter(namespace=namespace, name=spec.name).select_related("namespace").first()

        def assign(queue: LocalQueue) -> None:
            queue.cluster_queue = cluster_queue
            queue.weight = spec.weight
            queue.stop_policy = spec.stop_policy
            apply_stop_rule(queue, actor=self.actor)  # staff or the system: records an admin-level stop
            queue.kueue_extra = spec.extra
            queue.kueue_notation = spec.notation
            if spec.description is not None:
                queue.description = spec.description

        self.save(
            spec,
            instance or LocalQueue(namespace=namespace, name=spec.name),
            created=instance is None,
            assign=assign,
        )
