"""Web pages, one module per area; thin: selectors (``queues.dashboard``) read, services write."""
