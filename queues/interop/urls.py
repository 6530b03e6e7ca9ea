"""Routes of the interop surface, included under ``api/v1/kueue/`` by ``fairportal.urls``."""

from django.urls import path

from queues.interop import views

app_name = "interop"

urlpatterns = [
    path("import", views.KueueImportView.as_view(), name="kueue-import"),
    path("export", views.KueueExportView.as_view(), name="kueue-export"),
]
