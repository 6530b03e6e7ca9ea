"""What a web server process does once the application is loaded.

``freeze_loaded_objects``: imports the URL configuration (every view module, as the first
request would), then moves every object alive (Django, the settings, the apps, their modules
and registries: about 150,000 objects) out of the cyclic garbage collector's reach
(``gc.freeze``). They live as long as the process, so scanning them finds nothing, yet every
full collection scanned them all: 130-180 ms on this 2-core machine, about one request in
eight on the dashboard's larger pages (``bench/web.py``), which made their p95. Objects
allocated afterwards are collected as before; frozen ones are never freed, which changes
nothing for objects that live until exit anyway.
"""

from __future__ import annotations

import gc
from importlib import import_module


def freeze_loaded_objects() -> None:
    """Load the URL configuration, collect once, then exclude the survivors from later collections."""
    from django.conf import settings

    import_module(settings.ROOT_URLCONF)
    gc.collect()
    gc.freeze()
