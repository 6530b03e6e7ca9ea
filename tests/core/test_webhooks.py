"""Signed webhooks (Standard Webhooks): the documented receiver (docs/examples/webhook_receiver.py,
a real HTTP server on 127.0.0.1 in its own process) verifies a real delivery of the delivery task,
and the independent ``standardwebhooks`` package (PyPI) verifies the same bytes; tampered bodies,
old timestamps and retired secrets are refused. Policy changes come from the audited write path.

Every request goes to 127.0.0.1 (``WEBHOOK_ALLOWED_NETWORKS``), as in tests/budgets/test_webhooks.py.
"""

from __future__ import annotations

import json
import os
import random
import re
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from datetime import timedelta
from decimal import Decimal
from http.client import HTTPConnection
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest
import standardwebhooks
from django.db import transaction
from django.utils import timezone

from core import tasks, webhooks, webhooks_services
from core.audit import audited_save
from core.models import PolicyChange, Surface, WebhookDelivery, WebhookEndpoint
from queues.models import Namespace
from tests.budgets.conftest import eager_tasks  # noqa: F401 - a fixture
from tests.factories import UserFactory
from tests.queues.test_tasks_e2e import celery_worker, wait_for  # noqa: F401 - a fixture and a helper

pytestmark = pytest.mark.django_db

ROOT = Path(__file__).resolve().parents[2]
RECEIVER = ROOT / "docs" / "examples" / "webhook_receiver.py"
DOC = ROOT / "docs" / "webhooks.md"
LOCAL = ["127.0.0.1/32"]


class Capture:
    """A real HTTP server on 127.0.0.1 that keeps each request's headers and raw body and answers
    the given statuses (then 200), with a body a delivery must never store."""

    def __init__(self, statuses: list[int] | None = None) -> None:
        self.statuses = list(statuses or [])
        self.requests: list[tuple[dict[str, str], bytes]] = []
        capture = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:  # noqa: N802 - http.server's naming
                body = self.rfile.read(int(self.headers["Content-Length"]))
                capture.requests.append(({k.lower(): v for k, v in self.headers.items()}, body))
                answer = b"internal detail: db password is hunter2"
                self.send_response(capture.statuses.pop(0) if capture.statuses else 200)
                self.send_header("Content-Length", str(len(answer)))
                self.end_headers()
                self.wfile.write(answer)

            def log_message(self, *args: object) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/hooks"
        threading.Thread(target=self.server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True).start()

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


class DocumentedReceiver:
    """docs/examples/webhook_receiver.py started with the command docs/webhooks.md shows (its
    port swapped for a free one), reading its stdout (one verified event per line)."""

    def __init__(self, secret: str) -> None:
        command = documented_command().replace("8787", str(free_port()))
        env = {**os.environ, "WEBHOOK_SECRET": secret}
        args = command.split()[1:]  # "WEBHOOK_SECRET=whsec_... python3 docs/... --port N": the secret comes from env
        args[0] = sys.executable
        self.process = subprocess.Popen(
            args, cwd=ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
        )
        banner = self.process.stderr.readline()  # "listening on http://127.0.0.1:PORT/"
        match = re.search(r"http://127\.0\.0\.1:(\d+)/", banner)
        assert match, banner
        self.port = int(match.group(1))
        self.url = f"http://127.0.0.1:{self.port}/fairportal"

    def post(self, headers: dict[str, str], body: bytes) -> int:
        connection = HTTPConnection("127.0.0.1", self.port, timeout=5)
        try:
            connection.request("POST", "/fairportal", body=body, headers=headers)
            return connection.getresponse().status
        finally:
            connection.close()

    def printed(self) -> list[dict]:
        self.process.terminate()
        out, _ = self.process.communicate(timeout=10)
        return [json.loads(line) for line in out.splitlines() if line.strip()]


