"""Kueue manifests (``kueue.x-k8s.io`` v1beta1/v1beta2) in and out of fairportal.

``import_manifests`` parses multi-document YAML, validates every object with the models'
``clean()``, and applies it in one audited transaction (or rolls it back for a dry run);
``export_manifests`` writes the stored policy back as manifests that import unchanged.
"""

from queues.interop.kueue.apply import import_manifests
from queues.interop.kueue.export import ExportResult, export_manifests
from queues.interop.kueue.report import ImportFailed, ImportReport
from queues.interop.kueue.specs import API_VERSIONS, DEFAULT_EXPORT_VERSION

__all__ = [
    "API_VERSIONS",
    "DEFAULT_EXPORT_VERSION",
    "ExportResult",
    "ImportFailed",
    "ImportReport",
    "export_manifests",
    "import_manifests",
]
