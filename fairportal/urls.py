"""Top-level routes: the web UI, Django admin, Prometheus metrics, health and readiness, Kueue interop, and the REST API
with its schema and docs."""

from django.contrib import admin
from django.contrib.auth import views as auth_views
from django.templatetags.static import static
from django.urls import include, path, re_path
from django.views.generic import RedirectView
from drf_spectacular.views import SpectacularAPIView, SpectacularSwaggerView
from rest_framework.routers import DefaultRouter

from budgets.api.urls import register_routes as register_budget_routes
from core.api import schema  # noqa: F401 - registers the OpenAPI field extensions
from core.api.views import api_not_found
from core.api.webhooks import register_routes as register_webhook_routes
from core.directory_oidc import CallbackView, SignInRedirectView
from core.health import healthz, readyz_view
from core.sign_in import SignInView
from playground.api.urls import register_routes as register_playground_routes
from playground.views import workload_estimate
from queues.api.urls import register_routes as register_queue_routes
from queues.health import cluster_check
from queues.metrics import metrics_view

api = DefaultRouter()
api.include_format_suffixes = False  # ids are matched whole, "1.5" included (then a JSON 404)
register_queue_routes(api)
register_budget_routes(api)
register_playground_routes(api)
register_webhook_routes(api)

urlpatterns = [
    path("admin/", admin.site.urls),
    path("accounts/login/", SignInView.as_view(), name="login"),
    path("favicon.ico", RedirectView.as_view(url=static("favicon.svg"), permanent=True)),
    path("accounts/logout/", auth_views.LogoutView.as_view(), name="logout"),
    path("oidc/authenticate/", SignInRedirectView.as_view(), name="oidc_authentication_init"),
    path("oidc/callback/", CallbackView.as_view(), name="oidc_authentication_callback"),
    path("metrics", metrics_view, name="metrics"),
    path("healthz", healthz, name="healthz"),
    path("readyz", readyz_view({"cluster": cluster_check}), name="readyz"),
    path("api/v1/kueue/", include("queues.interop.urls")),
    path("api/v1/", include(api.urls)),
    path("api/schema/", SpectacularAPIView.as_view(), name="api-schema"),
    path("api/docs/", SpectacularSwaggerView.as_view(url_name="api-schema"), name="api-docs"),
    re_path(r"^api/", api_not_found),
    path("budgets/", include("budgets.urls")),
    path("playground/", include("playground.urls")),
    path("namespaces/<str:namespace>/workloads/<str:name>/estimate/", workload_estimate, name="workload-estimate"),
    path("", include("queues.urls")),
]
