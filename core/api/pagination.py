"""Page-numbered lists: ``?page=2&page_size=100`` (at most 500 rows a page).

Strict where DRF is lenient: ``page_size=abc`` or ``page_size=0`` is a 400 naming the parameter
instead of silently falling back to the default, and ``page=last`` is not a page number. An empty
value means "not given", as for every filter. The schema says the same (minimum 1).
"""

from __future__ import annotations

import re
from typing import Any

from rest_framework.exceptions import ValidationError
from rest_framework.pagination import PageNumberPagination
from rest_framework.request import Request

_WHOLE_NUMBER = re.compile(r"[0-9]{1,100}", re.ASCII)


class StandardPagination(PageNumberPagination):
    page_size = 50
    page_size_query_param = "page_size"
    max_page_size = 500
    last_page_strings = ()

    def get_page_size(self, request: Request) -> int:
        raw = request.query_params.get(self.page_size_query_param, "")
        if raw == "":
            return self.page_size
        if not _WHOLE_NUMBER.fullmatch(raw) or int(raw) < 1:
            problem = f"a whole number of at least 1 (at most {self.max_page_size} rows are returned)"
            raise ValidationError({self.page_size_query_param: [problem]})
        return min(int(raw), self.max_page_size)

    def get_page_number(self, request: Request, paginator: Any) -> str | int:
        return request.query_params.get(self.page_query_param) or 1

    def get_schema_operation_parameters(self, view: Any) -> list[dict[str, Any]]:
        parameters = super().get_schema_operation_parameters(view)
        for parameter in parameters:
            parameter["schema"] = {**parameter["schema"], "minimum": 1}
        return parameters
