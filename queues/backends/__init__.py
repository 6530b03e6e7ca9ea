"""Cluster backends behind the admission pass, one per ``Cluster`` (one registry).

``simulated`` (built in), ``external`` (executors report through the API) and ``slurm`` (a
real Slurm cluster through its client tools or slurmrestd). The interface is
``base.ClusterBackend``. ``backend_for(cluster)`` builds the backend a ``Cluster`` row names,
with that row's connection (the default cluster: ``CLUSTER_BACKEND`` and the ``SLURM_*``
settings); ``current()`` is the default cluster's.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from django.utils.module_loading import import_string

from queues.backends.base import BackendUnavailable, ClusterBackend, CommandRunner, SubmissionRefused, SyncReport

if TYPE_CHECKING:
    from queues.models import Cluster

REGISTRY: dict[str, str] = {
    "simulated": "queues.backends.simulated.SimulatedBackend",
    "external": "queues.backends.external.ExternalBackend",
    "slurm": "queues.backends.slurm.backend.SlurmBackend",
}


def backend_class(name: str) -> type[ClusterBackend]:
    """The class of a registered backend (its ``starts_on_admission`` without building one)."""
    return import_string(REGISTRY[name])


def backend_for(cluster: Cluster) -> ClusterBackend:
    """The backend of ``cluster``, connected as its row says (built per call: cheap, and follows
    edits of the row and test overrides of the settings)."""
    return backend_class(cluster.effective_backend).for_cluster(cluster)


def current() -> ClusterBackend:
    """The default cluster's backend (``CLUSTER_BACKEND``)."""
    from queues.models import default_cluster

    return backend_for(default_cluster())


__all__ = [
    "REGISTRY",
    "BackendUnavailable",
    "ClusterBackend",
    "CommandRunner",
    "SubmissionRefused",
    "SyncReport",
    "backend_class",
    "backend_for",
    "current",
]
