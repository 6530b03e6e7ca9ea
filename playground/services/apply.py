"""Apply a run's edits: the stored policy becomes what the edited scenario says, in one transaction.

Safe by construction:

* Admins only (``PermissionDenied`` otherwise), and only a succeeded run of a scenario that is
  not a tenant's redacted view.
* What to write is recomputed from the scenario and the edits (``policy_diff``), never taken
  from the stored run; only ``database`` changes are written. Fair-sharing knobs come back as
  the environment lines to set; simulation-only changes are not policy.
* Before writing, the live value of every changed field must still be what the run's baseline
  assumed (or already be the edited value, which is then skipped). Anything else - the object
  is gone, someone changed it meanwhile - is an ``ApplyConflict`` listing each field, and
  nothing is written: re-run from today's cluster instead.
* Writes go through the same services as the UI and the API (``save_policy_object`` for
  cohorts, ClusterQueues, namespaces and LocalQueues, ``update_budget`` for budgets), so the
  models' ``clean()`` rules hold and every object gets its ``PolicyChange`` row (surface
  ``playground``). Those rows are noted with the run and linked to the ``Application``.
* All of it is one transaction: any failure, including a validation error half-way, leaves
  the policy, the audit log and the application exactly as before.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from decimal import Decimal
from typing import Any

from django.core.exceptions import PermissionDenied
from django.core.exceptions import ValidationError as DjangoValidationError
from django.db import models, transaction
from django.db.models import Max
from django.utils import timezone

from budgets.models import Budget
from budgets.services import update_budget
from core.access import access_for
from core.models import PolicyChange, Surface
from fairshare.simulation.scenario import Scenario as EngineScenario
from fairshare.simulation.scenario import parse_scenario
from playground import documents
from playground.live_export import export_policy
from playground.models import Application, Run
from playground.policy_diff import (
    DATABASE,
    KIND_LABELS,
    PolicyDelta,
    budget_fields,
    budget_key,
    environment_lines,
    object_fields,
    policy_deltas,
)
from queues.locks import advisory_xact_lock
from queues.models import (
    ClusterQueue,
    ClusterQueueQuota,
    Cohort,
    CohortQuota,
    LocalQueue,
    Namespace,
    NamespaceQuota,
    ResourceFlavor,
)
from queues.services.errors import FieldErrors
from queues.services.policy import QuotaRow, save_policy_object


class ApplyError(Exception):
    """The run cannot be applied; ``problems`` are sentences naming the object and field."""

    def __init__(self, problems: Sequence[str]) -> None:
        self.problems = list(problems)
        super().__init__("; ".join(self.problems))


class ApplyConflict(ApplyError):
    """The live policy is no longer what the run's baseline assumed."""


class RunNotFinished(ApplyError):
    """Only a succeeded run has a comparison to justify an apply."""


@dataclass(frozen=True)
class _Target:
    """One stored object and the changes to write to it."""

    kind: str
    name: str
    deltas: tuple[PolicyDelta, ...]


# Scenario field -> model field, per kind (quotas are written as rows, foreign keys by name).
_MODEL_FIELDS = {
    "cohort": {"weight": "weight", "admissionMode": "admission_mode", "parent": "parent"},
    "clusterQueue": {
        "cohort": "cohort",
        "weight": "weight",
        "queueingStrategy": "queueing_strategy",
        "admissionMode": "admission_mode",
        "stopPolicy": "stop_policy",
        "preemption.withinClusterQueue": "preemption_within_cluster_queue",
        "preemption.reclaimWithinCohort": "reclaim_within_cohort",
    },
    "namespace": {"weight": "weight", "preemption.withinNamespace": "preemption_within_namespace"},
    "localQueue": {"clusterQueue": "cluster_queue", "weight": "weight", "stopPolicy": "stop_policy"},
    "budget": {"allocatedHours": "allocated_hours", "action": "action"},
}
_QUOTA_FIELDS = {"cohort": "quotas", "clusterQueue": "quotas", "namespace": "quota"}


