"""Reads (selectors), the one read layer of the fair-share domain: one module per page area for
the web UI, ``api`` for the REST API's lists. Every one scoped to the viewer, each page a fixed
number of queries whatever the number of queues and workloads.

Tenancy is enforced here, on the server: a tenant's querysets only ever contain its own
namespaces, so another tenant's object is not found (404) rather than hidden by the template.
"""
