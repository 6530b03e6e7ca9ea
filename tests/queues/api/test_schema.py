"""The live OpenAPI schema, the offline Swagger UI, and Schemathesis fuzzing every operation.

The fuzz tests load ``/api/schema/`` from the Django WSGI app itself, generate requests from it
(valid ones and deliberately invalid ones, a bounded number per operation so the suite stays
fast) and send each operation's requests twice over: as an admin and as a tenant editor, against
the two-tenant world. No answer may be a 500, every answer must match the schema (its status
code is documented, its body validates, its content type is the declared one), and a request
the schema calls invalid must be refused (``negative_data_rejection``): the schema is never
looser than the validation behind it, and a request it calls valid is accepted unless only
stored data decides against it (an unknown or taken name). The last test checks that the fuzzing covered every
operation in both roles with at least ``MIN_EXAMPLES`` requests in all.

Schemathesis' coverage phase (boundary values of every field) is off: it sends about 3,000
requests, over a minute on this project's two-core machines. Run it by hand after changing the
API (``st run http://127.0.0.1:8000/api/schema/ -H "Authorization: Token ..."``); what it found
so far is pinned in ``test_validation.py`` ("found by fuzzing").
"""

from __future__ import annotations

import re
from collections import Counter

import pytest
import schemathesis
from django.core import signals
from django.core.wsgi import get_wsgi_application
from django.db import close_old_connections
from hypothesis import HealthCheck, Phase, settings
from schemathesis.checks import not_a_server_error
from schemathesis.config import SchemathesisConfig
from schemathesis.config._checks import (
    NEGATIVE_DATA_REJECTION_EXPECTED_STATUSES,
    POSITIVE_DATA_ACCEPTANCE_EXPECTED_STATUSES,
)
from schemathesis.specs.openapi.checks import (
    content_type_conformance,
    negative_data_rejection,
    positive_data_acceptance,
    response_schema_conformance,
    status_code_conformance,
)

from core.api_tokens import issue_token

pytestmark = pytest.mark.django_db

EXAMPLES_PER_OPERATION = 12
MIN_EXAMPLES = 1000
ROLES = ("admin", "editor_a")  # a staff admin, and a tenant editor of team-a (reads and writes its own)

# A 412 answers a write whose If-Match names another version than the stored object's (stored
# data decides, and it is a refusal): expected of valid and of invalid requests alike.
PRECONDITION_FAILED = "412"
FUZZING_ONLY = SchemathesisConfig.from_dict(
    {
        "phases": {"coverage": {"enabled": False}},
        "checks": {
            "positive_data_acceptance": {
                "expected-statuses": [*POSITIVE_DATA_ACCEPTANCE_EXPECTED_STATUSES, PRECONDITION_FAILED]
            },
            "negative_data_rejection": {
                "expected-statuses": [*NEGATIVE_DATA_REJECTION_EXPECTED_STATUSES, PRECONDITION_FAILED]
            },
        },
    }
)
schema = schemathesis.openapi.from_wsgi("/api/schema/", get_wsgi_application(), config=FUZZING_ONLY)
# What a schema cannot say: whether a named object exists or a name is taken (stored data), that
# a budget has exactly one target, how large a quantity's text may get (a pattern cannot bound a
# magnitude), the names of a map's keys (OpenAPI 3.0 has no propertyNames; the schema gives it,
# the generator ignores it), and what makes a scenario document, a Kueue manifest or a playground
# edit valid (the engine's loader validates those documents, keyed by their path), and where a
# webhook's host name resolves (DNS, checked at save: core.outbound), and which priority classes
# exist and a namespace allows (stored policy), and whether a cluster is the default one (whose
# backend and connection come from the settings).
DECIDED_BY_STORED_DATA = re.compile(
    r"does not exist|already exists|no scenario with this id|choose exactly one target|Invalid pk|is too large"
    r"|is not a valid resource name|is not a valid label name"
    r"|the host name did not resolve|the host resolves to an address webhooks may not reach"
    r"|no WorkloadPriorityClass named|not a priority class namespace|the default cluster takes"
)
DOCUMENT_ERRORS = {"scenario", "document", "edits", "lookahead"}


def _messages(node: object) -> list[str]:
    if isinstance(node, dict):
        return [message for value in node.values() for message in _messages(value)]
    if isinstance(node, list):
        return [message for value in node for message in _messages(value)]
    return [str(node)]


