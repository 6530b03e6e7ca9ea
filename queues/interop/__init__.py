"""Interop with the ecosystem: Kueue manifests in and out, Prometheus metrics and usage."""
