"""Small template helpers of the dashboard: share bars, pagers, optional links."""

from __future__ import annotations

from typing import Any

from django import template
from django.core.paginator import Page
from django.urls import NoReverseMatch, reverse

from queues.dashboard.shares import Share
from queues.dashboard.tree import usage_score as format_usage_score
from queues.display import short_name

register = template.Library()


@register.inclusion_tag("queues/includes/share.html")
def share_bar(share: Share, label: str = "of entitlement", plain: bool = False, show_resource: bool = True) -> dict[str, Any]:
    """A ratio as a bar: against an entitlement the marker sits at 1.0× and the bar runs to 2.0×;
    ``plain`` bars (use of a capacity or quota) run from 0 to 100%."""
    width = min(max(share.ratio or 0.0, 0.0), 1.0) * 100 if plain else share.percent_capped
    return {
        "share": share, "label": label, "plain": plain, "width": width, "show_resource": show_resource,
        "resource": short_name(share.resource) if share.resource else "",
    }


@register.inclusion_tag("queues/includes/pager.html")
def pager(page: Page, query: str = "", noun: str = "rows", param: str = "page") -> dict[str, Any]:
    """Previous/next and nearby page links that keep the current filters (``query``).

    ``param`` names the page parameter, so two paged tables can share one page.
    """
    numbers = [n for n in range(page.number - 2, page.number + 3) if 1 <= n <= page.paginator.num_pages]
    return {"page": page, "query": query, "noun": noun, "numbers": numbers, "param": param}


@register.simple_tag
def optional_url(name: str, *args: Any) -> str:
    """The URL named ``name`` when that page exists (another app may not be installed yet), else ''."""
    try:
        return reverse(name, args=args)
    except NoReverseMatch:
        return ""


@register.simple_tag
def change_url(row: Any) -> str:
    """The page of the object an audit row is about ('' when it has none, or it was deleted)."""
    link = row.link
    if link is None:
        return ""
    try:
        return reverse(link[0], args=link[1])
    except NoReverseMatch:
        return ""


@register.filter
def amount_text(row: Any, name: str) -> str:
    """``row.text(name)``: an amount field of a selector row, rounded with its unit."""
    return row.text(name)


@register.filter
def usage_score(value: float | None) -> str:
    """A stored KEP-4136 score in base units ("364.2"), '' when never sampled."""
    return format_usage_score(value)


@register.filter
def ratio_percent(value: float | None) -> str:
    return "—" if value is None else f"{value * 100:.0f}%"
