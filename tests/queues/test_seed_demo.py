"""`manage.py seed_demo` loads a realistic cluster and can run again without duplicating."""

from io import StringIO

import pytest
from django.contrib.auth import get_user_model
from django.core.management import CommandError, call_command

from budgets.models import Budget
from core.models import PolicyChange
from queues.demo import seed_demo
from queues.models import ClusterQueue, LocalQueue, Namespace, ResourceFlavor, Workload, WorkloadState

pytestmark = pytest.mark.django_db


def counts() -> dict[str, int]:
    return {
        model.__name__: model.objects.count()
        for model in (ResourceFlavor, ClusterQueue, Namespace, LocalQueue, Workload, Budget, get_user_model())
    }


def test_given_empty_database_when_seeded_then_a_realistic_cluster_exists():
    out = StringIO()
    call_command("seed_demo", stdout=out)
    assert {"a100", "h100", "default"} <= set(ResourceFlavor.objects.values_list("name", flat=True))
    assert Namespace.objects.count() >= 6
    assert len(set(Namespace.objects.values_list("weight", flat=True))) > 1
    assert ClusterQueue.objects.filter(cohort__isnull=False).count() >= 3
    assert Budget.objects.count() >= 3
    assert Workload.objects.count() >= 200
    assert Workload.objects.filter(state=WorkloadState.PENDING).count() >= 100
    assert Workload.objects.filter(state=WorkloadState.FINISHED).count() >= 100
    assert get_user_model().objects.filter(is_staff=True).exists()
    assert get_user_model().objects.filter(is_staff=False, memberships__isnull=False).exists()
    assert "Demo logins: admin / " in out.getvalue() and "admin / admin" not in out.getvalue()  # DEBUG is off


def test_given_seeded_database_when_seeded_again_then_nothing_is_duplicated():
    call_command("seed_demo", stdout=StringIO())
    first = counts()
    call_command("seed_demo", stdout=StringIO())
    assert counts() == first


def test_given_if_empty_and_existing_cluster_then_demo_is_not_loaded():
    ClusterQueue.objects.create(name="mine")
    out = StringIO()
    call_command("seed_demo", "--if-empty", stdout=out)
    assert Workload.objects.count() == 0
    assert "not loaded" in out.getvalue()


def test_given_seed_then_workload_resources_match_pod_sets():
    call_command("seed_demo", stdout=StringIO())
    for workload in Workload.objects.prefetch_related("resources")[:50]:
        assert {row.resource: row.amount for row in workload.resources.all()} == workload.requests


def test_given_seed_without_history_then_no_audit_noise_is_written():
    call_command("seed_demo", stdout=StringIO())
    assert PolicyChange.objects.count() == 0


def test_given_history_when_seeded_then_the_loop_has_a_past_and_nothing_ran_before_it_arrived():
    from datetime import timedelta

    from django.utils import timezone

    from queues.models import AdmissionRecord, UsageSample

    started = timezone.now()
    call_command("seed_demo", "--history", "2h", stdout=StringIO())

    assert UsageSample.objects.values("sampled_at").distinct().count() >= 24  # every 5 minutes over 2h
    replayed = AdmissionRecord.objects.filter(admitted_at__gte=started - timedelta(hours=2))
    assert replayed.count() > 20
    assert replayed.filter(end_reason="Finished").exists()  # the simulated cluster ran too
    for record in AdmissionRecord.objects.select_related("workload"):
        assert record.admitted_at >= record.workload.queued_at


def test_given_bad_history_then_one_line_error_names_the_option():
    with pytest.raises(CommandError, match="--history"):
        call_command("seed_demo", "--history", "soon", stdout=StringIO())


def test_given_debug_off_when_seeding_then_no_user_gets_its_name_as_password(settings):
    settings.DEBUG = False
    report = seed_demo()

    for username, password in report.logins:
        user = get_user_model().objects.get(username=username)
        assert password != username and len(password) >= 12
        assert not user.check_password(username) and user.check_password(password)


def test_given_debug_on_when_seeding_then_the_demo_logins_are_the_usernames(settings):
    settings.DEBUG = True
    seed_demo()

    assert get_user_model().objects.get(username="admin").check_password("admin")


def test_given_history_when_seeded_then_the_admin_made_a_few_audited_changes_that_chart_markers_show():
    from datetime import timedelta

    from django.utils import timezone

    from core.access import access_for
    from queues.demo import NAMESPACES
    from queues.selectors.audit_log import change_markers

    started = timezone.now()
    call_command("seed_demo", "--history", "2h", stdout=StringIO())

    changes = list(PolicyChange.objects.order_by("at"))
    assert [(c.object_type, c.object_repr, c.surface) for c in changes] == [
        ("localqueue", "team-vision/training", "ui"),
        ("namespace", "team-recsys", "api"),
        ("namespace", "team-speech", "cli"),
    ]
    assert {c.actor_name for c in changes} == {"admin"}
    assert all(started - timedelta(hours=2) <= c.at <= started for c in changes)  # in the replayed past
    assert [c.before["weight"] for c in changes] != [c.after["weight"] for c in changes]
    # The story ends at the tables' values: the demo's policy is the same with or without history.
    assert LocalQueue.objects.get(namespace__name="team-vision", name="training").weight == 2
    for name in ("team-recsys", "team-speech"):
        assert str(Namespace.objects.get(name=name).weight.normalize()) == NAMESPACES[name][0]

    admin = access_for(get_user_model().objects.get(username="admin"))
    assert len(change_markers(admin, started - timedelta(hours=24))) == 3

    call_command("seed_demo", "--history", "1h", stdout=StringIO())
    assert PolicyChange.objects.count() == 3  # told once per database
