from django.apps import AppConfig


class BudgetsConfig(AppConfig):
    name = "budgets"
    verbose_name = "Time budgets"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self) -> None:
        from budgets import signals  # noqa: F401 - connects the receivers
