"""PolicyChange and TenantMembership moved from queues to core without moving a row: a database
migrated before the move keeps its audit trail and memberships, read through ``core.models``;
a database that ran fairportal's token migration does not run it again as core's."""

from __future__ import annotations

import pytest
from django.contrib.contenttypes.models import ContentType
from django.db import connection
from django.db.migrations.executor import MigrationExecutor
from django.db.migrations.recorder import MigrationRecorder

from core.models import PolicyChange, TenantMembership
from tests.factories import UserFactory

BEFORE_MOVE = [
    ("core", "0001_hash_existing_api_tokens"),
    ("queues", "0011_delete_simulationrun"),
    ("playground", "0002_scenario_source_api"),
]


def _migrate(targets: list[tuple[str, str]]) -> MigrationExecutor:
    executor = MigrationExecutor(connection)
    executor.loader.build_graph()
    executor.migrate(targets)
    return executor


def _latest() -> list[tuple[str, str]]:
    executor = MigrationExecutor(connection)
    return executor.loader.graph.leaf_nodes()


@pytest.mark.django_db(transaction=True)
def test_given_rows_written_before_the_move_when_migrated_then_core_models_read_them():
    user = UserFactory(username="auditor")
    try:
        old_apps = _migrate(BEFORE_MOVE).loader.project_state(BEFORE_MOVE).apps
        OldPolicyChange = old_apps.get_model("queues", "PolicyChange")
        OldMembership = old_apps.get_model("queues", "TenantMembership")
        Namespace = old_apps.get_model("queues", "Namespace")
        namespace = Namespace.objects.create(name="team-a")
        change = OldPolicyChange.objects.create(
            actor_id=user.pk,
            actor_name="auditor",
            surface="api",
            action="update",
            object_type="namespace",
            object_id=str(namespace.pk),
            object_repr="team-a",
            before={"weight": "1"},
            after={"weight": "2"},
        )
        membership = OldMembership.objects.create(user_id=user.pk, namespace_id=namespace.pk, role="editor")
        ContentType.objects.get_or_create(app_label="queues", model="policychange")
        ContentType.objects.filter(app_label="core", model="policychange").delete()
    finally:
        _migrate(_latest())
    ContentType.objects.clear_cache()

    moved = PolicyChange.objects.get(pk=change.pk)
    assert (moved.actor, moved.object_repr, moved.changed_fields()) == (user, "team-a", ["weight"])
    kept = TenantMembership.objects.select_related("namespace").get(pk=membership.pk)
    assert (kept.user, kept.namespace.name, kept.role) == (user, "team-a", TenantMembership.Role.EDITOR)
    assert list(user.memberships.all()) == [kept]
    assert ContentType.objects.get(app_label="core", model="policychange").model_class() is PolicyChange


@pytest.mark.django_db(transaction=True)
def test_given_fairportal_ran_the_token_migration_then_core_counts_it_as_applied():
    recorder = MigrationRecorder(connection)
    recorder.record_unapplied("core", "0001_hash_existing_api_tokens")
    recorder.record_applied("fairportal", "0001_hash_existing_api_tokens")
    try:
        executor = MigrationExecutor(connection)
        assert ("core", "0001_hash_existing_api_tokens") in executor.loader.applied_migrations
        assert executor.migration_plan(executor.loader.graph.leaf_nodes()) == []
    finally:
        recorder.record_applied("core", "0001_hash_existing_api_tokens")
        recorder.record_unapplied("fairportal", "0001_hash_existing_api_tokens")
