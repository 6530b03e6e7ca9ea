"""Cluster backends behind the admission pass, chosen by ``CLUSTER_BACKEND`` (one registry).

``simulated`` (built in), ``external`` (executors report through the API) and ``slurm`` (a
real Slurm cluster through its client tools). The interface is ``base.ClusterBackend``.
"""

from __future__ import annotations

from django.conf import settings
from django.utils.module_loading import import_string

from queues.backends.base import BackendUnavailable, ClusterBackend, CommandRunner, SubmissionRefused, SyncReport

REGISTRY: dict[str, str] = {
    "simulated": "queues.backends.simulated.SimulatedBackend",
    "external": "queues.backends.external.ExternalBackend",
    "slurm": "queues.backends.slurm.backend.SlurmBackend",
}


def current() -> ClusterBackend:
    """The backend ``CLUSTER_BACKEND`` names (built per call: cheap, and follows test overrides)."""
    return import_string(REGISTRY[settings.CLUSTER_BACKEND])()


__all__ = [
    "REGISTRY",
    "BackendUnavailable",
    "ClusterBackend",
    "CommandRunner",
    "SubmissionRefused",
    "SyncReport",
    "current",
]
