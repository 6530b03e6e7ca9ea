"""Web pages, one module per area; thin: selectors (``queues.selectors``) read, services write."""
