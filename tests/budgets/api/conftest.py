"""The two-tenant world of the queues API tests, for the budget endpoints."""

from tests.queues.api.conftest import clients, fast_password_hashing, module_world, world  # noqa: F401
