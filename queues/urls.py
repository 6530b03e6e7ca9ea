from django.urls import path

from queues import views

urlpatterns = [
    path("", views.home, name="home"),
]
