"""The kernel of safe concurrent edits: what a version covers (``core.versions``) and how an
``If-Match`` header is read (``core.api.etags``, RFC 9110 sections 8.8.3 and 13.1.1)."""

from __future__ import annotations

import datetime
import json
from decimal import Decimal
from typing import Any

import pytest
from django.db import models
from django.test import RequestFactory, override_settings
from rest_framework.exceptions import ValidationError
from rest_framework.request import Request

from budgets.models import Budget
from core.access import access_for
from core.api.etags import IF_MATCH_PATTERN, PreconditionRequired, etag, if_match
from core.models import PolicyChange, Surface
from core.versions import LIVE_FIELDS, StaleVersion, expecting_version, last_change, lock_current, version_of
from queues.models import ClusterQueue, ClusterQueueQuota, Cohort, LocalQueue, Namespace, ResourceFlavor
from tests.factories import UserFactory

POLICY_MODELS = [ResourceFlavor, Cohort, ClusterQueue, Namespace, LocalQueue, Budget]


def request_with(header: str | None) -> Request:
    extra = {} if header is None else {"HTTP_IF_MATCH": header}
    return Request(RequestFactory().patch("/", **extra))


# -- If-Match ----------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("header", "matches", "misses"),
    [
        ('"abc"', ["abc"], ["abd", ""]),
        ('"abc", "def"', ["abc", "def"], ["ghi"]),
        ('"abc",\t"def"', ["def"], ["ghi"]),
        (' "abc" ', ["abc"], ["ab"]),
        ('W/"abc"', [], ["abc"]),  # strong comparison: a weak tag never matches
        ('W/"abc", "def"', ["def"], ["abc"]),
        ("*", ["abc", "anything"], []),
        ('""', [""], ["abc"]),
    ],
)
def test_given_an_if_match_then_it_matches_exactly_the_strong_tags_it_lists(header, matches, misses):
    condition = if_match(request_with(header))

    assert condition is not None
    assert all(condition.matches(tag) for tag in matches)
    assert not any(condition.matches(tag) for tag in misses)


@pytest.mark.parametrize("header", ["abc", "", "  ", '"abc', 'W/"a', '"a" "b"', '"a",', '"a"b"', "**", '"\x00"'])
def test_given_a_malformed_if_match_then_a_400_names_the_header(header):
    with pytest.raises(ValidationError) as refused:
        if_match(request_with(header))

    assert list(refused.value.detail) == ["If-Match"]


def test_given_an_overlong_if_match_then_it_is_refused_without_being_read():
    with pytest.raises(ValidationError, match="longer than 1024"):
        if_match(request_with('"' + "a" * 2000 + '"'))


def test_given_no_if_match_then_no_condition_unless_the_deployment_requires_one():
    assert if_match(request_with(None)) is None
    with override_settings(API_REQUIRE_IF_MATCH=True), pytest.raises(PreconditionRequired):
        if_match(request_with(None))


def test_given_the_schema_pattern_then_it_accepts_what_the_parser_accepts_in_printable_ascii():
    import re

    pattern = re.compile(IF_MATCH_PATTERN)
    for header in ('"abc"', '"a", W/"b"', "*", '""', etag("0" * 32)):
        assert pattern.match(header) and if_match(request_with(header)) is not None
    for header in ("abc", '"a" "b"', "", '"a",'):
        assert not pattern.match(header)


# -- versions ---------------------------------------------------------------------------------------


def _changed(field: models.Field, value: Any) -> Any:
    """Another valid-looking stored value for ``field``."""
    if isinstance(field, models.BooleanField):
        return not value
    if isinstance(field, models.DecimalField):
        return (value or Decimal(0)) + Decimal("0.5")
    if isinstance(field, (models.IntegerField, models.PositiveIntegerField)):
        return (value or 0) + 1
    if isinstance(field, models.DateTimeField):
        return (value or datetime.datetime(2026, 1, 1, tzinfo=datetime.UTC)) + datetime.timedelta(seconds=1)
    if isinstance(field, models.JSONField):
        return {"changed": 1} if not isinstance(value, list) else [*value, 1]
    return f"{value}x"


@pytest.mark.parametrize("model", POLICY_MODELS, ids=lambda m: m.__name__)
def test_every_stored_field_but_the_live_ones_is_part_of_the_version(model, db):
    """A new field on a policy model is covered without anyone remembering to add it. (``db``: a
    new flavor's cluster defaults to the installation's default cluster, a row.)"""
    instance = model()
    base = version_of(instance)
    covered = []
    for field in model._meta.concrete_fields:
        if field.primary_key or field.name in LIVE_FIELDS:
            continue
        if isinstance(field, models.ForeignKey):
            before = getattr(instance, field.attname)
            setattr(instance, field.attname, 424242)
            changed = version_of(instance)
            setattr(instance, field.attname, before)
        else:
            before = getattr(instance, field.attname)
            setattr(instance, field.attname, _changed(field, before))
            changed = version_of(instance)
            setattr(instance, field.attname, before)
        assert changed != base, f"{model.__name__}.{field.name} does not change the version"
        covered.append(field.name)
    assert covered