def documented_command() -> str:
    """The receiver's command line as docs/webhooks.md shows it."""
    lines = [line for line in DOC.read_text().splitlines() if "docs/examples/webhook_receiver.py --port" in line]
    assert len(lines) == 1, lines
    return lines[0].strip()


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


@pytest.fixture
def captures(settings) -> Iterator:
    settings.WEBHOOK_ALLOWED_NETWORKS = LOCAL
    started: list[Capture] = []

    def start(statuses: list[int] | None = None) -> Capture:
        started.append(Capture(statuses))
        return started[-1]

    yield start
    for capture in started:
        capture.close()


@pytest.fixture
def receivers() -> Iterator:
    started: list[DocumentedReceiver] = []

    def start(secret: str) -> DocumentedReceiver:
        started.append(DocumentedReceiver(secret))
        return started[-1]

    yield start
    for receiver in started:
        if receiver.process.poll() is None:
            receiver.process.kill()
            receiver.process.communicate(timeout=10)


@pytest.fixture
def admin_user():
    return UserFactory(username="ops", is_staff=True, is_superuser=True)


def endpoint(url: str, events: list[str], *, name: str = "ops") -> tuple[WebhookEndpoint, str]:
    return webhooks_services.create_endpoint(name=name, url=url, events=events, surface=Surface.CLI)


def change_weight(namespace: Namespace, weight: str, actor=None) -> PolicyChange:
    namespace.weight = Decimal(weight)
    audited_save(namespace, actor=actor, surface=Surface.API)
    return PolicyChange.objects.filter(object_type="namespace").order_by("-id").first()


def deliveries_of(change: PolicyChange) -> list[WebhookDelivery]:
    return list(WebhookDelivery.objects.filter(source="policy-change", source_id=change.pk).order_by("id"))


# --- the documented receiver and the independent verifier ------------------------------------------


def test_given_a_policy_change_then_the_documented_receiver_verifies_the_signed_delivery_and_so_does_standardwebhooks(
    captures, receivers, admin_user
):
    """The issue's proof: a real delivery task call, a real HTTP receiver from the docs, verified."""
    capture = captures()
    site, secret = endpoint(capture.url, ["policy.changed"])  # placeholder URL, pointed at the receiver below
    receiver = receivers(secret)
    site.url = receiver.url
    site.save(update_fields=["url"])
    copy, copy_secret = endpoint(capture.url, ["policy.changed"], name="capture")
    namespace = Namespace.objects.create(name="team-a", weight=Decimal(1))

    change = change_weight(namespace, "3", actor=admin_user)
    sent = deliveries_of(change)
    for delivery in sent:
        tasks.deliver_webhook.apply(args=[delivery.pk, 1])

    assert sorted(d.endpoint_id for d in sent) == sorted([site.pk, copy.pk])
    printed = receiver.printed()
    assert [event["type"] for event in printed] == ["policy.changed"]
    data = printed[0]["data"]
    assert (data["id"], data["objectType"], data["action"], data["actor"]) == (change.pk, "namespace", "update", "ops")
    assert (data["before"]["weight"], data["after"]["weight"], data["changedFields"]) == ("1", "3", ["weight"])
    ((headers, body),) = capture.requests
    assert standardwebhooks.Webhook(copy_secret).verify(body, headers)["data"]["id"] == change.pk
    assert headers["webhook-id"] == f"policy-change-{change.pk}"
    with pytest.raises(standardwebhooks.WebhookVerificationError):
        standardwebhooks.Webhook(secret).verify(body, headers)  # the other endpoint's secret does not verify it
    assert WebhookDelivery.objects.get(endpoint=site, source_id=change.pk).status == "delivered"


