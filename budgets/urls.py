from django.urls import path

from budgets.ui import views

app_name = "budgets"

urlpatterns = [
    path("", views.budget_list, name="list"),
    path("budget/add/", views.add_budget, name="add"),  # two segments: no budget name shadows it
    path("<slug:name>/", views.budget_detail, name="detail"),
    path("<slug:name>/edit/", views.edit_budget, name="edit"),
    path("<slug:name>/delete/", views.delete_budget_page, name="delete"),
]
