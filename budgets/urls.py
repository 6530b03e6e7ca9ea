from django.urls import path

from budgets.ui import views

app_name = "budgets"

urlpatterns = [
    path("", views.budget_list, name="list"),
    path("<slug:name>/", views.budget_detail, name="detail"),
    path("<slug:name>/edit/", views.edit_budget, name="edit"),
]
