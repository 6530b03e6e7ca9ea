"""The snapshot binds a workload whose job is on one cluster to that cluster (issue 27's placement
rule, the Django side): the cluster of its ``ClusterJob`` link becomes ``bound_cluster``, the
flavors' clusters ``flavor_clusters``, and the real admission pass assigns it only that
cluster's flavors. The clusters are the built-in simulated ones (the links are the rows a
Slurm import writes; ``tests/queues/backends/test_slurm_placement.py`` does it with real Slurm).
"""

from __future__ import annotations

import pytest

from fairshare.policy import FairSharingPolicy
from queues.admission import load as snapshot
from queues.admission import passes as admission
from queues.models import Cluster, ClusterJob, Workload, WorkloadReason, default_cluster
from tests.queues.loop_fixtures import make_local_queue, submit
from tests.queues.test_clusters import two_flavor_queue

pytestmark = pytest.mark.django_db


def run_pass(cq):
    return admission.run_admission_pass(snapshot.unit_for_cluster_queue(cq.pk).key)


def test_given_a_job_linked_on_the_second_cluster_then_it_is_bound_there_and_admitted_on_its_flavor_only():
    default = default_cluster()
    second = Cluster.objects.create(name="second", backend="simulated")
    cq = two_flavor_queue("spread", [("on-default", default, "4"), ("on-second", second, "1")])
    lq = make_local_queue("team-a", "main", cq)
    submit(lq, "free", cpu="1")
    imported = submit(lq, "imported", cpu="1")
    waiting = submit(lq, "imported-too", cpu="1")
    for external_id, workload in (("101", imported), ("102", waiting)):  # what the second cluster's import writes
        ClusterJob.objects.create(backend="slurm", cluster=second, external_id=external_id, workload=workload)

    loaded = snapshot.build_snapshot(snapshot.unit_for_cluster_queue(cq.pk), FairSharingPolicy())
    bound = {w.key: w.bound_cluster for w in loaded.snapshot.workloads}
    assert bound == {"team-a/free": "", "team-a/imported": "second", "team-a/imported-too": "second"}
    assert dict(loaded.snapshot.flavor_clusters) == {"on-default": "default", "on-second": "second"}

    result = run_pass(cq)

    assert sorted(result.admitted) == ["team-a/free", "team-a/imported"]
    placed = {w.name: (w.flavor_assignment.get("cpu"), w.cluster_id) for w in Workload.objects.all()}
    assert placed["free"] == ("on-default", default.pk)
    assert placed["imported"] == ("on-second", second.pk)  # on-default had room first in order
    reason = WorkloadReason.objects.get(workload=waiting)
    assert "bound to cluster second (its job was submitted there): flavor on-default of other clusters" in (
        reason.message
    )
