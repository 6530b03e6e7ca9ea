"""Tenancy rules that keep other tenants out of what a tenant reads inside its own objects."""

from __future__ import annotations

from types import MappingProxyType

import pytest

from core.access import Access
from core.redaction import (
    OTHER_TENANT_NAMESPACE,
    OTHER_TENANT_QUEUE,
    OTHER_TENANT_WORKLOAD,
    reason_redactor,
    redact_names,
    redact_policy_state,
)
from fairshare.admission import reasons

HIDDEN = {"team-b", "team-ab", "default"}


@pytest.mark.parametrize(
    ("written", "read"),
    [
        (
            "Preempted: " + reasons.preempted("team-b/train-021", "(reclaimWithinCohort)"),
            f"Preempted: preempted by {OTHER_TENANT_WORKLOAD} (reclaimWithinCohort)",
        ),
        (
            reasons.waiting_for_fair_share("LocalQueue", "team-ab/train", "1.2", "team-a/train", "0.5", "short"),
            f"{OTHER_TENANT_QUEUE} was ahead in fair-share order (score 1.2; team-a/train has 0.5) and was "
            "admitted first; now short",
        ),
        (
            reasons.blocked_by_head("cq", "team-b/big-job", "InsufficientQuota"),
            f"ClusterQueue cq is StrictFIFO and its head {OTHER_TENANT_WORKLOAD} cannot be admitted "
            "(InsufficientQuota); nothing behind it is tried until it is",
        ),
        ("namespace team-b quota for cpu is 4", f"{OTHER_TENANT_NAMESPACE} quota for cpu is 4"),
        ("evicted for team-b/main.", f"evicted for {OTHER_TENANT_WORKLOAD}."),
    ],
)
def test_given_a_control_loop_sentence_naming_another_tenant_when_redacted_then_it_names_nobody(written, read):
    assert redact_names(written, HIDDEN) == read


@pytest.mark.parametrize(
    "text",
    [
        "LocalQueue team-a/train was ahead",  # the viewer's own queue
        "insufficient quota for nvidia.com/gpu in flavor default of ClusterQueue cq",  # a flavor named like a namespace
        "requests 2 example.com/fpga",
        "team-abc/train and xteam-b/train",  # names that only contain a hidden one
    ],
)
def test_given_a_sentence_naming_only_visible_things_when_redacted_then_unchanged(text):
    assert redact_names(text, HIDDEN) == text


@pytest.mark.django_db
def test_given_an_admin_or_an_executor_then_sentences_are_read_as_written():
    for access in (Access(is_authenticated=True, is_admin=True), Access(is_authenticated=True, is_executor=True)):
        assert reason_redactor(access)("preempted by team-b/x") == "preempted by team-b/x"


def test_given_a_tenant_then_staff_only_budget_fields_leave_the_picture_and_admins_keep_them():
    tenant = Access(is_authenticated=True, roles=MappingProxyType({1: "viewer"}))
    admin = Access(is_authenticated=True, is_admin=True)
    state = {"allocated_hours": "10", "webhook_url": "https://x/secret", "alert_emails": "a@b.c"}

    assert redact_policy_state(tenant, "budget", state) == {"allocated_hours": "10"}
    assert redact_policy_state(admin, "budget", state) == state
    assert redact_policy_state(tenant, "localqueue", {"webhook_url": "kept"}) == {"webhook_url": "kept"}
    assert redact_policy_state(tenant, "budget", None) is None