def apply_run(run: Run, *, actor: Any) -> Application:
    """Write the run's database changes and their audit rows; returns the ``Application``."""
    if not access_for(actor).can_apply_runs:
        raise PermissionDenied("only admins can apply a playground run")
    if run.status != Run.Status.SUCCEEDED:
        raise RunNotFinished([f"only a succeeded run can be applied; this one is {run.status}"])
    if run.scenario.redacted:
        raise ApplyError(
            ["this scenario is a tenant's view of the cluster (other namespaces renamed): apply from an admin's run"]
        )
    baseline = documents.validate(run.scenario.document)
    _, edited = documents.apply_edits(run.scenario.document, run.edits)
    deltas = policy_deltas(baseline, edited)
    database = [delta for delta in deltas if delta.target == DATABASE]
    environment = environment_lines(deltas, edited.policy)
    if not database:
        hint = f" (set {', '.join(environment)} in the environment instead)" if environment else ""
        raise ApplyError([f"nothing to apply: these edits change no stored policy{hint}"])
    with transaction.atomic():
        advisory_xact_lock("playground:apply")  # one apply at a time: the audit rows below are ours
        watermark = PolicyChange.objects.aggregate(last=Max("id"))["last"] or 0
        live = parse_scenario(export_policy(now=timezone.now()), limits=None)  # the live policy, not a posted file
        targets = _targets(_still_to_do(database, live))
        if not targets:
            raise ApplyError(["nothing to apply: the live policy already has every edited value"])
        for target in targets:
            _write(target, edited, actor)
        note = f"playground run {run.pk}" + (f": {run.title}" if run.title else "")
        changes = PolicyChange.objects.filter(id__gt=watermark, surface=Surface.PLAYGROUND).order_by("id")
        changes.update(note=note)
        application = Application.objects.create(
            run=run,
            actor=actor,
            actor_name=getattr(actor, "username", ""),
            deltas=[delta.to_dict() for target in targets for delta in target.deltas],
            environment=environment,
        )
        application.policy_changes.set(changes)
    return application


def apply_blockers(deltas: Iterable[PolicyDelta]) -> list[str]:
    """Why the run page's Apply cannot work, before anyone presses it: the stored objects its
    edits change that do not exist (a preset or a file names objects of its own). Empty: none.
    A few queries, one per changed object; the apply itself checks again under its lock."""
    reasons = []
    for kind, name in sorted({(delta.kind, delta.name) for delta in deltas}):
        if kind == "budget":
            exists = Budget.objects.filter(name=name).exists()
        else:
            try:
                _load(kind, name)
                exists = True
            except (models.ObjectDoesNotExist, ValueError):
                exists = False
        if not exists:
            reasons.append(f"{KIND_LABELS[kind]} {name} does not exist in the database")
    return reasons


# --- what is left to do ----------------------------------------------------------------------


def _live_values(live: EngineScenario) -> dict[tuple[str, str], dict[str, Any]]:
    values: dict[tuple[str, str], dict[str, Any]] = {}
    for kind, objects, key in (
        ("cohort", live.cohorts, "name"),
        ("clusterQueue", live.cluster_queues, "name"),
        ("namespace", live.namespaces, "name"),
        ("localQueue", live.local_queues, "key"),
    ):
        for obj in objects:
            values[(kind, getattr(obj, key))] = object_fields(kind, obj)
    for index, budget in enumerate(live.budgets):
        values[("budget", budget_key(budget, index))] = budget_fields(budget)
    return values


def _still_to_do(deltas: Iterable[PolicyDelta], live: EngineScenario) -> list[PolicyDelta]:
    """The deltas whose live value is the run's baseline; raises ``ApplyConflict`` for the rest."""
    values = _live_values(live)
    todo, conflicts = [], []
    for delta in deltas:
        current = values.get((delta.kind, delta.name))
        if current is None:
            conflicts.append(
                f"{KIND_LABELS[delta.kind]} {delta.name} does not exist in the database: "
                "a run applies to stored objects only (create it first)"
            )
            continue
        value = current[delta.field]
        if value == delta.after:
            continue  # already the edited value: nothing to write
        if value != delta.before:
            conflicts.append(
                f"{delta.label} is {value!r} now, the run assumed {delta.before!r}: re-run from today's cluster"
            )
            continue
        todo.append(delta)
    if conflicts:
        raise ApplyConflict(conflicts)
    return todo


def _targets(deltas: Iterable[PolicyDelta]) -> list[_Target]:
    grouped: dict[tuple[str, str], list[PolicyDelta]] = defaultdict(list)
    for delta in deltas:
        grouped[(delta.kind, delta.name)].append(delta)
    order = {kind: index for index, kind in enumerate(("cohort", "clusterQueue", "namespace", "localQueue", "budget"))}
    return [
        _Target(kind, name, tuple(items))
        for (kind, name), items in sorted(grouped.items(), key=lambda item: (order[item[0][0]], item[0][1]))
    ]


# --- writing ---------------------------------------------------------------------------------


