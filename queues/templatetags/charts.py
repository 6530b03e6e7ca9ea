"""The markup of a chart: the element Plotly draws into, named for assistive technology, and its
text summary (``queues.ui.charts.summary``) in a figure caption, so every chart has a text
alternative that live refreshes keep current (``static/js/live.js`` rewrites it)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from django import template
from django.utils.html import format_html

register = template.Library()


@register.simple_tag
def chart(figures: Mapping[str, Any] | None, element_id: str, title: str, size: str = "") -> str:
    """``<figure>`` with the plot element ``element_id`` (``role="group"``: it holds Plotly's controls, so not an image; labelled ``title``,
    described by the summary) and a collapsed "in words" caption holding the summary of
    ``figures[element_id]``. ``size`` adds the chart's size class (``auto``, ``tall``)."""
    return chart_of((figures or {}).get(element_id), element_id, title, size)


@register.simple_tag
def chart_of(figure: Mapping[str, Any] | None, element_id: str, title: str, size: str = "") -> str:
    """``chart`` for a page with a single figure."""
    return format_html(
        '<figure class="chart-figure">'
        '<div id="{id}" class="chart{size}" role="group" aria-label="{title}" aria-describedby="{id}-summary"></div>'
        '<figcaption class="chart-summary"><details><summary>{title} in words</summary>'
        '<p id="{id}-summary" data-chart-summary="{id}">{summary}</p></details></figcaption>'
        "</figure>",
        id=element_id,
        size=f" {size}" if size else "",
        title=title,
        summary=(figure or {}).get("summary", ""),
    )
