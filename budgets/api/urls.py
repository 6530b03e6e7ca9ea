"""Budget routes, registered on the project's one API router (``fairportal.urls``)."""

from rest_framework.routers import BaseRouter

from budgets.api.events import BudgetEventViewSet
from budgets.api.views import BudgetViewSet


def register_routes(router: BaseRouter) -> None:
    router.register("budgets", BudgetViewSet, basename="budget")
    router.register("budget-events", BudgetEventViewSet, basename="budget-event")
