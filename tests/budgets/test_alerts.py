"""Alerts: each threshold fires once per period (e-mail, BudgetEvent), webhooks retried apart."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from datetime import timedelta
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest
from django.core import mail
from django.test import override_settings

from budgets import tasks
from budgets.models import Budget, BudgetEvent
from tests.budgets.helpers import T0, admission_pass, at, budget, cluster, finish, reconcile, submit

pytestmark = pytest.mark.django_db


class Receiver:
    """A real HTTP server on localhost that answers with the given statuses, then 200."""

    def __init__(self, statuses: list[int]) -> None:
        self.statuses = list(statuses)
        self.bodies: list[dict] = []
        receiver = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:  # noqa: N802 - http.server's naming
                length = int(self.headers["Content-Length"])
                receiver.bodies.append(json.loads(self.rfile.read(length)))
                status = receiver.statuses.pop(0) if receiver.statuses else 200
                self.send_response(status)
                self.end_headers()
                self.wfile.write(b"{}")

            def log_message(self, *args: object) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/hooks/budget"
        self.thread = threading.Thread(target=self.server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)

    def __enter__(self) -> Receiver:
        self.thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.server.shutdown()
        self.server.server_close()


@pytest.fixture
def receiver_factory(settings) -> Iterator:
    settings.WEBHOOK_ALLOWED_NETWORKS = ["127.0.0.1/32"]  # the receiver is local; webhooks reach public addresses only
    started: list[Receiver] = []

    def start(statuses: list[int]) -> Receiver:
        receiver = Receiver(statuses).__enter__()
        started.append(receiver)
        return receiver

    yield start
    for receiver in started:
        receiver.__exit__()


def test_given_usage_climbing_then_each_threshold_mails_once_per_period_and_again_next_period(
    eager_tasks, django_capture_on_commit_callbacks
):
    cq, lq = cluster()
    team = budget(
        lq,
        hours="2",
        alert_thresholds=[50, 80, 100],
        alert_emails="lead@example.org, ops@example.org",
        renewal=Budget.Renewal.DAYS,
        renewal_days=1,
    )
    submit(lq, "long", duration=10 * 3600)
    admission_pass(cq, at())

    with django_capture_on_commit_callbacks(execute=True):
        for minutes in (30, 59, 61, 90, 97, 100, 121, 150, 180):  # 50% at 60 min, 80% at 96, 100% at 120
            reconcile(team, at(minutes=minutes))

    fired = list(BudgetEvent.objects.filter(kind="ThresholdCrossed").order_by("at").values_list("threshold", "at"))
    assert [(int(threshold), moment) for threshold, moment in fired] == [
        (50, at(minutes=61)),
        (80, at(minutes=97)),
        (100, at(minutes=121)),
    ]
    assert [message.subject for message in mail.outbox] == [
        "[fairportal] budget team-budget reached 50%: 1.02 of 2 hours used this period",
        "[fairportal] budget team-budget reached 80%: 1.62 of 2 hours used this period",
        "[fairportal] budget team-budget reached 100%: 2.02 of 2 hours used this period (exhausted: new work is held)",
    ]
    assert mail.outbox[0].to == ["lead@example.org", "ops@example.org"]
    assert BudgetEvent.objects.filter(kind="Exhausted").count() == 1
    assert all(event.email_sent_at for event in BudgetEvent.objects.filter(kind="ThresholdCrossed"))

    with django_capture_on_commit_callbacks(execute=True):
        next_day = T0 + timedelta(days=1)
        reconcile(team, next_day + timedelta(minutes=1))  # renewed: the running job starts the day at 0
        reconcile(team, next_day + timedelta(hours=1, minutes=1))

    assert len(mail.outbox) == 4
    assert mail.outbox[3].subject.startswith("[fairportal] budget team-budget reached 50%")
    assert BudgetEvent.objects.filter(kind="Renewed", period_start=next_day).count() == 1


def test_given_a_threshold_event_when_the_email_task_runs_twice_then_one_mail_is_sent():
    cq, lq = cluster()
    team = budget(lq, hours="1", alert_thresholds=[50], alert_emails="lead@example.org")
    job = submit(lq, "job")
    admission_pass(cq, at())
    finish(job, at(minutes=40))
    reconcile(team, at(hours=1))
    event = BudgetEvent.objects.get(kind="ThresholdCrossed")

    tasks.send_budget_email.apply(args=[event.pk])
    tasks.send_budget_email.apply(args=[event.pk])  # an acks-late redelivery

    assert len(mail.outbox) == 1
    assert "Used:      0.67 of 1 hours" in mail.outbox[0].body


def test_given_a_webhook_that_fails_once_then_the_task_retries_and_delivers_the_event(receiver_factory):
    receiver = receiver_factory([500])
    cq, lq = cluster()
    team = budget(lq, hours="1", alert_thresholds=[80], webhook_url=receiver.url)
    submit(lq, "job", duration=7200)
    admission_pass(cq, at())
    reconcile(team, at(minutes=50))
    event = BudgetEvent.objects.get(kind="ThresholdCrossed")
    assert event.webhook_status == BudgetEvent.Delivery.PENDING

    tasks.post_budget_webhook.apply(args=[event.pk])

    event.refresh_from_db()
    assert (event.webhook_status, event.webhook_attempts) == (BudgetEvent.Delivery.DELIVERED, 2)
    assert len(receiver.bodies) == 2
    body = receiver.bodies[-1]
    assert {k: body[k] for k in ("event", "budget", "threshold", "allocatedHours", "unit")} == {
        "event": "ThresholdCrossed",
        "budget": "team-budget",
        "threshold": 80.0,
        "allocatedHours": 1.0,
        "unit": "hours",
    }
    assert body["target"] == {"kind": "LocalQueue", "name": "team-a/main"}
    assert body["eventId"] == event.pk


@override_settings(BUDGET_WEBHOOK_MAX_RETRIES=2)
def test_given_a_webhook_that_keeps_failing_then_it_is_marked_failed_after_the_last_retry(receiver_factory):
    receiver = receiver_factory([503, 503, 503, 503])
    cq, lq = cluster()
    team = budget(lq, hours="1", alert_thresholds=[50], webhook_url=receiver.url)
    job = submit(lq, "job")
    admission_pass(cq, at())
    finish(job, at(minutes=40))
    reconcile(team, at(hours=1))
    event = BudgetEvent.objects.get(kind="ThresholdCrossed")

    tasks.post_budget_webhook.apply(args=[event.pk])

    event.refresh_from_db()
    assert (event.webhook_status, event.webhook_attempts, event.webhook_last_error) == ("failed", 3, "HTTP 503")
    assert len(receiver.bodies) == 3


def test_given_a_webhook_then_the_accounting_run_only_queues_it_after_commit_and_never_waits_for_it(
    receiver_factory, django_capture_on_commit_callbacks
):
    receiver = receiver_factory([])
    cq, lq = cluster()
    team = budget(lq, hours="1", alert_thresholds=[50, 100], webhook_url=receiver.url)
    job = submit(lq, "job")
    admission_pass(cq, at())
    finish(job, at(hours=1))

    with django_capture_on_commit_callbacks(execute=False) as callbacks:
        result = reconcile(team, at(hours=2))

    assert result.hold == "placed"
    assert receiver.bodies == []  # nothing was sent inside the run
    assert set(BudgetEvent.objects.values_list("webhook_status", flat=True)) == {"pending"}
    assert len(callbacks) >= 4  # one publish per event, queued for after the commit


def test_given_webhook_backoff_then_it_doubles_and_is_capped():
    assert [tasks.webhook_backoff(n) for n in range(3)] == [2, 4, 8]
    assert tasks.webhook_backoff(20) == 600
