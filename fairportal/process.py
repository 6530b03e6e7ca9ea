"""What a web server process does once the application is loaded.

``freeze_loaded_objects``: imports the URL configuration (every view module, as the first
request would), then moves every object alive (Django, the settings, the apps, their modules
and registries: about 150,000 objects) out of the cyclic garbage collector's reach
(``gc.freeze``). They live as long as the process, so scanning them finds nothing, yet every
full collection scanned them all: 130-180 ms on this 2-core machine, about one request in
eight on the dashboard's larger pages (``bench/web.py``), which made their p95. Objects
allocated afterwards are collected as before; frozen ones are never freed, which changes
nothing for objects that live until exit anyway.

``schedule_full_collections`` / ``collect_if_due``: the control loop's processes run full
collections between tasks, at most once a minute (below).
"""

from __future__ import annotations

import gc
import time
from importlib import import_module


def freeze_loaded_objects() -> None:
    """Load the URL configuration, collect once, then exclude the survivors from later collections."""
    from django.conf import settings

    import_module(settings.ROOT_URLCONF)
    gc.collect()
    gc.freeze()


# The control loop's processes (the Celery workers that consume a shard queue). A pass keeps what
# it read per unit (``queues.admission.load``, ``queues.admission.passes``): hundreds of thousands
# of objects that live from one pass to the next and hold no reference cycles, so a full
# collection finds next to nothing in them, yet with them alive one became due about every pass
# (a quarter of the tracked objects new since the last) and took about 0.2 s of a 0.15-0.4 s pass
# (bench/control_loop.py: 8 units, 20,000 pending). There, automatic collections keep to the two
# young generations, and the full one runs between tasks, at most once per FULL_COLLECTION_SECONDS.
FULL_COLLECTION_SECONDS = 60.0
_NEVER = 1_000_000_000  # generation 2's threshold: that many collections of generation 1
_last_full: float | None = None  # monotonic clock of the last full collection; None: not scheduled here


def schedule_full_collections() -> None:
    """Collect once and freeze the survivors (start-up's objects, as ``freeze_loaded_objects``),
    then leave full collections to ``collect_if_due``. Collections of generations 0 and 1 go on
    as before, so short-lived cycles are freed as soon as they were."""
    global _last_full
    gc.collect()
    gc.freeze()
    young, middle, _ = gc.get_threshold()
    gc.set_threshold(young, middle, _NEVER)
    _last_full = time.monotonic()


def collect_if_due(now: float | None = None) -> bool:
    """A full collection if ``schedule_full_collections`` runs in this process and the last one is
    ``FULL_COLLECTION_SECONDS`` old (monotonic seconds ``now``); whether it ran."""
    global _last_full
    if _last_full is None:
        return False
    now = time.monotonic() if now is None else now
    if now - _last_full < FULL_COLLECTION_SECONDS:
        return False
    gc.collect()
    _last_full = now
    return True
