from django.apps import AppConfig


class BudgetsConfig(AppConfig):
    name = "budgets"
    verbose_name = "Time budgets"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self) -> None:
        from budgets import dashboard, safe_admission, selectors, signals  # noqa: F401 - signals connects the receivers
        from budgets import demo as budgets_demo
        from budgets.metrics import BudgetCollector
        from queues import demo, metrics
        from queues.admission import gates
        from queues.dashboard import live

        gates.register("budgets.safe_admission", safe_admission.gate)
        live.register_budgets(attached=dashboard.attached_budgets, visible=dashboard.visible_budgets)
        demo.register_extra("budgets", demo.DemoExtra(seed=budgets_demo.seed_budgets, after_history=budgets_demo.charge_history))
        metrics.register_collector("budgets", lambda: BudgetCollector(budget_usage=selectors.usage_for_metrics))
