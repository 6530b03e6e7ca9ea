"""Small template helpers of the dashboard: share bars, pagers, optional links."""

from __future__ import annotations

from typing import Any

from django import template
from django.core.paginator import Page
from django.urls import NoReverseMatch, reverse
from django.utils.html import format_html
from django.utils.safestring import mark_safe

from queues.selectors.shares import Share
from queues.selectors.tree import usage_score as format_usage_score
from queues.ui.display import duration as format_duration
from queues.ui.display import number as format_number
from queues.ui.display import short_name
from queues.ui.display import signed_duration as format_signed_duration

register = template.Library()


@register.simple_tag
def share_bar(share: Share, label: str = "of entitlement", plain: bool = False, show_resource: bool = True) -> str:
    """A ratio as a bar: against an entitlement the marker sits at 1.0x and the bar runs to 2.0x;
    ``plain`` bars (use of a capacity or quota) run from 0 to 100%.

    Built in Python rather than an inclusion template: the tree draws two per row, hundreds per page.
    """
    if share.ratio is None:
        return mark_safe('<span class="muted">—</span>')
    resource = short_name(share.resource) if share.resource else ""
    if plain:
        width = min(max(share.ratio, 0.0), 1.0) * 100
        level = "over" if share.ratio > 1 else ("at" if share.ratio >= 0.9 else "under")
        text = format_html("{}%", f"{share.ratio * 100:.0f}")
        title = f"{share.ratio:.3f} {label} ({resource})"
        bar_class = f"bar plain {level}"
    else:
        width = share.percent_capped
        text = format_html("{}×", f"{share.ratio:.2f}")
        title = f"{share.ratio:.2f}× {label} ({resource})"
        bar_class = f"bar {share.level}"
    suffix = format_html(' <span class="res">{}</span>', resource) if show_resource and resource else ""
    return format_html(
        '<div class="share" title="{}"><div class="{}"><span data-width="{}%"></span></div>'
        '<span class="val">{}{}</span></div>',
        title,
        bar_class,
        f"{width:.0f}",
        text,
        suffix,
    )


@register.simple_tag
def budget_meter(chip: Any) -> str:
    """A budget's use this period as a bar (100% = the allocation), coloured by its level."""
    percent = chip.status.percent
    colour = {"bad": "over", "warn": "warn", "ok": "under"}[chip.level]
    return format_html(
        '<div class="share" title="{}% of the allocation"><div class="bar plain {}"><span data-width="{}%"></span>'
        '</div><span class="val">{}%</span></div>',
        f"{percent:.1f}",
        colour,
        f"{min(max(percent, 0.0), 100.0):.0f}",
        f"{percent:.0f}",
    )


@register.inclusion_tag("queues/includes/pager.html")
def pager(page: Page, query: str = "", noun: str = "rows", param: str = "page") -> dict[str, Any]:
    """Previous/next and nearby page links that keep the current filters (``query``).

    ``param`` names the page parameter, so two paged tables can share one page.
    """
    numbers = [n for n in range(page.number - 2, page.number + 3) if 1 <= n <= page.paginator.num_pages]
    return {"page": page, "query": query, "noun": noun, "numbers": numbers, "param": param}


@register.simple_tag
def optional_url(name: str, *args: Any) -> str:
    """The URL named ``name`` when another app serves that page, else '': queues' templates link
    to budgets' pages by name without requiring the budgets app."""
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


@register.filter
def duration(seconds: float | int | None) -> str:
    """Seconds as ``4 h 20 min`` (``queues.ui.display.duration``): every page says time one way."""
    return format_duration(seconds)


@register.filter
def signed_duration(seconds: float | int | None) -> str:
    return format_signed_duration(seconds)


@register.filter
def hours(value: Any) -> str:
    """Hours (a budget's allocation or use) as ``2,003.5``, ``0.17``, ``2,000``."""
    return format_number(value)


@register.filter
def number(value: Any, places: int = 2) -> str:
    return format_number(value, int(places))
