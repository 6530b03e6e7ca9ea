"""Budget webhooks reach public receivers only: checked at save and again at send, no redirects,
no network detail in the stored error; and they are signed (Standard Webhooks, verified here with
the independent ``standardwebhooks`` package): with the budget's own endpoint's secret, and for
admins' endpoints subscribed to budget events, with theirs.

Before: ``webhook_url`` took 127.0.0.1, localhost, [::1], 0.0.0.0, 169.254.169.254, ftp:// and
user:password@ URLs; the worker posted to them, followed redirects to other ports, and stored
"Connection refused" (a port-scan oracle). Every request here goes to 127.0.0.1 only: names are
resolved by a fake ``socket.getaddrinfo`` where a test needs a name elsewhere.
"""

from __future__ import annotations

import socket
import threading
from collections.abc import Iterator
from datetime import timedelta
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest
import standardwebhooks
from django.core.exceptions import ValidationError

from budgets import alerts, tasks
from budgets.models import Budget, BudgetEvent
from core import outbound, webhooks_services
from core import tasks as core_tasks
from core.models import WebhookDelivery
from tests.budgets.helpers import admission_pass, at, budget, cluster, finish, reconcile, submit

pytestmark = pytest.mark.django_db

LOCAL = ["127.0.0.1/32"]


