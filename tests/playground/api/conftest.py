"""``/api/v1/simulations/`` is tested against the API's shared world (roles, a stored run)."""

from tests.queues.api.conftest import clients, fast_password_hashing, module_world, world  # noqa: F401
