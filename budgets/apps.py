from django.apps import AppConfig


class BudgetsConfig(AppConfig):
    name = "budgets"
    verbose_name = "Time budgets"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self) -> None:
        from budgets import safe_admission, signals  # noqa: F401 - signals connects the receivers
        from queues import gates

        gates.register("budgets.safe_admission", safe_admission.gate)
