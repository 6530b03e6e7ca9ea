"""The live OpenAPI schema, the offline Swagger UI, and Schemathesis fuzzing every operation.

The fuzz test loads ``/api/schema/`` from the Django WSGI app itself, generates requests from
it (valid ones and deliberately invalid ones, a bounded number per operation so the suite stays
fast) and sends them as an admin against the two-tenant world. No answer may be a 500, and every
answer must match the schema: its status code is documented, its body validates, its content
type is the declared one.

Schemathesis' coverage phase (boundary values of every field) is off: it sends about 3,000
requests, over a minute on this project's two-core machines. Run it by hand after changing the
API (``st run http://127.0.0.1:8000/api/schema/ -H "Authorization: Token ..."``); what it found
so far is pinned in ``test_validation.py`` ("found by fuzzing").
"""

from __future__ import annotations

import re

import pytest
import schemathesis
from django.core import signals
from django.core.wsgi import get_wsgi_application
from django.db import close_old_connections
from hypothesis import HealthCheck, Phase, settings
from schemathesis.checks import not_a_server_error

from fairportal.api_tokens import issue_token
from schemathesis.config import SchemathesisConfig
from schemathesis.specs.openapi.checks import (
    content_type_conformance,
    response_schema_conformance,
    status_code_conformance,
)

pytestmark = pytest.mark.django_db

EXAMPLES_PER_OPERATION = 12

FUZZING_ONLY = SchemathesisConfig.from_dict({"phases": {"coverage": {"enabled": False}}})
schema = schemathesis.openapi.from_wsgi("/api/schema/", get_wsgi_application(), config=FUZZING_ONLY)
CHECKS = [not_a_server_error, status_code_conformance, content_type_conformance, response_schema_conformance]


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


@OPERATIONS.parametrize()
@settings(
    max_examples=EXAMPLES_PER_OPERATION,
    deadline=None,
    derandomize=True,  # the same requests on every run: a failure is reproducible, not flaky
    database=None,
    phases=[Phase.explicit, Phase.generate],
    suppress_health_check=list(HealthCheck),
)
def test_given_generated_requests_then_no_server_error_and_every_answer_matches_the_schema(
    case, world, wsgi_keeps_the_test_connection
):
    token = issue_token(world.users["admin"])

    case.call_and_validate(headers={"Authorization": f"Token {token}"}, checks=CHECKS)


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
