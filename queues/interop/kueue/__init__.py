"""Kueue manifests (``kueue.x-k8s.io`` v1beta1/v1beta2) in and out of fairportal.

* ``parse.parse_manifests``: multi-document YAML -> ``specs`` (pure Python, no Django: the
  engine's scenario loader may use it to read manifests embedded in scenario files);
* ``apply.import_manifests``: validate with the models' ``clean()`` and apply in one audited
  transaction, or roll it back for a dry run;
* ``export.export_manifests``: the stored policy (and the clusters, as MultiKueue objects) as
  manifests that import back unchanged.

This package imports nothing itself, so importing ``parse`` does not load Django.
"""
