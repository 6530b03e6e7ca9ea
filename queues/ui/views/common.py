"""What every dashboard page shares: sign-in, the viewer's roles, live refresh and paging links.

Views stay thin: they parse the request, call a selector or a service, and render. Scoping is
never done here but in the selectors (``queues.selectors``), which take the ``Access``.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from functools import wraps
from typing import Any

from django.conf import settings
from django.contrib.auth.decorators import login_required
from django.http import HttpRequest, HttpResponse, JsonResponse
from django.template.loader import render_to_string
from django.utils import timezone

from core.access import Access, access_for

View = Callable[..., HttpResponse]

# How often live pages poll their JSON endpoint (the admission pass runs every few seconds);
# ``DASHBOARD_LIVE_INTERVAL_SECONDS`` in the settings overrides it.
LIVE_INTERVAL_SECONDS = 10


def live_interval() -> int:
    return int(getattr(settings, "DASHBOARD_LIVE_INTERVAL_SECONDS", LIVE_INTERVAL_SECONDS))


class DashboardRequest(HttpRequest):
    viewer: Access


def dashboard_view(view: View) -> View:
    """Sign-in required; ``request.viewer`` holds the roles every selector is scoped by."""

    @login_required
    @wraps(view)
    def wrapper(request: HttpRequest, *args: Any, **kwargs: Any) -> HttpResponse:
        request.viewer = access_for(request.user)  # type: ignore[attr-defined]
        return view(request, *args, **kwargs)

    return wrapper


def wants_live(request: HttpRequest) -> bool:
    """The page's own URL with ``?live=1`` answers the refresh poll with JSON fragments."""
    return request.GET.get("live") == "1"


def live_response(
    request: HttpRequest,
    fragments: Mapping[str, tuple[str, Mapping[str, Any]]],
    figures: Mapping[str, Any] | None = None,
) -> JsonResponse:
    """``{"fragments": {element id: html}, "figures": {element id: plotly figure}, "at": iso}``.

    Fragments are rendered from the same partial templates as the full page, so a refresh can
    never show anything the page itself would not.
    """
    html = {
        element_id: render_to_string(template, dict(context), request=request)
        for element_id, (template, context) in fragments.items()
    }
    return JsonResponse({"fragments": html, "figures": dict(figures or {}), "at": timezone.now().isoformat()})


def query_without(request: HttpRequest, *names: str) -> str:
    """The current query string minus ``names`` (paging links keep the filters)."""
    params = request.GET.copy()
    for name in names:
        params.pop(name, None)
    return params.urlencode()