class Receiver:
    """A real HTTP server on 127.0.0.1: answers ``status`` (with ``location`` for a redirect)."""

    def __init__(self, status: int = 200, location: str = "") -> None:
        self.hosts: list[str] = []
        receiver = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:  # noqa: N802 - http.server's naming
                self.rfile.read(int(self.headers["Content-Length"]))
                receiver.hosts.append(self.headers["Host"])
                self.send_response(status)
                if location:
                    self.send_header("Location", location)
                self.send_header("Content-Length", "0")
                self.end_headers()

            def log_message(self, *args: object) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.port = self.server.server_address[1]
        self.url = f"http://127.0.0.1:{self.port}/hooks/budget"
        self.thread = threading.Thread(target=self.server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
        self.thread.start()

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


@pytest.fixture
def receivers() -> Iterator:
    started: list[Receiver] = []

    def start(status: int = 200, location: str = "") -> Receiver:
        started.append(Receiver(status, location))
        return started[-1]

    yield start
    for receiver in started:
        receiver.close()


@pytest.fixture
def fake_dns(monkeypatch):
    """``socket.getaddrinfo`` answering ``names[host]`` for the names given (IP literals pass
    through, as the connection itself calls it with the checked address); counts name lookups."""
    real = socket.getaddrinfo
    names: dict[str, str] = {}
    lookups: list[str] = []

    def getaddrinfo(host, port, *args, **kwargs):
        if host in names:
            lookups.append(host)
            return [(socket.AF_INET, socket.SOCK_STREAM, 6, "", (names[host], port or 0))]
        return real(host, port, *args, **kwargs)

    monkeypatch.setattr(socket, "getaddrinfo", getaddrinfo)
    return names, lookups


def pending_event(url: str, *, validated: bool = False) -> BudgetEvent:
    """A threshold event waiting for its webhook. ``validated``: the URL passed ``clean()``;
    otherwise it is stored as given (a row saved before today's validation)."""
    cq, lq = cluster()
    team = budget(lq, hours="1", alert_thresholds=[50], webhook_url=url if validated else "")
    if not validated:
        Budget.objects.filter(pk=team.pk).update(webhook_url=url)
        team.refresh_from_db()
    job = submit(lq, "job")
    admission_pass(cq, at())
    finish(job, at(minutes=40))
    reconcile(team, at(hours=1))
    return BudgetEvent.objects.get(kind="ThresholdCrossed")


@pytest.mark.parametrize(
    ("url", "message"),
    [
        ("http://127.0.0.1:6379/", "may not reach"),
        ("http://localhost:8000/hook", "may not reach"),
        ("http://[::1]/hook", "may not reach"),
        ("http://0.0.0.0/hook", "may not reach"),
        ("http://169.254.169.254/latest/meta-data/", "may not reach"),
        ("http://10.1.2.3/hook", "may not reach"),
        ("http://[::ffff:127.0.0.1]/hook", "may not reach"),
        ("http://2130706433/hook", "valid URL"),  # 127.0.0.1 as one decimal number (the send refuses it too, below)
        ("ftp://hooks.example.org/hook", "only http:// and https://"),
        ("https://user:secret@hooks.example.org/hook", "user name or password"),
    ],
)
def test_given_an_internal_or_odd_webhook_url_when_saving_then_clean_refuses_it_on_the_field(url, message):
    _, lq = cluster()
    with pytest.raises(ValidationError) as error:
        budget(lq, webhook_url=url)
    assert message in error.value.message_dict["webhook_url"][0]
    assert not Budget.objects.exists()


@pytest.mark.parametrize("host", ["2130706433", "0x7f.1", "127.1", "[0:0:0:0:0:0:0:1]", "localhost"])
def test_given_other_spellings_of_loopback_then_the_check_at_send_refuses_them(host):
    with pytest.raises(outbound.OutboundError, match="may not reach"):
        outbound.check_url(f"http://{host}:8080/hook")


def test_given_a_name_that_resolves_to_a_public_address_then_it_is_saved(fake_dns):
    names, _ = fake_dns
    names["hooks.example.org"] = "93.184.215.14"
    _, lq = cluster()
    assert budget(lq, webhook_url="https://hooks.example.org/hook").webhook_url == "https://hooks.example.org/hook"


def test_given_the_allowlist_then_a_local_receiver_gets_the_event(receivers, settings):
    settings.WEBHOOK_ALLOWED_NETWORKS = LOCAL
    receiver = receivers()
    cq, lq = cluster()
    team = budget(lq, hours="1", alert_thresholds=[50], webhook_url=receiver.url)  # clean passes: allowlisted
    job = submit(lq, "job")
    admission_pass(cq, at())
    finish(job, at(minutes=40))
    reconcile(team, at(hours=1))
    event = BudgetEvent.objects.get(kind="ThresholdCrossed")

    assert alerts.deliver_webhook(event.pk, timeout=5) is True
    assert receiver.hosts == [f"127.0.0.1:{receiver.port}"]


def test_given_a_name_that_rebinds_to_loopback_at_send_then_nothing_is_sent(receivers, fake_dns, settings):
    """DNS rebinding, with a fake resolver at the ``socket.getaddrinfo`` level: public when saved,
    127.0.0.1 when the worker sends. The send resolves and checks again and refuses."""
    names, _ = fake_dns
    receiver = receivers()
    names["hooks.example.org"] = "93.184.215.14"
    event = pending_event(f"http://hooks.example.org:{receiver.port}/hook", validated=True)  # passes clean
    names["hooks.example.org"] = "127.0.0.1"  # ...and now the name points inside

    with pytest.raises(alerts.WebhookDeliveryError):
        alerts.deliver_webhook(event.pk, timeout=5)

    event.refresh_from_db()
    assert event.webhook_last_error == outbound.NOT_ALLOWED
    assert receiver.hosts == []


def test_given_localhost_stored_before_validation_then_the_send_refuses_it(receivers):
    receiver = receivers()
    event = pending_event(f"http://localhost:{receiver.port}/hook")  # resolved by the real resolver

    with pytest.raises(alerts.WebhookDeliveryError):
        alerts.deliver_webhook(event.pk, timeout=5)

    assert receiver.hosts == []
    event.refresh_from_db()
    assert event.webhook_last_error == outbound.NOT_ALLOWED


def test_given_a_checked_name_then_the_connection_goes_to_the_checked_address_with_the_name_as_host(
    receivers, fake_dns, settings
):
    """Resolved once per send (no second lookup a rebinding resolver could answer differently)."""
    settings.WEBHOOK_ALLOWED_NETWORKS = LOCAL
    names, lookups = fake_dns
    names["hooks.internal.example"] = "127.0.0.1"
    receiver = receivers()
    event = pending_event(f"http://hooks.internal.example:{receiver.port}/hook")
    lookups.clear()

    assert alerts.deliver_webhook(event.pk, timeout=5) is True

    assert lookups == ["hooks.internal.example"]
    assert receiver.hosts == [f"hooks.internal.example:{receiver.port}"]


def test_given_a_redirect_then_it_is_not_followed_and_the_delivery_failed(receivers, settings):
    settings.WEBHOOK_ALLOWED_NETWORKS = LOCAL
    elsewhere = receivers()
    redirecting = receivers(302, location=elsewhere.url)
    event = pending_event(redirecting.url)

    with pytest.raises(alerts.WebhookDeliveryError):
        alerts.deliver_webhook(event.pk, timeout=5)

    event.refresh_from_db()
    assert len(redirecting.hosts) == 1 and elsewhere.hosts == []
    assert event.webhook_last_error == "HTTP 302"


def test_given_a_closed_port_then_the_stored_error_has_no_network_detail(settings):
    settings.WEBHOOK_ALLOWED_NETWORKS = LOCAL
    with socket.socket() as probe:  # a port nobody listens on
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    event = pending_event(f"http://127.0.0.1:{port}/hook")

    tasks.post_budget_webhook.apply(args=[event.pk])

    event.refresh_from_db()
    assert event.webhook_last_error == "delivery failed: the receiver did not accept the connection"
    assert "refused" not in event.webhook_last_error.lower() and "errno" not in event.webhook_last_error.lower()


# --- signed budget webhooks (docs/webhooks.md) ------------------------------------------------------


class SignedReceiver:
    """A real HTTP server on 127.0.0.1 keeping each request's headers and raw body."""

    def __init__(self) -> None:
        self.requests: list[tuple[dict[str, str], bytes]] = []
        receiver = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:  # noqa: N802 - http.server's naming
                body = self.rfile.read(int(self.headers["Content-Length"]))
                receiver.requests.append(({k.lower(): v for k, v in self.headers.items()}, body))
                self.send_response(204)
                self.end_headers()

            def log_message(self, *args: object) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/hooks/signed"
        threading.Thread(target=self.server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True).start()

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


@pytest.fixture
def signed_receiver(settings) -> Iterator[SignedReceiver]:
    settings.WEBHOOK_ALLOWED_NETWORKS = LOCAL
    receiver = SignedReceiver()
    yield receiver
    receiver.close()


def threshold_event(url: str) -> BudgetEvent:
    cq, lq = cluster()
    team = budget(lq, hours="1", alert_thresholds=[50], webhook_url=url)
    job = submit(lq, "job")
    admission_pass(cq, at())
    finish(job, at(minutes=40))
    reconcile(team, at(hours=1))
    return BudgetEvent.objects.get(kind="ThresholdCrossed")


def test_given_a_budget_webhook_then_it_is_signed_with_the_budget_endpoint_secret_an_admin_reads_by_rotating(
    signed_receiver,
):
    event = threshold_event(signed_receiver.url)
    endpoint = event.budget.webhook_endpoint
    secret = webhooks_services.rotate(endpoint, keep_previous_for=timedelta(0))  # what an admin does to read one

    assert alerts.deliver_webhook(event.pk, timeout=5) is True

    ((headers, body),) = signed_receiver.requests
    payload = standardwebhooks.Webhook(secret).verify(body, headers)
    assert headers["webhook-id"] == f"budget-event-{event.pk}"
    assert (payload["type"], payload["data"]["eventId"], payload["data"]["threshold"]) == (
        "budget.ThresholdCrossed",
        event.pk,
        50.0,
    )
    assert (payload["event"], payload["eventId"]) == (
        "ThresholdCrossed",
        event.pk,
    )  # the fields receivers read before signing
    event.refresh_from_db()
    assert (event.webhook_status, event.webhook_attempts) == ("delivered", 1)


def test_given_a_site_endpoint_subscribed_to_thresholds_then_it_gets_every_budgets_threshold_and_not_their_other_events(
    signed_receiver,
):
    thresholds, secret = webhooks_services.create_endpoint(
        name="thresholds", url=signed_receiver.url, events=["budget.ThresholdCrossed"]
    )
    webhooks_services.create_endpoint(name="holds", url=signed_receiver.url, events=["budget.HoldPlaced"])
    event = threshold_event("")  # the budget has no webhook_url of its own

    deliveries = list(WebhookDelivery.objects.filter(source="budget-event"))
    assert [(d.endpoint_id, d.source_id, d.event_type) for d in deliveries] == [
        (thresholds.pk, event.pk, "budget.ThresholdCrossed")
    ]
    core_tasks.deliver_webhook.apply(args=[deliveries[0].pk, 1])

    ((headers, body),) = signed_receiver.requests
    assert standardwebhooks.Webhook(secret).verify(body, headers)["budget"] == "team-budget"
    event.refresh_from_db()
    assert event.webhook_status == ""  # the event's own webhook fields are its budget's URL's only


@pytest.mark.django_db(transaction=True)
def test_given_budget_webhooks_stored_before_signing_when_migrated_then_each_gets_its_own_endpoint_and_secret():
    from django.db import connection
    from django.db.migrations.executor import MigrationExecutor

    before = [("budgets", "0003_budget_state_error_and_bounds"), ("core", "0004_heartbeat")]
    executor = MigrationExecutor(connection)
    try:
        executor.migrate(before)
        old = executor.loader.project_state(before).apps
        cq, lq = cluster()  # queues' tables are as today: only budgets and core went back
        OldBudget = old.get_model("budgets", "Budget")
        OldBudget.objects.create(
            name="hooked", local_queue_id=lq.pk, allocated_hours=1, webhook_url="https://93.184.215.14/h"
        )
        OldBudget.objects.create(name="quiet", cluster_queue_id=cq.pk, allocated_hours=1)
    finally:
        executor = MigrationExecutor(connection)
        executor.loader.build_graph()
        executor.migrate(executor.loader.graph.leaf_nodes())

    hooked, quiet = Budget.objects.get(name="hooked"), Budget.objects.get(name="quiet")
    assert quiet.webhook_endpoint is None
    endpoint = hooked.webhook_endpoint
    assert (endpoint.scope, endpoint.url, endpoint.events, endpoint.enabled) == (
        "budget",
        hooked.webhook_url,
        ["budget.*"],
        True,
    )
    assert endpoint.secret.startswith("whsec_") and len(endpoint.secret) == 50
