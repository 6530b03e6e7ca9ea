from django.apps import AppConfig


class BudgetsConfig(AppConfig):
    name = "budgets"
    verbose_name = "Time budgets"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self) -> None:
        from budgets import alerts, safe_admission, selectors, signals  # noqa: F401 - signals connects the receivers
        from budgets import demo as budgets_demo
        from budgets.metrics import BudgetCollector
        from budgets.selectors import chips
        from core import extensions, webhooks
        from queues.admission.gates import ADMISSION_GATES
        from queues.demo import DEMO_EXTRAS, DemoExtra
        from queues.metrics import METRICS_COLLECTORS
        from queues.selectors.live import QUEUE_PAGE_CHIPS, QueuePageChips

        extensions.register(webhooks.DELIVERY_OBSERVERS, "budgets.events", alerts.delivery_changed)
        extensions.register(ADMISSION_GATES, "budgets.safe_admission", safe_admission.gate)
        extensions.register(
            QUEUE_PAGE_CHIPS, "budgets", QueuePageChips(attached=chips.attached_budgets, visible=chips.visible_budgets)
        )
        extensions.register(
            DEMO_EXTRAS, "budgets", DemoExtra(seed=budgets_demo.seed_budgets, after_history=budgets_demo.charge_history)
        )
        extensions.register(
            METRICS_COLLECTORS, "budgets", lambda: BudgetCollector(budget_usage=selectors.usage_for_metrics)
        )
