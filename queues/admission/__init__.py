"""The admission pass, in three steps: load, plan, apply.

* ``load``: the bridge from rows to the engine (admission units, rows -> engine types, the
  per-process row-version cache);
* the engine plans (``fairshare.admission.planner.plan``);
* ``apply``: the one writer of a pass's decisions (claims, evictions, reasons, gated ones
  included, entry penalties, queue order), which also refreshes the cache through the loaded
  snapshot it was given;
* ``gates``: per-workload vetoes registered by other apps, run on the loaded candidates;
* ``passes``: the orchestrator, ``run_admission_pass`` (lock, load, gate, plan, apply).
"""
