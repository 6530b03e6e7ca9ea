from django.apps import AppConfig


class QueuesConfig(AppConfig):
    name = "queues"
    verbose_name = "Queues and workloads"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self) -> None:
        from queues import access  # noqa: F401 - declares the queues models' visibility rules
        from queues.api import errors

        errors.register()
