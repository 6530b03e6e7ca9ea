"""Small template helpers of the dashboard: share bars, pagers, optional links."""

from __future__ import annotations

import html
from typing import Any

from django import template
from django.core.paginator import Page
from django.template.defaultfilters import floatformat
from django.urls import NoReverseMatch, reverse
from django.utils.formats import localize
from django.utils.html import format_html
from django.utils.safestring import SafeString, mark_safe

from core.templatetags.glossary import mode_term
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


# --- the queue tree's rows ---------------------------------------------------------------------------
# Built in Python rather than in ``queues/tree/_table.html``: a page has a hundred rows of nine
# cells, and the template language (then ``format_html`` per cell) spent more time on them than
# the page's queries and folding. The markup is the one the template wrote (same cells, classes,
# attributes and links), escaped as the template escapes (``_e``: ``django.utils.html.escape``
# without its lazy-string wrapper).

_TREE_LINKS = {
    "cohort": ("cohort", "queues:cohort", "queues:edit-cohort"),
    "clusterQueue": ("cq", "queues:cluster-queue", "queues:edit-cluster-queue"),
    "namespace": ("ns", "queues:namespace", "queues:edit-namespace"),
    "localQueue": ("lq", "queues:local-queue", "queues:edit-local-queue"),
}
_DASH = '<span class="muted">—</span>'


def _e(value: Any) -> str:
    """``conditional_escape(value)`` as a plain str: safe strings as they are, the rest escaped."""
    if hasattr(value, "__html__"):
        return str(value.__html__())
    return html.escape(str(value))


def _text(value: Any) -> str:
    """A value as ``{{ value }}`` prints it (localized, escaped)."""
    return _e(localize(value))


def _or_blank(value: Any) -> str:
    """``{{ value|default_if_none:'' }}``."""
    return "" if value is None else _text(value)


def _stack(items: list[str]) -> str:
    """``{% for a in items %}<span>{{ a }}</span>{% empty %}<span class="muted">—</span>{% endfor %}``."""
    return "".join(f"<span>{_e(item)}</span>" for item in items) or _DASH


def _tree_name_cell(row: Any, viewer: Any) -> str:
    kind_label, page, edit = _TREE_LINKS[row.kind]
    args = [row.key["namespace"], row.key["name"]] if row.kind == "localQueue" else [row.name]
    name = _e(row.name)
    twisty = (
        '<span class="twisty-space"></span>'
        if row.kind == "localQueue"
        else '<button type="button" class="twisty" data-toggle aria-expanded="true" title="Collapse or expand">'
        "▾</button>"
    )
    link = (
        name if row.kind == "cohort" and not viewer.is_admin else f'<a href="{_e(reverse(page, args=args))}">{name}</a>'
    )
    edit_link = (
        f'<a class="edit-link" title="Edit" aria-label="Edit {name}" href="{_e(reverse(edit, args=args))}">✎</a>'
        if row.editable
        else ""
    )
    continued = '<span class="continued">(continued)</span>' if row.continued else ""
    mode = ""
    if row.mode:
        scope = ""
        if row.mode_scope == "default":
            scope = ' <span class="muted" title="no cohort or ClusterQueue sets a mode">(default)</span>'
        elif row.kind == "clusterQueue" and row.mode_scope[:6] == "cohort":
            scope = f' <span class="muted" title="set by {_e(row.mode_scope)}">(inherited)</span>'
        mode = f'<div class="mode-line"><span class="badge mode">{_e(mode_term(row.mode))}</span>{scope}</div>'
    return (
        f'<span class="indent" data-width="{row.depth * 14}px"></span>\n        {twisty}\n        '
        f'<span class="kind">{kind_label}</span>{link}\n        {edit_link}\n        {continued}\n        {mode}'
    )


def _tree_state_cell(row: Any) -> str:
    stop = (
        f'<span class="badge {_e(row.stop_policy)}">stopped: {_e(row.stop_policy)}</span>'
        if row.stop_policy and row.stop_policy != "None"
        else ""
    )
    holds = "".join(
        f'<span class="badge bad" title="{_e(hold.message)}">{_e(hold.code)}{" (drain)" if hold.drain else ""}</span>'
        for hold in row.holds
    )
    chips = []
    for budget in row.budgets:
        url = optional_url("budgets:detail", budget.name)
        href = f'href="{_e(url)}" ' if url else ""
        status = budget.status
        chips.append(
            f'<a class="chip budget-{_text(budget.level)}" {href}title="{_text(budget.unit)} budget '
            f"{_text(budget.name)}: {_e(format_number(status.used_hours))} of {_text(budget.allocated_hours)} "
            f'used, {_text(status.state_label)}, action {_text(budget.action)}">{_text(budget.name)} · '
            f"{_e(floatformat(status.percent, 0))}%</a>"
        )
    return f"\n        {stop}\n        {holds}\n        {''.join(chips)}\n      "


@register.simple_tag
def tree_row(row: Any, viewer: Any) -> SafeString:
    """One row of the queue tree (``queues.selectors.tree.TreeRow``) as its ``<tr>``."""
    if row.kind == "empty":
        return mark_safe(  # noqa: S308 - every value is escaped by _e
            f'<tr class="empty-row" data-node="{_e(row.node)}" data-parent="{_e(row.parent)}"><td colspan="9">'
            f'<span class="indent" data-width="{row.depth * 14}px"></span>{_e(row.name)}</td></tr>'
        )
    normalize = getattr(row.weight, "normalize", None)
    quota = row.quota if row.kind in ("cohort", "clusterQueue") else row.entitlement
    borrowed = "".join(
        f'<span class="borrowed" title="admitted beyond the nominal quota">+{_e(a)} borrowed</span>'
        for a in row.borrowed
    )
    counts = (
        f'{_text(row.admitted)} · <span class="{"pending-count" if row.pending else ""}">{_text(row.pending)}</span>'
        if row.admitted is not None
        else ""
    )
    shares = _e(share_bar(row.share)) + _e(share_bar(row.usage_share, "decayed usage of entitlement"))
    return mark_safe(  # noqa: S308 - every value is escaped by _e
        f'<tr class="lvl-{_e(row.kind)}" data-node="{_e(row.node)}" data-parent="{_e(row.parent)}">\n'
        f'      <td class="name" data-v="{_e(row.name)}">{_tree_name_cell(row, viewer)}\n      </td>\n'
        f'      <td class="num" data-v="{_or_blank(row.weight)}">{_text(normalize()) if callable(normalize) else ""}</td>\n'
        f'      <td><div class="stack">{_stack(quota)}</div></td>\n'
        f'      <td><div class="stack">{_stack(row.allocated)}{borrowed}</div></td>\n'
        f'      <td><div class="stack">{_stack(row.decayed)}</div></td>\n'
        f'      <td data-v="{_or_blank(row.share.ratio)}">{shares}</td>\n'
        f'      <td class="num" data-v="{_or_blank(row.score_value)}">{_e(row.score or "—")}</td>\n'
        f'      <td class="num" data-v="{_or_blank(row.pending)}">{counts}</td>\n'
        f'      <td class="state">{_tree_state_cell(row)}</td>\n'
        "    </tr>"
    )
