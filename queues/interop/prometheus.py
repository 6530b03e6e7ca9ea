"""A small client for the Prometheus HTTP API (``/api/v1/query`` and ``/api/v1/query_range``).

Standard library only (urllib): two GET endpoints do not justify a dependency. Long ranges are
split so no request asks for more than ``MAX_POINTS`` points per series (Prometheus refuses
more than 11,000).
"""

from __future__ import annotations

import json
import math
import urllib.error
import urllib.parse
import urllib.request
from dataclasses import dataclass, field
from typing import Any

MAX_POINTS = 10_000


class PrometheusError(Exception):
    """Prometheus could not be reached or refused the query; the message says which."""


@dataclass
class Series:
    """One time series: its labels and ``(unix seconds, value)`` samples in time order."""

    labels: dict[str, str]
    samples: list[tuple[float, float]] = field(default_factory=list)


class PrometheusClient:
    def __init__(self, base_url: str, *, timeout: float = 10.0, bearer_token: str = "") -> None:
        if not base_url.startswith(("http://", "https://")):
            raise ValueError(f"Prometheus URL must start with http:// or https://, got {base_url!r}")
        self.base_url = base_url.rstrip("/")
        self.timeout = timeout
        self.bearer_token = bearer_token

    def _get(self, path: str, params: dict[str, str]) -> Any:
        url = f"{self.base_url}{path}?{urllib.parse.urlencode(params)}"
        request = urllib.request.Request(url, headers={"Accept": "application/json"})
        if self.bearer_token:
            request.add_header("Authorization", f"Bearer {self.bearer_token}")
        try:
            with urllib.request.urlopen(request, timeout=self.timeout) as response:  # noqa: S310 - http(s) only, checked above
                body = json.load(response)
        except urllib.error.HTTPError as error:
            try:
                body = json.load(error)
            except (ValueError, OSError):
                raise PrometheusError(f"{url}: HTTP {error.code}") from None
        except (urllib.error.URLError, OSError, ValueError) as error:
            raise PrometheusError(f"{self.base_url}: cannot query Prometheus: {error}") from None
        if body.get("status") != "success":
            raise PrometheusError(f"{body.get('errorType', 'error')}: {body.get('error', 'query failed')}")
        return body["data"]

    def query(self, promql: str, at: float | None = None) -> list[Series]:
        """An instant query: one sample per series."""
        params = {"query": promql}
        if at is not None:
            params["time"] = _number(at)
        data = self._get("/api/v1/query", params)
        if data.get("resultType") == "scalar":
            t, value = data["result"]
            return [Series({}, [(float(t), float(value))])]
        return [Series(dict(item["metric"]), [_sample(item["value"])]) for item in data["result"]]

    def query_range(self, promql: str, start: float, end: float, step: float) -> list[Series]:
        """Samples at ``start``, ``start + step``, ... ``<= end`` for every series, in chunks."""
        if step <= 0:
            raise ValueError("step must be greater than 0")
        merged: dict[tuple[tuple[str, str], ...], Series] = {}
        chunk = MAX_POINTS * step
        chunk_start = start
        while chunk_start <= end:
            chunk_end = min(end, chunk_start + chunk - step)
            data = self._get(
                "/api/v1/query_range",
                {"query": promql, "start": _number(chunk_start), "end": _number(chunk_end), "step": _number(step)},
            )
            for item in data["result"]:
                labels = dict(item["metric"])
                series = merged.setdefault(tuple(sorted(labels.items())), Series(labels))
                series.samples.extend(_sample(value) for value in item["values"])
            chunk_start = chunk_end + step
        return list(merged.values())


def _sample(pair: list[Any]) -> tuple[float, float]:
    t, value = pair
    number = float(value)
    return float(t), (0.0 if math.isnan(number) else number)


def _number(value: float) -> str:
    return repr(float(value)) if value != int(value) else str(int(value))
