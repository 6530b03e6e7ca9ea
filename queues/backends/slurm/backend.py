"""Slurm behind the admission pass: held jobs in, releases out, Slurm's own times for the ledger.

Users submit ``sbatch --hold --comment fairportal:<namespace>/<local queue> ...`` (or name an
account mapped in ``SLURM_ACCOUNT_QUEUES``). Each sync imports such jobs as pending workloads
(requests from the job's requested TRES, maximum runtime from its time limit, queue time from
its submit time); the admission pass decides; ``start`` releases the admitted jobs, each on the
partition its flavor maps to (``SLURM_FLAVOR_PARTITIONS``); ``stop`` requeues evicted jobs held.

Order of effects (what a crash in between leaves, and who repairs it):

1. The pass commits its decisions (Pending -> Admitted, Admitted -> Pending) in one transaction.
2. After the commit, ``start``/``stop`` call ``scontrol``. A crash or an unreachable controller
   here leaves admitted jobs held, or evicted jobs running.
3. The next sync compares both sides and repairs the cluster: an admitted workload whose job is
   still held is started again (``start``: its flavor's partition, then the release), one whose
   requeued job waits out Slurm's requeue delay gets ``StartTime=now`` again, a pending
   workload whose job runs is requeued held. Nothing is admitted twice: admission claims the
   workload row (``state = 'Pending'``), and a job is linked to exactly one workload (``ClusterJob``, unique per job id).

Wall time: the admission interval is moved to the job's start time in Slurm when the sync sees
it running, and closed at its end time from ``sacct`` (Slurm's accounting record), so budgets
charge what Slurm ran, to the second, even when fairportal was down while the job ran.
"""

from __future__ import annotations

import logging
import os
from collections.abc import Mapping, Sequence
from datetime import datetime
from typing import Any, ClassVar

from django.conf import settings
from django.core.exceptions import ValidationError
from django.db import IntegrityError, transaction
from django.db.models import Q
from django.utils import timezone

from queues.backends.base import BackendUnavailable, SubmissionRefused, SyncReport
from queues.backends.slurm import jobs as slurm_jobs
from queues.backends.slurm.client import SlurmClient
from queues.backends.slurm.jobs import JobRejected, JobView
from queues.backends.slurm.rest import SlurmRestClient
from queues.backends.slurm.transport import SlurmTransport
from queues.locks import try_advisory_xact_lock
from queues.models import Cluster, ClusterJob, LocalQueue, Workload, WorkloadState, default_cluster
from queues.services import lifecycle, pass_requests
from queues.services.errors import InvalidTransition

logger = logging.getLogger(__name__)

NAME = "slurm"
_ENDED = (WorkloadState.FINISHED, WorkloadState.FAILED, WorkloadState.CANCELLED)


def make_transport() -> SlurmTransport:
    """The transport ``SLURM_TRANSPORT`` names (``cli`` or ``rest``), configured from settings."""
    if settings.SLURM_TRANSPORT == "rest":
        return SlurmRestClient.from_settings()
    return SlurmClient(
        bin_dir=settings.SLURM_BIN_DIR,
        timeout=settings.SLURM_COMMAND_TIMEOUT_SECONDS,
        parallel=settings.SLURM_PARALLEL_CALLS,
    )


def transport_for(cluster: Cluster) -> SlurmTransport:
    """The transport a ``Cluster`` row describes (the default cluster: ``make_transport``).

    A REST token is read from where ``rest_secret`` points (``env:NAME`` or ``file:/path``), never
    from the row. A row that cannot be used (a missing token) raises ``BackendUnavailable``
    naming the cluster, so its sync backs off and says why.
    """
    if cluster.from_settings:
        return make_transport()
    if cluster.slurm_transport == "rest":
        if not cluster.rest_url or not cluster.rest_secret:
            raise BackendUnavailable(f"cluster {cluster.name}: the rest transport needs rest_url and rest_secret")
        kind, _, where = cluster.rest_secret.partition(":")
        try:
            return SlurmRestClient(
                cluster.rest_url,
                token=os.environ.get(where, "") if kind == "env" else "",
                token_file=where if kind == "file" else "",
                user=cluster.rest_user,
                timeout=settings.SLURM_COMMAND_TIMEOUT_SECONDS,
                parallel=settings.SLURM_PARALLEL_CALLS,
            )
        except ValueError as error:
            raise BackendUnavailable(f"cluster {cluster.name}: {str(error)[:200]}") from None
    return SlurmClient(
        bin_dir=cluster.slurm_bin_dir,
        timeout=settings.SLURM_COMMAND_TIMEOUT_SECONDS,
        parallel=settings.SLURM_PARALLEL_CALLS,
        env={"SLURM_CONF": cluster.slurm_conf} if cluster.slurm_conf else None,
    )