def _write(target: _Target, edited: EngineScenario, actor: Any) -> None:
    if target.kind == "budget":
        _write_budget(target, actor)
        return
    instance = _load(target.kind, target.name)
    engine_object = _engine_object(edited, target.kind, target.name)
    quotas = None
    for delta in target.deltas:
        if delta.field in ("quotas", "quota"):
            quotas = _quota_rows(target.kind, engine_object)
            continue
        model_field = _MODEL_FIELDS[target.kind][delta.field]
        setattr(instance, model_field, _model_value(target.kind, delta.field, delta.after))
    try:
        save_policy_object(
            instance,
            quotas=quotas,
            quotas_field=_QUOTA_FIELDS.get(target.kind, "quotas"),
            actor=actor,
            surface=Surface.PLAYGROUND,
        )
    except FieldErrors as error:
        raise ApplyError(_sentences(target, error.errors)) from None


def _write_budget(target: _Target, actor: Any) -> None:
    budget = Budget.objects.filter(name=target.name).first()
    if budget is None:
        raise ApplyConflict([f"Budget {target.name} does not exist in the database"])
    changes = {
        _MODEL_FIELDS["budget"][delta.field]: Decimal(str(delta.after))
        if delta.field == "allocatedHours"
        else delta.after
        for delta in target.deltas
    }
    try:
        update_budget(budget, actor=actor, surface=Surface.PLAYGROUND, **changes)
    except DjangoValidationError as error:
        raise ApplyError(_sentences(target, FieldErrors.messages(error))) from None


def _load(kind: str, name: str) -> models.Model:
    if kind == "cohort":
        return Cohort.objects.get(name=name)
    if kind == "clusterQueue":
        return ClusterQueue.objects.get(name=name)
    if kind == "namespace":
        return Namespace.objects.get(name=name)
    namespace, local = name.split("/", 1)
    return LocalQueue.objects.select_related("namespace").get(namespace__name=namespace, name=local)


def _engine_object(scenario: EngineScenario, kind: str, name: str) -> Any:
    objects: Any = {
        "cohort": {c.name: c for c in scenario.cohorts},
        "clusterQueue": {q.name: q for q in scenario.cluster_queues},
        "namespace": {n.name: n for n in scenario.namespaces},
        "localQueue": {lq.key: lq for lq in scenario.local_queues},
    }[kind]
    return objects[name]


def _model_value(kind: str, field: str, value: Any) -> Any:
    """A display value of the diff as the model stores it."""
    if field == "weight":
        return Decimal(str(value))
    if field == "admissionMode":
        return value or ""
    if field == "parent":
        return None if value is None else _by_name(Cohort, value, "Cohort")
    if field == "cohort":
        return None if value is None else _by_name(Cohort, value, "Cohort")
    if field == "clusterQueue":
        return _by_name(ClusterQueue, value, "ClusterQueue")
    return value


def _by_name(model: type[models.Model], name: str, label: str) -> models.Model:
    found = model._default_manager.filter(name=name).first()
    if found is None:
        raise ApplyConflict([f"{label} {name} does not exist in the database"])
    return found


def _quota_rows(kind: str, engine_object: Any) -> list[QuotaRow]:
    """Unsaved quota rows for the edited quotas (amounts in millis, flavors in their order)."""
    if kind == "namespace":
        return [
            NamespaceQuota(resource=resource, hard=amount) for resource, amount in sorted(engine_object.quota.items())
        ]
    flavors = {flavor.name: flavor for flavor in ResourceFlavor.objects.all()}
    rows: list[QuotaRow] = []
    for order, flavor_quotas in enumerate(engine_object.quotas):
        flavor = flavors.get(flavor_quotas.flavor)
        if flavor is None:
            raise ApplyConflict([f"ResourceFlavor {flavor_quotas.flavor} does not exist in the database"])
        for resource, quota in sorted(flavor_quotas.resources.items()):
            fields: dict[str, Any] = {
                "flavor": flavor,
                "resource": resource,
                "nominal": quota.nominal,
                "borrowing_limit": quota.borrowing_limit,
                "lending_limit": quota.lending_limit,
            }
            if kind == "clusterQueue":
                rows.append(ClusterQueueQuota(flavor_order=order, **fields))
            else:
                rows.append(CohortQuota(**fields))
    return rows


def _sentences(target: _Target, errors: Mapping[str, Any]) -> list[str]:
    label = f"{KIND_LABELS[target.kind]} {target.name}"
    sentences = []
    for field, messages in errors.items():
        flat = messages if isinstance(messages, list) else [str(messages)]
        sentences.append(f"{label} {field}: {'; '.join(str(m) for m in flat)}")
    return sentences
