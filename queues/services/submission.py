"""Submitting workloads on behalf of clients: refuse what can never run, and never submit twice.

Both wrap ``submit_workload`` (the one submission path) rather than replace it, so whatever
that function does on submission (the control loop's admission trigger) happens here too.
``submit_checked_many`` is the same for many workloads at once (a cluster sync importing
jobs): the same checks and validation, one INSERT.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from django.conf import settings
from django.core.exceptions import ValidationError
from django.db import transaction
from django.utils import timezone

from queues import backends
from queues.backends import CommandRunner, SubmissionRefused
from queues.models import Cluster, ClusterQueueQuota, IdempotencyKey, LocalQueue, Workload, default_cluster
from queues.services.errors import IdempotencyKeyReused
from queues.services.workloads import submit_workload, submit_workloads


@dataclass(frozen=True)
class Submission:
    workload: Workload
    replayed: bool  # True: an earlier request with the same Idempotency-Key created it


def covered_resources(cluster_queue_ids: Iterable[int]) -> dict[int, set[str]]:
    """The resources each ClusterQueue has a quota row for (one query for all of them)."""
    covered: dict[int, set[str]] = {cluster_queue_id: set() for cluster_queue_id in cluster_queue_ids}
    rows = ClusterQueueQuota.objects.filter(cluster_queue_id__in=list(covered)).values_list(
        "cluster_queue_id", "resource"
    )
    for cluster_queue_id, resource in rows:
        covered[cluster_queue_id].add(resource)
    return covered


def check_requests_covered(
    local_queue: LocalQueue, pod_sets: list[dict[str, Any]], covered: set[str] | None = None
) -> None:
    """Refuse a workload asking for a resource its ClusterQueue has no quota row for.

    Such a workload could never be admitted (as in Kueue, a ClusterQueue can only hand out, or
    borrow, resources it lists), so it is rejected at the door instead of pending forever.
    ``covered``: the ClusterQueue's resources when the caller loaded them already
    (``covered_resources``, for many submissions at once).
    """
    cluster_queue = local_queue.cluster_queue
    if covered is None:
        covered = covered_resources([cluster_queue.pk])[cluster_queue.pk]
    problems = []
    for index, pod_set in enumerate(pod_sets):
        for resource in pod_set.get("requests") or {}:
            if resource not in covered:
                offered = ", ".join(sorted(covered)) or "nothing"
                problems.append(
                    f"pod_sets[{index}].requests.{resource}: ClusterQueue {cluster_queue.name} "
                    f"(behind LocalQueue {local_queue.key}) has no quota for {resource}; it offers {offered}"
                )
    if problems:
        raise ValidationError({"pod_sets": problems})


def queue_clusters(cluster_queue_id: int) -> list[Cluster]:
    """The clusters a ClusterQueue's flavors belong to, in name order (one query)."""
    flavors = ClusterQueueQuota.objects.filter(cluster_queue_id=cluster_queue_id).values("flavor_id")
    return list(Cluster.objects.filter(flavors__id__in=flavors).distinct().order_by("name"))


def submit_checked(*, local_queue: LocalQueue, command: str | None = None, **fields: Any) -> Workload:
    """``submit_workload`` after the coverage check; the same arguments.

    With ``command`` the job that runs it is created on the cluster the workload will run on:

    - its ClusterQueue's flavors are all on one cluster (always so with one cluster): that
      cluster's backend creates the job now (Slurm: a held ``sbatch``), in the same
      transaction, so a refused job leaves no workload behind;
    - they span several clusters: the flavor the admission pass assigns decides the cluster,
      so the command is kept with the workload and the job is created there once admitted
      (``SlurmBackend.start``); every one of those clusters must run commands and accept the
      requests now (checked here, a refusal names the field).

    A cluster that does not answer raises ``BackendUnavailable`` (the API's 503).
    """
    check_requests_covered(local_queue, fields.get("pod_sets") or [])
    if not command:
        return submit_workload(local_queue=local_queue, **fields)
    clusters = queue_clusters(local_queue.cluster_queue_id) or [default_cluster()]
    runners: list[CommandRunner] = []
    for cluster in clusters:
        runner = backends.backend_for(cluster)
        if not isinstance(runner, CommandRunner):
            where = "" if len(clusters) == 1 else f" (cluster {cluster.name}, one of its ClusterQueue's)"
            raise ValidationError(
                {"command": [f"the {runner.name} cluster backend{where} runs no commands; leave command out"]}
            )
        runners.append(runner)
    with transaction.atomic():
        workload = submit_workload(local_queue=local_queue, **fields)
        try:
            if len(runners) == 1:
                runners[0].submit(workload, command)
            else:
                for command_runner in runners:
                    command_runner.check(workload)
                Workload.objects.filter(pk=workload.pk).update(command=command)
                workload.command = command
        except SubmissionRefused as error:
            raise ValidationError({"command": [f"the cluster refused the job: {str(error)[:200]}"]}) from None
    return workload


