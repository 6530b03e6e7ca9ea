"""Budget routes, registered on the project's one API router (``fairportal.urls``)."""

from rest_framework.routers import BaseRouter

from budgets.api.views import BudgetViewSet


def register_routes(router: BaseRouter) -> None:
    router.register("budgets", BudgetViewSet, basename="budget")
