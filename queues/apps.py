from django.apps import AppConfig


class QueuesConfig(AppConfig):
    name = "queues"
    verbose_name = "Queues and workloads"
    default_auto_field = "django.db.models.BigAutoField"
