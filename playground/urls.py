from django.urls import path

from playground import views

urlpatterns = [
    path("", views.index, name="playground"),
    path("start/", views.start, name="playground-start"),
    path("scenarios/<uuid:pk>/", views.scenario_detail, name="playground-scenario"),
    path("scenarios/<uuid:pk>/scenario.yaml", views.scenario_yaml, name="playground-scenario-yaml"),
    path("runs/<uuid:pk>/", views.run_detail, name="playground-run"),
    path("runs/<uuid:pk>/status.json", views.run_status, name="playground-run-status"),
    path("runs/<uuid:pk>/resend/", views.run_resend, name="playground-run-resend"),
    path("runs/<uuid:pk>/apply/", views.run_apply, name="playground-run-apply"),
    path("runs/<uuid:pk>/results.json", views.run_results, name="playground-run-results"),
    path("runs/<uuid:pk>/workloads.csv", views.run_csv, name="playground-run-csv"),
    path("runs/<uuid:pk>/edited.yaml", views.run_edited_yaml, name="playground-run-edited-yaml"),
]