def test_given_a_tampered_body_an_old_timestamp_or_a_wrong_secret_then_the_documented_receiver_refuses_it(receivers):
    secret = webhooks.new_secret()
    receiver = receivers(secret)
    body = json.dumps({"type": "policy.changed", "data": {"id": 1}}).encode()
    now = int(time.time())
    good = webhooks.signed_headers([secret], "policy-change-1", body, timestamp=now)
    tampered = body.replace(b'"id": 1', b'"id": 2')
    old = webhooks.signed_headers([secret], "policy-change-1", body, timestamp=now - 6 * 60)
    other = webhooks.signed_headers([webhooks.new_secret()], "policy-change-1", body, timestamp=now)
    renamed = {**good, "webhook-id": "policy-change-2"}

    answers = [
        receiver.post(h, b) for h, b in [(good, tampered), (old, body), (other, body), (renamed, body), (good, body)]
    ]

    assert answers == [400, 400, 400, 400, 204]
    assert receiver.printed() == [{"type": "policy.changed", "data": {"id": 1}}]
    with pytest.raises(standardwebhooks.WebhookVerificationError, match="too old"):
        standardwebhooks.Webhook(secret).verify(body, old)


def test_given_a_retried_message_then_the_documented_receiver_handles_it_once(receivers):
    secret = webhooks.new_secret()
    receiver = receivers(secret)
    body = b'{"type":"budget.Exhausted"}'
    first = webhooks.signed_headers([secret], "budget-event-7", body, timestamp=int(time.time()))
    again = webhooks.signed_headers([secret], "budget-event-7", body, timestamp=int(time.time()))  # signed afresh

    assert [receiver.post(first, body), receiver.post(again, body)] == [204, 204]
    assert receiver.printed() == [{"type": "budget.Exhausted"}]


# --- signing and rotation --------------------------------------------------------------------------


def test_given_our_signer_then_standardwebhooks_agrees_on_every_signature():
    secret = webhooks.new_secret()
    body = json.dumps({"type": "policy.changed", "data": {"note": "ünïcode"}}, ensure_ascii=False).encode()
    headers = webhooks.signed_headers([secret], "policy-change-9", body, timestamp=int(time.time()))
    theirs = standardwebhooks.Webhook(secret).sign(
        "policy-change-9", timezone.now().replace(microsecond=0), body.decode()
    )

    assert re.fullmatch(r"whsec_[A-Za-z0-9+/]{43}=", secret)
    assert standardwebhooks.Webhook(secret).verify(body, headers) == json.loads(body)
    assert headers["webhook-signature"].startswith("v1,") and theirs.startswith("v1,")


def test_given_a_rotation_then_both_secrets_sign_until_it_ends_and_the_old_one_stops_verifying(captures, admin_user):
    capture = captures()
    site, old = endpoint(capture.url, ["policy.changed"])
    namespace = Namespace.objects.create(name="team-a", weight=Decimal(1))

    new = webhooks_services.rotate(site, keep_previous_for=timedelta(hours=1), actor=admin_user)
    during = change_weight(namespace, "2")
    tasks.deliver_webhook.apply(args=[deliveries_of(during)[0].pk, 1])
    webhooks_services.end_rotation(site, actor=admin_user)
    after = change_weight(namespace, "3")
    tasks.deliver_webhook.apply(args=[deliveries_of(after)[0].pk, 1])

    (during_headers, during_body), (after_headers, after_body) = capture.requests
    assert len(during_headers["webhook-signature"].split(" ")) == 2
    assert standardwebhooks.Webhook(old).verify(during_body, during_headers)
    assert standardwebhooks.Webhook(new).verify(during_body, during_headers)
    assert len(after_headers["webhook-signature"].split(" ")) == 1
    assert standardwebhooks.Webhook(new).verify(after_body, after_headers)
    with pytest.raises(standardwebhooks.WebhookVerificationError):
        standardwebhooks.Webhook(old).verify(after_body, after_headers)
    rotations = PolicyChange.objects.filter(object_type="webhookendpoint", note="secret rotated")
    assert rotations.count() == 1
    assert old not in json.dumps(list(PolicyChange.objects.values("before", "after")))
    assert new not in json.dumps(list(PolicyChange.objects.values("before", "after")))


