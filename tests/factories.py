"""factory_boy factories for the domain models (tests build only what they need)."""

from __future__ import annotations

from decimal import Decimal
from typing import Any

import factory
from django.contrib.auth import get_user_model

from core.models import TenantMembership
from fairshare.quantities import parse_millis
from playground.models import Run, Scenario
from queues.models import ClusterQueue, ClusterQueueQuota, Cohort, LocalQueue, Namespace, NamespaceQuota, ResourceFlavor


class UserFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = get_user_model()
        django_get_or_create = ("username",)

    username = factory.Sequence(lambda n: f"user{n}")
    password = factory.django.Password("pw")


class ResourceFlavorFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = ResourceFlavor
        django_get_or_create = ("name",)

    name = "default"


class CohortFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = Cohort

    name = factory.Sequence(lambda n: f"cohort-{n}")


class ClusterQueueFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = ClusterQueue

    name = factory.Sequence(lambda n: f"cq-{n}")


class ClusterQueueQuotaFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = ClusterQueueQuota

    cluster_queue = factory.SubFactory(ClusterQueueFactory)
    flavor = factory.SubFactory(ResourceFlavorFactory)
    resource = "cpu"
    nominal = parse_millis("8")


class NamespaceFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = Namespace

    name = factory.Sequence(lambda n: f"team-{n}")
    weight = Decimal(1)


class NamespaceQuotaFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = NamespaceQuota

    namespace = factory.SubFactory(NamespaceFactory)
    resource = "cpu"
    hard = parse_millis("16")


class LocalQueueFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = LocalQueue

    namespace = factory.SubFactory(NamespaceFactory)
    name = factory.Sequence(lambda n: f"lq-{n}")
    cluster_queue = factory.SubFactory(ClusterQueueFactory)


class TenantMembershipFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = TenantMembership

    user = factory.SubFactory(UserFactory)
    namespace = factory.SubFactory(NamespaceFactory)
    role = TenantMembership.Role.VIEWER


def simulation_run(owner: Any, *, document: dict[str, Any] | None = None, name: str = "", **fields: Any) -> Run:
    """A stored ``/api/v1/simulations/`` run: a scenario of source ``api`` and its run, no edits."""
    scenario = Scenario.objects.create(
        name=name or "scenario", source=Scenario.Source.API, owner=owner, document=document or {}
    )
    return Run.objects.create(scenario=scenario, owner=owner, edits=[], **fields)
