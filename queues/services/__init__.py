"""Writes to the fair-share domain, one module per concern; each write transactional and
validated by the models' ``clean()`` (the one validation path)."""

from queues.services.workloads import submit_workload, sync_workload_resources

__all__ = ["submit_workload", "sync_workload_resources"]
