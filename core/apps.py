from django.apps import AppConfig


class CoreConfig(AppConfig):
    name = "core"
    label = "core"
    verbose_name = "Kernel: access, audit, tenancy"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self) -> None:
        from core import access  # noqa: F401 - declares the audit trail's visibility rule
