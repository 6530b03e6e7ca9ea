"""Web pages (thin: they call selectors and render)."""

from django.http import HttpRequest, HttpResponse
from django.shortcuts import render

from queues import selectors


def home(request: HttpRequest) -> HttpResponse:
    return render(request, "queues/home.html", {"cluster_queues": selectors.cluster_queues_with_counts()})
