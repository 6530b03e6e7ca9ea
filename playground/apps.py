from django.apps import AppConfig


class PlaygroundConfig(AppConfig):
    default_auto_field = "django.db.models.BigAutoField"
    name = "playground"
    verbose_name = "Policy playground"

    def ready(self) -> None:
        from core import extensions
        from playground.api import errors
        from playground.metrics import WhatIfLaneCollector
        from queues.metrics import METRICS_COLLECTORS

        errors.register()
        extensions.register(METRICS_COLLECTORS, "playground", WhatIfLaneCollector)
