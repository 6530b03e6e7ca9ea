from django.apps import AppConfig


class BudgetsConfig(AppConfig):
    name = "budgets"
    verbose_name = "Time budgets"
    default_auto_field = "django.db.models.BigAutoField"
