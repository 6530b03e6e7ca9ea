"""Ordering of API lists: ``?ordering=`` terms a list knows, or a 400 naming the parameter.

DRF's ``OrderingFilter`` drops the terms it does not know and, when none is left, orders the
default way: ``?ordering=position`` on a list without that term answered 200 in another order,
and the client could not tell. ``StrictOrderingFilter`` refuses that, as the filters refuse a
bad value: a 400 ``{"ordering": ["unknown ordering term 'position'; one of: name, -name, ..."]}``
(the term quoted at most 40 characters). An empty value (``?ordering=``, what a form sends for
"any") is the default order, as for every other filter.

A view may add *aliases*, terms that are not a field (``ordering_aliases = {"position": fn}``
with ``fn(queryset, descending) -> (queryset, [order expressions])``), and a default that
depends on the request (``default_ordering(request) -> [terms] | None``). The schema lists the
terms as a pattern of comma-separated ``[-]term``.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from typing import Any

from django.db.models import QuerySet
from rest_framework.exceptions import ValidationError
from rest_framework.filters import OrderingFilter
from rest_framework.request import Request

MAX_TERMS = 8
_SHOWN = 40

# ``fn(queryset, descending) -> (queryset, order_by arguments)``
OrderingAlias = Callable[[QuerySet, bool], tuple[QuerySet, Sequence[Any]]]


class StrictOrderingFilter(OrderingFilter):
    """``OrderingFilter`` that answers an unknown term with a 400 instead of ignoring it."""

    def allowed_terms(self, queryset: QuerySet | None, view: Any, request: Request | None) -> list[str]:
        """The names ``?ordering=`` takes on this view, each also with ``-`` (descending)."""
        if queryset is None:
            fields = getattr(view, "ordering_fields", None) or []
            names = [item if isinstance(item, str) else item[0] for item in fields]
        else:
            names = [item[0] for item in self.get_valid_fields(queryset, view, {"request": request})]
        names.extend(getattr(view, "ordering_aliases", {}))
        return list(dict.fromkeys(names))

    def get_ordering(self, request: Request, queryset: QuerySet, view: Any) -> Sequence[str] | None:
        raw = request.query_params.get(self.ordering_param)
        if raw:
            terms = [term.strip() for term in raw.split(",")]
            allowed = self.allowed_terms(queryset, view, request)
            if len(terms) > MAX_TERMS:
                raise ValidationError({self.ordering_param: [f"at most {MAX_TERMS} comma-separated terms"]})
            for term in terms:
                if (term[1:] if term.startswith("-") else term) not in allowed:
                    shown = term if len(term) <= _SHOWN else term[: _SHOWN - 1] + "…"
                    choices = ", ".join(f"{name}, -{name}" for name in allowed)
                    raise ValidationError(
                        {self.ordering_param: [f"unknown ordering term {shown!r}; one of: {choices}"]}
                    )
            return terms
        default = getattr(view, "default_ordering", None)
        chosen = default(request) if callable(default) else None
        return chosen if chosen else self.get_default_ordering(view)

    def filter_queryset(self, request: Request, queryset: QuerySet, view: Any) -> QuerySet:
        ordering = self.get_ordering(request, queryset, view)
        if not ordering:
            return queryset
        aliases: dict[str, OrderingAlias] = getattr(view, "ordering_aliases", {})
        expressions: list[Any] = []
        for term in ordering:
            descending = term.startswith("-")
            alias = aliases.get(term[1:] if descending else term)
            if alias is None:
                expressions.append(term)
                continue
            queryset, ordered = alias(queryset, descending)
            expressions.extend(ordered)
        return queryset.order_by(*expressions)

    def get_template_context(self, request: Request, queryset: QuerySet, view: Any) -> dict[str, Any]:
        """The browsable API's ordering menu; a refused ordering (the page shows the 400) is none."""
        try:
            return super().get_template_context(request, queryset, view)
        except ValidationError:
            return {"request": request, "current": None, "param": self.ordering_param, "options": []}

    def get_schema_operation_parameters(self, view: Any) -> list[dict[str, Any]]:
        terms = self.allowed_terms(None, view, None)
        if not terms:
            return super().get_schema_operation_parameters(view)
        one = "-?(?:" + "|".join(re.escape(term) for term in terms) + ")"
        return [
            {
                "name": self.ordering_param,
                "required": False,
                "in": "query",
                "description": "Comma-separated, '-' for descending; an unknown term is a 400. One of: "
                + ", ".join(terms),
                "schema": {"type": "string", "pattern": f"^{one}(?:,{one}){{0,{MAX_TERMS - 1}}}$"},
            }
        ]