@pytest.mark.parametrize("model", [Cohort, ClusterQueue, Namespace, LocalQueue], ids=lambda m: m.__name__)
def test_the_live_fields_are_not_part_of_the_version(model):
    instance = model()
    base = version_of(instance)
    for name in LIVE_FIELDS & {f.name for f in model._meta.concrete_fields}:
        setattr(instance, name, {"cpu": 1.5} if name != "usage_last_update" and name != "weighted_share" else None)
    instance.weighted_share = 0.25

    assert version_of(instance) == base


def test_equal_values_read_differently_are_the_same_version():
    """A weight typed as 2 and read back as 2.0000, a time in another zone: the same stored state."""
    first = Budget(name="b", allocated_hours=Decimal("2"), anchor=datetime.datetime(2026, 1, 1, tzinfo=datetime.UTC))
    second = Budget(
        name="b",
        allocated_hours=Decimal("2.000"),
        anchor=datetime.datetime(2026, 1, 1, 1, tzinfo=datetime.timezone(datetime.timedelta(hours=1))),
    )
    second.created_at = first.created_at

    assert version_of(first) == version_of(second)
    assert len(version_of(first)) == 32 and json.dumps(version_of(first))


@pytest.mark.django_db
def test_given_a_tenant_then_staff_only_fields_are_left_out_of_its_version():
    namespace = Namespace.objects.create(name="team-a")
    queue = LocalQueue.objects.create(
        namespace=namespace, name="main", cluster_queue=ClusterQueue.objects.create(name="cq")
    )
    budget = Budget.objects.create(name="hours", local_queue=queue, allocated_hours=Decimal(10))
    tenant = access_for(UserFactory(username="tenant"))
    admin = access_for(UserFactory(username="root", is_staff=True))
    before = (version_of(budget, tenant), version_of(budget, admin))

    budget.alert_emails = "ops@example.org"

    assert version_of(budget, tenant) == before[0]
    assert version_of(budget, admin) != before[1]


@pytest.mark.django_db
def test_given_quota_rows_then_their_values_are_in_the_version_and_their_ids_are_not():
    flavor = ResourceFlavor.objects.create(name="default")
    queue = ClusterQueue.objects.create(name="cq")
    row = ClusterQueueQuota.objects.create(cluster_queue=queue, flavor=flavor, resource="cpu", nominal=1000)
    base = version_of(ClusterQueue.objects.get(pk=queue.pk))

    ClusterQueueQuota.objects.filter(pk=row.pk).update(nominal=1001)
    changed = version_of(ClusterQueue.objects.get(pk=queue.pk))
    ClusterQueueQuota.objects.all().delete()
    ClusterQueueQuota.objects.create(cluster_queue=queue, flavor=flavor, resource="cpu", nominal=1000)

    assert changed != base
    assert version_of(ClusterQueue.objects.get(pk=queue.pk)) == base


@pytest.mark.django_db(transaction=True)
def test_lock_current_refuses_to_run_outside_a_transaction():
    queue = ClusterQueue.objects.create(name="cq")

    with pytest.raises(RuntimeError, match="inside the write's transaction"):
        lock_current(queue)


@pytest.mark.django_db
def test_given_a_stale_version_then_expecting_version_refuses_before_the_block_and_names_the_last_change():
    admin = UserFactory(username="root", is_staff=True)
    queue = ClusterQueue.objects.create(name="cq")
    opened = version_of(queue)
    ClusterQueue.objects.filter(pk=queue.pk).update(weight=Decimal(3))
    PolicyChange.objects.create(
        actor=admin,
        actor_name="root",
        surface=Surface.ADMIN,
        action=PolicyChange.Action.UPDATE,
        object_type="clusterqueue",
        object_id=str(queue.pk),
        object_repr="cq",
        before={"weight": "1"},
        after={"weight": "3"},
    )
    ran = []

    with pytest.raises(StaleVersion) as stale, expecting_version(queue, opened):
        ran.append(True)

    assert not ran
    assert stale.value.current == version_of(ClusterQueue.objects.get(pk=queue.pk))
    assert stale.value.change is not None
    assert stale.value.change.changed_fields == ["weight"]
    assert "root changed weight at " in stale.value.sentence() and "(Django admin)" in stale.value.sentence()


@pytest.mark.django_db
def test_given_the_current_version_then_the_block_runs_on_the_reloaded_object():
    queue = ClusterQueue.objects.create(name="cq")
    stale_copy = ClusterQueue.objects.get(pk=queue.pk)
    ClusterQueue.objects.filter(pk=queue.pk).update(description="newer")

    with expecting_version(stale_copy, version_of(ClusterQueue.objects.get(pk=queue.pk))):
        seen = stale_copy.description

    assert seen == "newer"


@pytest.mark.django_db
def test_given_no_audit_row_then_last_change_is_none():
    assert last_change(Cohort.objects.create(name="quiet")) is None