def test_given_a_rotation_whose_overlap_has_passed_then_only_the_new_secret_signs():
    site, old = endpoint("https://93.184.215.14/hooks", ["policy.changed"])
    new = webhooks_services.rotate(site, keep_previous_for=timedelta(minutes=5))
    site.refresh_from_db()

    assert site.signing_secrets(timezone.now()) == [new, old]
    assert site.signing_secrets(timezone.now() + timedelta(minutes=6)) == [new]


# --- the audited write path is the one source of policy.changed -------------------------------------


def test_given_endpoints_then_only_those_subscribed_to_policy_changes_get_one_and_a_rolled_back_write_sends_none():
    wants, _ = endpoint("https://93.184.215.14/a", ["policy.changed"], name="wants")
    endpoint("https://93.184.215.14/b", ["budget.*"], name="budgets-only")
    off, _ = endpoint("https://93.184.215.14/c", ["policy.changed"], name="off")
    WebhookEndpoint.objects.filter(pk=off.pk).update(enabled=False)
    namespace = Namespace.objects.create(name="team-a", weight=Decimal(1))
    queued = WebhookDelivery.objects.count()  # the endpoints' own creations were policy changes too

    change = change_weight(namespace, "2")
    with pytest.raises(RuntimeError), transaction.atomic():
        namespace.weight = Decimal(5)
        audited_save(namespace)
        raise RuntimeError("the write fails after the audit row")

    assert [d.endpoint_id for d in deliveries_of(change)] == [wants.pk]
    assert WebhookDelivery.objects.count() == queued + 1
    body = json.loads(deliveries_of(change)[0].body)
    assert set(body) == {"type", "timestamp", "data"}
    assert set(body["data"]) == {
        "id",
        "at",
        "actor",
        "surface",
        "action",
        "objectType",
        "objectId",
        "object",
        "changedFields",
        "before",
        "after",
        "note",
    }


def test_given_an_audited_write_then_deliveries_are_published_only_after_the_commit(django_capture_on_commit_callbacks):
    endpoint("https://93.184.215.14/a", ["policy.changed"])
    namespace = Namespace.objects.create(name="team-a", weight=Decimal(1))

    with django_capture_on_commit_callbacks(execute=False) as callbacks:
        change = change_weight(namespace, "2")

    assert len(deliveries_of(change)) == 1 and len(callbacks) == 1


# --- retries, jitter, failures, redelivery -----------------------------------------------------------


def test_given_a_failing_receiver_then_the_attempt_records_a_fixed_error_and_a_jittered_next_attempt(
    captures, settings
):
    settings.BUDGET_WEBHOOK_BACKOFF_SECONDS = 8
    capture = captures([503])
    endpoint(capture.url, ["policy.changed"])
    change = change_weight(Namespace.objects.create(name="team-a", weight=Decimal(1)), "2")
    delivery = deliveries_of(change)[0]

    before = timezone.now()
    outcome = webhooks.attempt(delivery.pk, expected_attempt=1)

    delivery.refresh_from_db()
    assert (outcome.attempted, outcome.delivered, outcome.error) == (True, False, "HTTP 503")
    assert 4 <= outcome.retry_in <= 8  # equal jitter: half of the 8 s wait fixed, half random
    assert (delivery.status, delivery.attempts, delivery.last_status_code, delivery.last_error) == (
        "pending",
        1,
        503,
        "HTTP 503",
    )
    assert before + timedelta(seconds=4) <= delivery.next_attempt_at <= timezone.now() + timedelta(seconds=8)
    assert "hunter2" not in json.dumps(list(WebhookDelivery.objects.values()), default=str)


def test_given_a_duplicate_message_for_the_same_attempt_then_it_sends_nothing(captures):
    capture = captures([503])
    endpoint(capture.url, ["policy.changed"])
    delivery = deliveries_of(change_weight(Namespace.objects.create(name="team-a", weight=Decimal(1)), "2"))[0]

    first = webhooks.attempt(delivery.pk, expected_attempt=1)
    duplicate = webhooks.attempt(delivery.pk, expected_attempt=1)  # an acks-late redelivery of the same message

    assert first.attempted and not duplicate.attempted
    assert len(capture.requests) == 1


