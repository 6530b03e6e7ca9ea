"""REST API of time budgets (served under /api/v1/ with the queues API)."""
