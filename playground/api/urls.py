"""Playground routes, registered on the project's one API router (``fairportal.urls``)."""

from rest_framework.routers import BaseRouter

from playground.api.views import PresetViewSet, RunViewSet, ScenarioViewSet, SimulationViewSet


def register_routes(router: BaseRouter) -> None:
    router.register("simulations", SimulationViewSet, basename="simulation")
    router.register("playground/presets", PresetViewSet, basename="playground-preset")
    router.register("playground/scenarios", ScenarioViewSet, basename="playground-scenario")
    router.register("playground/runs", RunViewSet, basename="playground-run")
