"""Top-level routes: the web UI, Django admin, Prometheus metrics, Kueue interop and (later) the API."""

from django.contrib import admin
from django.contrib.auth import views as auth_views
from django.urls import include, path

from queues.metrics import metrics_view

urlpatterns = [
    path("admin/", admin.site.urls),
    path("accounts/login/", auth_views.LoginView.as_view(), name="login"),
    path("accounts/logout/", auth_views.LogoutView.as_view(), name="logout"),
    path("metrics", metrics_view, name="metrics"),
    path("api/v1/kueue/", include("queues.interop.urls")),
    path("budgets/", include("budgets.urls")),
    path("", include("queues.urls")),
]
