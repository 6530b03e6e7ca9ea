"""One registry picks the cluster backend; each one implements the same interface.

``current()`` is the default cluster's backend (a ``Cluster`` row, read from the database)."""

from __future__ import annotations

import pytest
from django.conf import settings

from queues import backends
from queues.backends.base import ClusterBackend


@pytest.mark.django_db
@pytest.mark.parametrize("name", settings.CLUSTER_BACKENDS)
def test_given_each_configurable_backend_then_the_registry_builds_one_implementing_the_interface(name, settings):
    settings.CLUSTER_BACKEND = name

    backend = backends.current()

    assert isinstance(backend, ClusterBackend)
    assert backend.name == name


def test_given_registry_then_it_names_exactly_the_configurable_backends():
    assert set(backends.REGISTRY) == set(settings.CLUSTER_BACKENDS)


@pytest.mark.django_db
def test_given_only_the_simulated_cluster_starts_work_on_admission_then_the_others_wait_for_a_report(settings):
    starts = {}
    for name in settings.CLUSTER_BACKENDS:
        settings.CLUSTER_BACKEND = name
        starts[name] = backends.current().starts_on_admission

    assert starts == {"simulated": True, "external": False, "slurm": False}