class SlurmBackend:
    """One Slurm cluster (``cluster``: a ``Cluster`` row; None: the default cluster, settings)."""

    name: ClassVar[str] = NAME
    starts_on_admission: ClassVar[bool] = False

    @classmethod
    def for_cluster(cls, cluster: Cluster) -> SlurmBackend:
        if cluster.from_settings:
            return cls(cluster=cluster)
        return cls(
            transport_for(cluster),
            cluster=cluster,
            flavor_partitions=cluster.flavor_partitions,
            account_queues=cluster.account_queues,
        )

    def __init__(
        self,
        client: SlurmTransport | None = None,
        *,
        cluster: Cluster | None = None,
        flavor_partitions: Mapping[str, str] | None = None,
        account_queues: Mapping[str, str] | None = None,
        resources: Mapping[str, str] | None = None,
    ) -> None:
        self.cluster = cluster if cluster is not None else default_cluster()
        self.client = client or make_transport()  # SLURM_TRANSPORT: Slurm's tools (cli) or slurmrestd (rest)
        self.flavor_partitions = dict(
            settings.SLURM_FLAVOR_PARTITIONS if flavor_partitions is None else flavor_partitions
        )
        self.account_queues = dict(settings.SLURM_ACCOUNT_QUEUES if account_queues is None else account_queues)
        self.resources = dict(settings.SLURM_RESOURCES if resources is None else resources)

    # --- after the admission pass commits ------------------------------------------------------

    def start(self, workload_ids: Sequence[int]) -> None:
        """Release the jobs of admitted workloads, each on its flavor's partition.

        A workload admitted here without a job yet (submitted with a command to a ClusterQueue
        over several clusters: the pass chose this cluster) gets it first (``_place``).
        """
        links = ClusterJob.objects.filter(cluster=self.cluster, workload_id__any_of=list(workload_ids))
        columns = ("external_id", "workload__flavor_assignment", "workload__eviction_count", "workload_id")
        rows = list(links.values_list(*columns))
        linked = {row[3] for row in rows}
        unplaced = [workload_id for workload_id in workload_ids if workload_id not in linked]
        if unplaced:  # only workloads placed here at admission (a job made at submission or import is linked)
            self._place(unplaced)
            rows += ClusterJob.objects.filter(cluster=self.cluster, workload_id__any_of=unplaced).values_list(*columns)
        if not rows:
            return
        groups: dict[tuple[str, bool], list[str]] = {}
        for job_id, assignment, evictions, _ in rows:
            groups.setdefault((self.partition_for(assignment or {}), evictions > 0), []).append(job_id)
        for (partition, requeued), job_ids in sorted(groups.items()):
            # StartTime=now: a requeued job would otherwise wait out Slurm's requeue delay.
            fields = {**({"Partition": partition} if partition else {}), **({"StartTime": "now"} if requeued else {})}
            if fields:
                self.client.update(job_ids, **fields)
        self.client.release([job_id for job_id, _, _, _ in rows])

    def stop(self, workload_ids: Sequence[int]) -> None:
        """Requeue the jobs of evicted workloads held (a released job not started yet: hold it)."""
        job_ids = list(
            ClusterJob.objects.filter(cluster=self.cluster, workload_id__any_of=list(workload_ids)).values_list(
                "external_id", flat=True
            )
        )
        if not job_ids:
            return
        refused = self.client.requeue_hold(job_ids).refused
        if refused:
            self.client.hold(list(refused))

    def check(self, workload: Workload) -> None:
        """Refuse (``SubmissionRefused``) a workload whose requests this cluster's jobs cannot express."""
        try:
            slurm_jobs.sbatch_resources(workload.requests, self.resources)
        except JobRejected as error:
            raise SubmissionRefused(str(error)) from None

    # --- placement at admission (a ClusterQueue over several clusters) ----------------------------

    def _place(self, workload_ids: Sequence[int]) -> None:
        """Create the held jobs of workloads admitted to this cluster that have none yet, and link
        them (``start`` releases them next).

        Order of effects: under the cluster's sync lock (so a sync never creates the same job),
        ``sbatch --hold`` with the comment ``fairportal-placed:<workload id>``, then the link,
        committed together with the lock's transaction. A crash between the two leaves a held
        job naming its workload, which the next sync links instead of creating another
        (``_adopt_and_place``); while a sync holds the lock, that sync places them. A job the
        cluster refuses fails its workload (the reason says why).
        """
        if not workload_ids:
            return
        error: BackendUnavailable | None = None
        with transaction.atomic():
            if not try_advisory_xact_lock(f"cluster-sync:{self.cluster.pk}"):
                return  # a sync of this cluster is at work: it places them
            awaiting = list(
                Workload.objects.filter(
                    pk__any_of=list(workload_ids),
                    state=WorkloadState.ADMITTED,
                    cluster=self.cluster,
                    cluster_job__isnull=True,
                )
                .exclude(command="")
                .select_related("local_queue__namespace")
                .order_by("id")
            )
            try:
                self._create_jobs(awaiting)
            except BackendUnavailable as failed:
                error = failed  # the links made so far commit; the rest waits for the next sync
        if error is not None:
            raise error

    def _create_jobs(self, workloads: Sequence[Workload]) -> list[str]:
        """``sbatch --hold`` each workload's job on its flavor's partition and link it; the new ids."""
        created = []
        for workload in workloads:
            try:
                options = slurm_jobs.sbatch_resources(workload.requests, self.resources)
            except JobRejected as error:
                self._refuse(workload, str(error))
                continue
            options += [
                "--hold",
                f"--comment={slurm_jobs.PLACED_PREFIX}{workload.pk}",
                f"--job-name={workload.name}",
                f"--output={settings.SLURM_SUBMIT_OUTPUT}",
            ]
            partition = self.partition_for(workload.flavor_assignment or {})
            if partition:
                options.append(f"--partition={partition}")
            if workload.max_runtime_seconds:
                options.append(f"--time={max(1, -(-workload.max_runtime_seconds // 60))}")
            try:
                job_id = self.client.submit(options, workload.command)
            except SubmissionRefused as error:
                self._refuse(workload, str(error))
                continue
            ClusterJob.objects.create(backend=NAME, cluster=self.cluster, external_id=job_id, workload=workload)
            created.append(job_id)
        return created

    def _refuse(self, workload: Workload, why: str) -> None:
        try:
            lifecycle.fail_workload(workload.pk, message=f"cluster {self.cluster.name} refused the job: {why}"[:300])
        except InvalidTransition:
            pass  # ended meanwhile

    def _adopt_and_place(self, queue: Mapping[str, tuple[JobView, dict[str, Any]]]) -> list[str]:
        """Under the sync's lock: link the jobs fairportal placed whose link was lost (a crash
        between sbatch and the link), cancel placed jobs of a workload that has another one
        already (never two jobs for one workload), and create the jobs of workloads admitted here
        still without one (a ``start`` that did not get through). Returns the new job ids (held:
        the caller releases them; they are not in ``queue``)."""
        placed: dict[str, int] = {}
        for job_id, (view, job) in queue.items():
            workload_id = slurm_jobs.placed_workload(job)
            if workload_id is not None and not view.terminal:
                placed[job_id] = workload_id
        if placed:
            known = set(
                ClusterJob.objects.filter(cluster=self.cluster, external_id__any_of=list(placed)).values_list(
                    "external_id", flat=True
                )
            )
            strays = {job_id: workload_id for job_id, workload_id in placed.items() if job_id not in known}
            if strays:
                owners = {
                    workload.pk: workload
                    for workload in Workload.objects.filter(
                        pk__any_of=sorted(set(strays.values())), cluster_job__isnull=True
                    ).exclude(command="")
                }
                cancel = []
                for job_id, workload_id in sorted(strays.items(), key=lambda item: int(item[0])):
                    owner = owners.pop(workload_id, None)
                    name = str(queue[job_id][1].get("name") or "")
                    if owner is not None and owner.name == name and queue[job_id][0].held:
                        ClusterJob.objects.create(
                            backend=NAME, cluster=self.cluster, external_id=job_id, workload=owner
                        )
                    elif queue[job_id][0].held:
                        cancel.append(job_id)  # its workload has a job already (or is gone): a double
                if cancel:
                    self.client.cancel(cancel)
        awaiting = list(
            Workload.objects.filter(state=WorkloadState.ADMITTED, cluster=self.cluster, cluster_job__isnull=True)
            .exclude(command="")
            .select_related("local_queue__namespace")
            .order_by("id")
        )
        return self._create_jobs(awaiting)

    def submit(self, workload: Workload, command: str) -> str:
        """``sbatch --hold`` a job for a workload submitted through fairportal, and link it.

        Runs inside the submission's transaction: if that rolls back after sbatch, the held job
        names its LocalQueue in its comment, so the next sync imports it (nothing is lost).
        """
        try:
            options = slurm_jobs.sbatch_resources(workload.requests, self.resources)
        except JobRejected as error:
            raise SubmissionRefused(str(error)) from None
        options += [
            "--hold",
            f"--comment={slurm_jobs.COMMENT_PREFIX}{workload.local_queue.key}",
            f"--job-name={workload.name}",
            f"--output={settings.SLURM_SUBMIT_OUTPUT}",
        ]
        if workload.max_runtime_seconds:
            options.append(f"--time={max(1, -(-workload.max_runtime_seconds // 60))}")
        job_id = self.client.submit(options, command)
        ClusterJob.objects.create(backend=NAME, cluster=self.cluster, external_id=job_id, workload=workload)
        return job_id

    def workload_name(self, job_id: str) -> str:
        """The name of the workload an imported job becomes: ``slurm-<id>`` on the default
        cluster; on another ``<cluster>-j<id>`` (job ids repeat across clusters and names are
        unique per namespace, so one tenant's jobs on two clusters must not share a name; the
        ``j`` keeps it apart from every default-cluster name), ``<cluster, cut>-c<pk>-j<id>``
        where that would be longer than a name may be (63)."""
        if self.cluster.from_settings:
            return f"slurm-{job_id}"
        name = f"{self.cluster.name}-j{job_id}"
        return name if len(name) <= 63 else f"{self.cluster.name[:40].rstrip('-')}-c{self.cluster.pk}-j{job_id}"

    def partition_for(self, assignment: Mapping[str, str]) -> str:
        """The partition of the first resource (in name order) whose flavor is mapped; '' for none."""
        for resource in sorted(assignment):
            partition = self.flavor_partitions.get(assignment[resource])
            if partition:
                return partition
        return ""

    # --- observe and reconcile ----------------------------------------------------------------

    def sync(self, now: datetime) -> SyncReport:
        report = SyncReport()
        # Links made after this listing (a submission or a placement meanwhile) are not judged
        # by it: their jobs may be missing from it only because they are newer.
        listed_at = timezone.now()
        # each record once into the v0.0.38 shape (Slurm 23.02+ prints lists and number objects)
        records = map(slurm_jobs.normalise_queue_job, self.client.jobs())
        queue = {view.job_id: (view, job) for view, job in ((slurm_jobs.view_queue_job(j), j) for j in records)}
        with transaction.atomic():
            if not try_advisory_xact_lock(f"cluster-sync:{self.cluster.pk}"):
                report.backed_off = True  # another worker is syncing right now
                return report
            created = self._adopt_and_place(queue)
            self._import(queue, report)
            self._reconcile(queue, report, listed_at)
        if created:
            self.client.release(created)  # after the links commit: a crash before leaves them held
            report.restarted.extend(
                ClusterJob.objects.filter(cluster=self.cluster, external_id__any_of=created).values_list(
                    "workload_id", flat=True
                )
            )
        return report

    def _import(self, queue: Mapping[str, tuple[JobView, dict[str, Any]]], report: SyncReport) -> None:
        """New jobs naming fairportal become pending workloads (held first if submitted unheld)."""
        candidates = {
            job_id: (view, job)
            for job_id, (view, job) in queue.items()
            if (view.pending or view.running) and slurm_jobs.names_fairportal(job, self.account_queues)
        }
        if not candidates:
            return
        known = set(
            ClusterJob.objects.filter(cluster=self.cluster, external_id__any_of=list(candidates)).values_list(
                "external_id", flat=True
            )
        )
        new = {job_id: entry for job_id, entry in candidates.items() if job_id not in known}
        rejected: dict[str, str] = {}  # job id -> why it is not a workload
        for job_id in [job_id for job_id, (view, _) in new.items() if view.running]:
            rejected[job_id] = "started before fairportal admitted it (submit with --hold)"
            new.pop(job_id)
        unheld = [job_id for job_id, (view, _) in new.items() if not view.held]
        if unheld:
            refused = self.client.hold(unheld).refused  # fairportal decides when it runs
            for job_id in refused:  # started meanwhile: it ran outside fairportal's admission
                rejected[job_id] = "started before fairportal admitted it (submit with --hold)"
                new.pop(job_id, None)
        queues = self._local_queues([job for _, job in new.values()])
        entries: list[dict[str, Any]] = []
        entry_jobs: list[str] = []
        for job_id, (_, job) in sorted(new.items(), key=lambda item: int(item[0])):
            try:
                slurm_jobs.check_supported(job)
                key = slurm_jobs.local_queue_key(job, self.account_queues)
                local_queue = queues.get(key)
                if local_queue is None:
                    raise JobRejected(f"LocalQueue {key} does not exist")
                entries.append(
                    {
                        "local_queue": local_queue,
                        "name": self.workload_name(job_id),
                        "pod_sets": [
                            {"name": "main", "count": 1, "requests": slurm_jobs.requests_of(job, self.resources)}
                        ],
                        "max_runtime_seconds": slurm_jobs.max_runtime_seconds(job),
                        "queued_at": slurm_jobs.submitted_at(job),
                    }
                )
                entry_jobs.append(job_id)
            except JobRejected as error:
                rejected[job_id] = str(error)
        fed: set[int] = set()  # ClusterQueues that got new work: one admission pass each
        for job_id, outcome in zip(entry_jobs, self._submit_many(entries, entry_jobs)):
            if isinstance(outcome, str):
                rejected[job_id] = outcome
            elif outcome is not None:
                report.imported.append(outcome.pk)
                fed.add(outcome.local_queue.cluster_queue_id)
        if rejected:
            self._reject_many(rejected, report)
        for cluster_queue_id in sorted(fed):
            pass_requests.request_admission_pass(cluster_queue_id)

    def _local_queues(self, jobs: Sequence[Mapping[str, Any]]) -> dict[str, LocalQueue]:
        """The LocalQueues the jobs name, by ``namespace/name``, in one query."""
        keys: set[tuple[str, str]] = set()
        for job in jobs:
            try:
                namespace, name = slurm_jobs.local_queue_key(job, self.account_queues).split("/", 1)
            except (JobRejected, ValueError):
                continue
            keys.add((namespace, name))
        match = Q()
        for namespace, name in sorted(keys):
            match |= Q(namespace__name=namespace, name=name)
        if not match:
            return {}
        return {
            queue.key: queue for queue in LocalQueue.objects.select_related("namespace", "cluster_queue").filter(match)
        }

    def _submit_many(self, entries: Sequence[Mapping[str, Any]], job_ids: Sequence[str]) -> list[Workload | str | None]:
        """Workloads for the jobs (the submission path's checks and validation, one INSERT each
        for the workloads, their resource rows and their links), or why each was refused; None:
        a concurrent sync imported it. Runs under the sync's advisory lock; a unique-name race
        with an API submission of the same name falls back to one job at a time."""
        from queues.services.submission import submit_checked_many
        from queues.services.workloads import insert_rows

        if not entries:
            return []
        try:
            with transaction.atomic():
                outcomes = submit_checked_many(entries, request_pass=False)
                insert_rows(
                    ClusterJob,
                    [
                        ClusterJob(backend=NAME, cluster=self.cluster, external_id=job_id, workload=outcome)
                        for job_id, outcome in zip(job_ids, outcomes)
                        if isinstance(outcome, Workload)
                    ],
                    key=("cluster_id", "external_id"),
                )
        except IntegrityError:
            return [self._submit(job_id, entry) for job_id, entry in zip(job_ids, entries)]
        return [
            outcome if isinstance(outcome, Workload) else "; ".join(_messages(outcome))[:300] for outcome in outcomes
        ]

    def _submit(self, job_id: str, entry: Mapping[str, Any]) -> Workload | str | None:
        from queues.services.submission import submit_checked

        try:
            with transaction.atomic():
                workload = submit_checked(**entry, request_pass=False)
                ClusterJob.objects.create(backend=NAME, cluster=self.cluster, external_id=job_id, workload=workload)
        except ValidationError as error:
            return "; ".join(_messages(error))[:300]
        except IntegrityError:
            if ClusterJob.objects.filter(cluster=self.cluster, external_id=job_id).exists():
                return None  # a concurrent sync imported it
            return f"a workload named {entry['name']} already exists in {entry['local_queue'].namespace.name}"
        return workload

    def _reject_many(self, rejected: Mapping[str, str], report: SyncReport) -> None:
        """Record once why jobs are not workloads (one INSERT), and say so on each job (its admin
        comment: one ``scontrol update`` per distinct message)."""
        ClusterJob.objects.bulk_create(
            [
                ClusterJob(backend=NAME, cluster=self.cluster, external_id=job_id, error=message[:300], settled=True)
                for job_id, message in rejected.items()
            ],
            ignore_conflicts=True,
        )
        by_message: dict[str, list[str]] = {}
        for job_id, message in sorted(rejected.items(), key=lambda item: int(item[0])):
            report.rejected.append(job_id)
            logger.warning("slurm job %s not imported: %s", job_id, message)
            by_message.setdefault(message, []).append(job_id)
        for message, job_ids in by_message.items():
            try:
                self.client.update(job_ids, AdminComment=f"fairportal: {message}"[:250])
            except BackendUnavailable:
                pass  # the comment is a courtesy; the rejection is recorded

    def _reconcile(
        self,
        queue: Mapping[str, tuple[JobView, dict[str, Any]]],
        report: SyncReport,
        listed_at: datetime | None = None,
    ) -> None:
        links = [
            (link_id, job_id, workload_id, state, started_at, evictions)
            for link_id, job_id, workload_id, state, started_at, evictions, created_at in ClusterJob.objects.filter(
                cluster=self.cluster, settled=False, workload__isnull=False
            ).values_list(
                "id",
                "external_id",
                "workload_id",
                "workload__state",
                "workload__started_at",
                "workload__eviction_count",
                "created_at",
            )
            if job_id in queue or listed_at is None or created_at < listed_at
        ]
        restart: list[int] = []  # admitted workloads whose job is still held
        delayed: list[str] = []  # released requeued jobs that Slurm's requeue delay still holds back
        requeue: list[tuple[str, int]] = []
        cancel: list[str] = []
        starts: dict[int, datetime] = {}
        look_up: dict[str, tuple[int, str]] = {}  # job id -> (workload id, workload state)
        settled: list[int] = []
        for link_id, job_id, workload_id, state, started_at, evictions in links:
            view = queue.get(job_id, (None, None))[0]
            if state == WorkloadState.ADMITTED:
                if view is None or view.terminal:
                    look_up[job_id] = (workload_id, state)
                elif view.running and started_at is None and view.start is not None:
                    starts[workload_id] = view.start
                elif view.held:
                    restart.append(workload_id)
                    report.restarted.append(workload_id)
                elif view.pending and view.reason == "BeginTime" and evictions > 0:
                    delayed.append(job_id)
            elif state == WorkloadState.PENDING:
                if view is None or view.terminal:
                    look_up[job_id] = (workload_id, state)
                elif view.running or (view.pending and not view.held):
                    requeue.append((job_id, workload_id))
            elif state in _ENDED:
                if view is not None and not view.terminal:
                    cancel.append(job_id)  # cancelled in fairportal: stop it in Slurm too
                else:
                    settled.append(link_id)
        if restart:
            # as ``start`` does it (the flavor's partition, StartTime for a requeued job, then the
            # release): a bare release would run a job whose start was lost to a flap, or that
            # was held again half-way, on the partition it was submitted to
            self.start(restart)
        if delayed:
            # Slurm sets a requeued job's begin time (cred_expire + 1 s, 121 s by default) when the
            # requeue's epilog completes; a release that came first had its StartTime=now undone
            self.client.update(delayed, StartTime="now")
        if requeue:
            self.stop([workload_id for _, workload_id in requeue])
            report.stopped.extend(workload_id for _, workload_id in requeue)
        if cancel:
            self.client.cancel(cancel)
        if starts:
            from queues.services.cluster import record_starts

            report.started.extend(record_starts(starts))
        if look_up:
            self._settle(look_up, queue, report)
        ClusterJob.objects.filter(pk__any_of=settled).update(settled=True)

    def _settle(
        self,
        look_up: Mapping[str, tuple[int, str]],
        queue: Mapping[str, tuple[JobView, dict[str, Any]]],
        report: SyncReport,
    ) -> None:
        """Jobs that ended (or vanished): end their workloads at Slurm's accounting times."""
        from queues.services.cluster import record_starts

        records = {
            job_id: slurm_jobs.view_accounting_job(job) for job_id, job in self.client.accounting(list(look_up)).items()
        }
        for job_id, (workload_id, state) in sorted(look_up.items(), key=lambda item: int(item[0])):
            view = records.get(job_id)
            if view is None or not view.terminal:
                queued = queue.get(job_id, (None, None))[0]
                if queued is not None and queued.terminal:
                    view = queued  # accounting lags slurmctld by a moment: its own record will do
                elif view is None and queued is None:
                    self._end(workload_id, state, "lost", None, f"Slurm has no record of job {job_id}", report)
                    continue
                else:
                    continue  # requeued or still being written: look again next time
            if state == WorkloadState.ADMITTED and view.start is not None:
                record_starts({workload_id: view.start})
            outcome = self._outcome(view)
            queued = queue.get(job_id, (None, None))[0]
            exit_code = view.exit_code or (queued.exit_code if queued is not None else None)
            message = f"Slurm job {job_id} {view.state}" + (f" (exit code {exit_code})" if exit_code else "")
            self._end(workload_id, state, outcome, view.end, message, report)

    @staticmethod
    def _outcome(view: JobView) -> str:
        if view.state in slurm_jobs.FINISHED_STATES:
            return "finished"
        if view.state in slurm_jobs.CANCELLED_STATES:
            return "cancelled"
        return "failed"

    @staticmethod
    def _end(workload_id: int, state: str, outcome: str, at: datetime | None, message: str, report: SyncReport) -> None:
        try:
            if state == WorkloadState.PENDING or outcome == "cancelled":
                lifecycle.cancel_workload(workload_id, now=at, message=message)
                report.cancelled.append(workload_id)
            elif outcome == "finished":
                lifecycle.finish_workload(workload_id, now=at, message=message)
                report.finished.append(workload_id)
            else:
                lifecycle.fail_workload(workload_id, now=at, message=message)
                report.failed.append(workload_id)
        except InvalidTransition:
            pass  # someone else ended it meanwhile: their report stands


def _messages(error: ValidationError) -> list[str]:
    if hasattr(error, "message_dict"):
        return [f"{field}: {message}" for field, messages in error.message_dict.items() for message in messages]
    return list(error.messages)