def valid_data_is_accepted_unless_stored_data_decides(ctx, response, case):
    """Schemathesis' ``positive_data_acceptance``, except for a 400 whose every error is one of
    the kinds above: any other refusal of a request the schema calls valid means the schema is
    looser than the validation, and fails."""
    if response.status_code == 400:
        try:
            body = response.json()
        except ValueError:
            body = None
        if isinstance(body, dict) and body.get("errors") and "summary" in body:
            return None  # a Kueue import's report: the manifests' own validation (YAML text in the schema)
        if isinstance(body, dict) and all(
            key in DOCUMENT_ERRORS or all(DECIDED_BY_STORED_DATA.search(m) for m in _messages(value))
            for key, value in body.items()
        ):
            return None
    return positive_data_acceptance(ctx, response, case)


CHECKS = [
    not_a_server_error,
    status_code_conformance,
    content_type_conformance,
    response_schema_conformance,
    negative_data_rejection,
    valid_data_is_accepted_unless_stored_data_decides,
]
SENT: Counter[tuple[str, str]] = Counter()  # (operation, role) -> requests sent in this session


@pytest.fixture
def wsgi_keeps_the_test_connection():
    """The WSGI handler closes the database connection after each request, which would end the
    test's transaction; Django's test client suspends that the same way."""
    signals.request_started.disconnect(close_old_connections)
    signals.request_finished.disconnect(close_old_connections)
    yield
    signals.request_started.connect(close_old_connections)
    signals.request_finished.connect(close_old_connections)


# The Kueue export answers multi-document YAML (one document per object, as kubectl writes it),
# which the fuzzer's YAML check reads as one document and rejects; the interop tests check that
# answer and its round trip. The import and every other operation are fuzzed.
OPERATIONS = schema.exclude(method="GET", path="/api/v1/kueue/export")
FUZZ_SETTINGS = settings(
    max_examples=EXAMPLES_PER_OPERATION,
    deadline=None,
    derandomize=True,  # the same requests on every run: a failure is reproducible, not flaky
    database=None,
    phases=[Phase.explicit, Phase.generate],
    suppress_health_check=list(HealthCheck),
)


def send(case, world, role: str) -> None:
    token = issue_token(world.users[role])
    SENT[(case.operation.label, role)] += 1
    case.call_and_validate(headers={"Authorization": f"Token {token}"}, checks=CHECKS)


@OPERATIONS.parametrize()
@FUZZ_SETTINGS
def test_given_generated_requests_as_an_admin_then_no_server_error_and_the_schema_holds(
    case, world, wsgi_keeps_the_test_connection
):
    send(case, world, "admin")


@OPERATIONS.parametrize()
@FUZZ_SETTINGS
def test_given_generated_requests_as_a_tenant_then_no_server_error_and_the_schema_holds(
    case, world, wsgi_keeps_the_test_connection
):
    send(case, world, "editor_a")


def test_the_fuzzing_covered_every_operation_as_admin_and_as_tenant_with_enough_requests():
    """Runs after the two fuzz tests above (pytest keeps a module's order); alone, it fails."""
    operations = {operation.ok().label for operation in OPERATIONS.get_all_operations()}
    covered = {role: {label for (label, sent_as) in SENT if sent_as == role} for role in ROLES}

    assert {role: sorted(operations - labels) for role, labels in covered.items()} == {role: [] for role in ROLES}
    assert sum(SENT.values()) >= MIN_EXAMPLES, f"only {sum(SENT.values())} requests: {dict(SENT)}"
    per_role = {role: sum(n for (_, sent_as), n in SENT.items() if sent_as == role) for role in ROLES}
    print(f"fuzzed {len(operations)} operations: {sum(SENT.values())} requests, {per_role}")


def test_schema_is_openapi_3_and_lists_every_collection(client):
    response = client.get("/api/schema/", HTTP_ACCEPT="application/json")

    document = response.json()
    assert response.status_code == 200
    assert document["openapi"].startswith("3.")
    for prefix in (
        "resource-flavors",
        "cohorts",
        "cluster-queues",
        "namespaces",
        "local-queues",
        "workloads",
        "budgets",
        "policy-changes",
    ):
        assert f"/api/v1/{prefix}/" in document["paths"]
    assert "/api/v1/workloads/{id}/finish/" in document["paths"]
    assert {"tokenAuth", "cookieAuth"} <= set(document["components"]["securitySchemes"])


def test_swagger_ui_loads_only_assets_served_by_fairportal(client):
    response = client.get("/api/docs/")

    html = response.content.decode()
    assert response.status_code == 200
    assets = re.findall(r'(?:src|href)="([^"]+)"', html)
    assert assets, "expected the Swagger UI's scripts and styles"
    assert all(asset.startswith("/static/") for asset in assets), assets
    assert "jsdelivr" not in html and "unpkg" not in html


def test_swagger_ui_assets_are_installed(client):
    html = client.get("/api/docs/").content.decode()

    for asset in re.findall(r'(?:src|href)="(/static/[^"]+)"', html):
        from django.contrib.staticfiles import finders

        assert finders.find(asset.removeprefix("/static/")), asset