def submit_checked_many(
    entries: Sequence[Mapping[str, Any]], *, request_pass: bool = True
) -> list[Workload | ValidationError]:
    """``submit_checked`` (without ``command``) for many submissions at once: the same coverage
    check, then ``submit_workloads`` (the same validation, one INSERT). Each entry holds
    ``submit_checked``'s keyword arguments; the result holds, in order, each new workload or the
    ValidationError that refused it (the same error ``submit_checked`` would raise).
    """
    covered = covered_resources({entry["local_queue"].cluster_queue_id for entry in entries})
    outcomes: list[Workload | ValidationError | None] = []
    checked: list[Mapping[str, Any]] = []
    for entry in entries:
        try:
            check_requests_covered(
                entry["local_queue"], entry.get("pod_sets") or [], covered[entry["local_queue"].cluster_queue_id]
            )
        except ValidationError as error:
            outcomes.append(error)
        else:
            outcomes.append(None)
            checked.append(entry)
    submitted = iter(submit_workloads(checked, request_pass=request_pass))
    return [outcome if outcome is not None else next(submitted) for outcome in outcomes]


def request_fingerprint(body: Any) -> str:
    """SHA-256 of the body as canonical JSON: key order and spacing do not matter."""
    canonical = json.dumps(body, sort_keys=True, separators=(",", ":"), ensure_ascii=False, default=str)
    return hashlib.sha256(canonical.encode()).hexdigest()


def submit_once(*, user: Any, key: str | None, fingerprint: str, submit: Callable[[], Workload]) -> Submission:
    """Run ``submit`` unless ``user`` already succeeded with ``key``; then return that workload.

    The key row is inserted first, in the same transaction as the workload. A concurrent request
    with the same key blocks on the unique index until the first commits, then replays its
    result; if the first fails, its key row disappears with it and the second proceeds.
    Raises ``IdempotencyKeyReused`` when the key comes back with a different body.
    """
    if key is None:
        return Submission(workload=submit(), replayed=False)
    with transaction.atomic():
        record, claimed = IdempotencyKey.objects.get_or_create(
            user=user, key=key, defaults={"request_hash": fingerprint}
        )
        if not claimed:
            if record.request_hash != fingerprint:
                raise IdempotencyKeyReused(key)
            return Submission(workload=Workload.objects.get(pk=record.workload_id), replayed=True)  # type: ignore[misc]  # a finished submission has its workload
        workload = submit()
        IdempotencyKey.objects.filter(pk=record.pk).update(workload=workload)
    return Submission(workload=workload, replayed=False)


def prune_idempotency_keys(*, now: datetime | None = None) -> int:
    """Delete the keys older than ``IDEMPOTENCY_KEY_RETENTION`` (one set-based DELETE); a client
    retrying after that long gets a new workload. Returns how many were deleted."""
    cutoff = (now or timezone.now()) - timedelta(seconds=settings.IDEMPOTENCY_KEY_RETENTION_SECONDS)
    deleted, _ = IdempotencyKey.objects.filter(created_at__lt=cutoff).delete()
    return deleted
