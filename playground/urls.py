from django.urls import path

from playground import views

app_name = "playground"

urlpatterns = [
    path("", views.index, name="index"),
    path("start/", views.start, name="start"),
    path("scenarios/<uuid:pk>/", views.scenario_detail, name="scenario"),
    path("scenarios/<uuid:pk>/scenario.yaml", views.scenario_yaml, name="scenario-yaml"),
    path("runs/<uuid:pk>/", views.run_detail, name="run"),
    path("runs/<uuid:pk>/status.json", views.run_status, name="run-status"),
    path("runs/<uuid:pk>/resend/", views.run_resend, name="run-resend"),
    path("runs/<uuid:pk>/apply/", views.run_apply, name="run-apply"),
    path("runs/<uuid:pk>/results.json", views.run_results, name="run-results"),
    path("runs/<uuid:pk>/workloads.csv", views.run_csv, name="run-csv"),
    path("runs/<uuid:pk>/edited.yaml", views.run_edited_yaml, name="run-edited-yaml"),
]