def test_given_a_receiver_that_keeps_failing_then_the_task_retries_with_backoff_and_marks_it_failed(captures, settings):
    settings.BUDGET_WEBHOOK_MAX_RETRIES = 2
    capture = captures([500, 502, 503, 200])
    endpoint(capture.url, ["policy.changed"])
    delivery = deliveries_of(change_weight(Namespace.objects.create(name="team-a", weight=Decimal(1)), "2"))[0]

    tasks.deliver_webhook.apply(args=[delivery.pk, 1])  # eager: each retry runs at once

    delivery.refresh_from_db()
    assert (delivery.status, delivery.attempts, delivery.last_error) == ("failed", 3, "HTTP 503")
    assert delivery.next_attempt_at is None and len(capture.requests) == 3
    assert len({headers["webhook-id"] for headers, _ in capture.requests}) == 1  # the same message every time


def test_given_a_failed_delivery_then_redelivery_sends_the_same_message_again(captures, settings):
    settings.BUDGET_WEBHOOK_MAX_RETRIES = 0
    capture = captures([500])
    _, secret = endpoint(capture.url, ["policy.changed"])
    delivery = deliveries_of(change_weight(Namespace.objects.create(name="team-a", weight=Decimal(1)), "2"))[0]
    tasks.deliver_webhook.apply(args=[delivery.pk, 1])
    delivery.refresh_from_db()
    assert delivery.status == "failed"

    assert webhooks.redeliver([delivery]) == 1
    tasks.deliver_webhook.apply(args=[delivery.pk, 1])

    delivery.refresh_from_db()
    assert (delivery.status, delivery.attempts, delivery.last_error) == ("delivered", 1, "")
    (first, first_body), (second, second_body) = capture.requests
    assert first["webhook-id"] == second["webhook-id"] and first_body == second_body
    assert standardwebhooks.Webhook(secret).verify(second_body, second)


def test_given_a_disabled_endpoint_then_its_pending_delivery_fails_without_a_request(captures):
    capture = captures()
    site, _ = endpoint(capture.url, ["policy.changed"])
    delivery = deliveries_of(change_weight(Namespace.objects.create(name="team-a", weight=Decimal(1)), "2"))[0]
    WebhookEndpoint.objects.filter(pk=site.pk).update(enabled=False)

    tasks.deliver_webhook.apply(args=[delivery.pk, 1])

    delivery.refresh_from_db()
    assert (delivery.status, delivery.last_error, capture.requests) == ("failed", webhooks.DISABLED, [])


def test_given_a_pending_delivery_whose_message_was_lost_then_the_sweep_sends_it(captures, eager_tasks):
    capture = captures()
    endpoint(capture.url, ["policy.changed"])
    namespace = Namespace.objects.create(name="team-a", weight=Decimal(1))
    lost = deliveries_of(change_weight(namespace, "2"))[0]
    fresh = deliveries_of(change_weight(namespace, "3"))[0]  # its message is still on its way: not swept
    WebhookDelivery.objects.filter(pk=lost.pk).update(next_attempt_at=timezone.now() - timedelta(minutes=5))

    assert webhooks.sweep() == 1

    lost.refresh_from_db()
    fresh.refresh_from_db()
    assert (lost.status, fresh.status, len(capture.requests)) == ("delivered", "pending", 1)


