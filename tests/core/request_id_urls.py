"""A URLconf for tests/core/test_request_logs.py: one view that logs and sends a task."""

from __future__ import annotations

import logging

from django.http import HttpRequest, HttpResponse
from django.urls import path

from core.enqueue import send
from fairportal.celery import app

logger = logging.getLogger("tests.request_id")


@app.task(name="tests.log_request_id", ignore_result=True)
def log_request_id(word: str) -> None:
    logger.info("task says %s", word)


def view(request: HttpRequest) -> HttpResponse:
    logger.info("view says hello")
    send(log_request_id, "hello")
    return HttpResponse("ok")


urlpatterns = [path("log-and-send/", view)]