def test_given_finished_deliveries_older_than_the_retention_then_the_sweep_deletes_them_and_keeps_the_rest():
    endpoint("https://93.184.215.14/a", ["policy.changed"])
    namespace = Namespace.objects.create(name="team-a", weight=Decimal(1))
    old_delivered, old_pending, recent_failed = (deliveries_of(change_weight(namespace, w))[0] for w in "234")
    long_ago = timezone.now() - webhooks.DELIVERY_RETENTION - timedelta(days=1)
    WebhookDelivery.objects.filter(pk=old_delivered.pk).update(status="delivered", created_at=long_ago)
    WebhookDelivery.objects.filter(pk=old_pending.pk).update(created_at=long_ago, next_attempt_at=None)
    WebhookDelivery.objects.filter(pk=recent_failed.pk).update(status="failed")

    webhooks.sweep()

    remaining = set(WebhookDelivery.objects.values_list("pk", flat=True))
    assert old_delivered.pk not in remaining and {old_pending.pk, recent_failed.pk} <= remaining


def test_given_a_seeded_generator_then_jitter_stays_within_half_and_all_of_the_wait_and_varies():
    rng = random.Random(7)
    waits = [webhooks.jittered(webhooks.backoff(3), rng) for _ in range(50)]

    assert all(8 <= wait <= 16 for wait in waits)  # backoff(3) = 2 s * 2**3
    assert len({round(wait, 3) for wait in waits}) > 40


# --- validation --------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("fields", "field", "message"),
    [
        ({"url": "http://169.254.169.254/latest/"}, "url", "may not reach"),
        ({"url": "ftp://hooks.example.org/"}, "url", "only http:// and https://"),
        ({"events": []}, "events", "expected a list of event types"),
        ({"events": ["budget.Everything"]}, "events", "'budget.Everything' is not an event type"),
        ({"name": "budget:1 mine"}, "name", "kept for budgets"),
    ],
)
def test_given_bad_endpoint_fields_then_the_error_names_the_field_and_nothing_is_saved(fields, field, message):
    from django.core.exceptions import ValidationError

    values = {"name": "ops", "url": "https://93.184.215.14/hooks", "events": ["policy.changed"], **fields}
    with pytest.raises(ValidationError) as error:
        webhooks_services.create_endpoint(**values)
    assert message in error.value.message_dict[field][0]
    assert not WebhookEndpoint.objects.exists()


# --- a real worker ------------------------------------------------------------------------------------


@pytest.mark.celery_worker
@pytest.mark.django_db(transaction=True)
def test_given_a_real_worker_then_a_committed_policy_change_reaches_the_documented_receiver_and_a_503_is_retried(
    celery_worker, captures, receivers, settings
):
    """No eager mode: the audited write commits, ``core.deliver_webhook`` goes through Redis to a
    real worker, which signs and sends; the failing receiver gets the retry after its backoff."""
    settings.BUDGET_WEBHOOK_BACKOFF_SECONDS = 1
    flaky = captures()
    site, secret = endpoint(flaky.url, ["policy.changed"], name="documented")
    receiver = receivers(secret)
    WebhookEndpoint.objects.filter(pk=site.pk).update(url=receiver.url)
    _, flaky_secret = endpoint(flaky.url, ["policy.changed"], name="flaky")
    namespace = Namespace.objects.create(name="team-a", weight=Decimal(1))
    # the endpoints' own creations were policy changes too: let their announcements go out first
    assert wait_for(lambda: not WebhookDelivery.objects.filter(status="pending").exists())
    flaky.statuses.append(503)

    with transaction.atomic():
        change = change_weight(namespace, "4")

    assert wait_for(lambda: {d.status for d in deliveries_of(change)} == {"delivered"})
    printed = [event for event in receiver.printed() if event["data"]["objectType"] == "namespace"]
    assert [(event["type"], event["data"]["id"]) for event in printed] == [("policy.changed", change.pk)]
    flaky_delivery = WebhookDelivery.objects.get(endpoint__name="flaky", source_id=change.pk)
    assert (flaky_delivery.attempts, flaky_delivery.last_status_code) == (2, 200)
    retried = [(h, b) for h, b in flaky.requests if h["webhook-id"] == f"policy-change-{change.pk}"]
    assert len(retried) == 2 and all(standardwebhooks.Webhook(flaky_secret).verify(b, h) for h, b in retried)
