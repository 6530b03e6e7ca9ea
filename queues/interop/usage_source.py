"""TimeAware's historical usage read from Prometheus (as KAI-Scheduler does), instead of the
built-in usage series.

For every queue, namespace and cohort, the allocation exported on ``/metrics``
(``fairportal_*_admitted_usage``) and the capacity (``fairportal_cluster_capacity``) are read
with ``query_range`` over the usage window (sliding or tumbling), sampled every ``step``
seconds. Each series is a step function (a value holds until the next sample; a missing
sample means nothing was allocated); it is integrated over the window with each moment
weighted by ``0.5 ** (age / half_life)``, and the queue's usage divided by the capacity over
the same window gives KAI's normalised usage ``U``, per resource.

The result is keyed like the engine's ``Snapshot.historical_usage``
(``localQueue:<ns/name>``, ``clusterQueue:<name>``, ``namespace:<name>``, ``cohort:<name>``).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field

from fairshare.policy import FairSharingPolicy
from fairshare.usage.usage import window_start, windowed_usage
from queues.interop.prometheus import PrometheusClient, Series


@dataclass(frozen=True)
class UsageQueries:
    """PromQL for each level's allocation (one series per node and resource) and the capacity.

    Like KAI's ``extraParams`` overrides: point them at other metrics (for example
    ``kube_node_status_capacity``) when fairportal is not the exporter.
    """

    usage: Mapping[str, str] = field(
        default_factory=lambda: {
            "localQueue": "sum by (namespace, local_queue, resource) (fairportal_local_queue_admitted_usage)",
            "clusterQueue": "sum by (cluster_queue, resource) (fairportal_cluster_queue_admitted_usage)",
            "namespace": "sum by (namespace, resource) (fairportal_namespace_admitted_usage)",
            "cohort": "sum by (cohort, resource) (fairportal_cohort_admitted_usage)",
        }
    )
    capacity: str = "sum by (resource) (fairportal_cluster_capacity)"


NODE_NAME: dict[str, Callable[[Mapping[str, str]], str]] = {
    "localQueue": lambda labels: f"{labels.get('namespace', '')}/{labels.get('local_queue', '')}",
    "clusterQueue": lambda labels: labels.get("cluster_queue", ""),
    "namespace": lambda labels: labels.get("namespace", ""),
    "cohort": lambda labels: labels.get("cohort", ""),
}


def node_id(kind: str, name: str) -> str:
    """Same key as the engine's ``types.node_id``."""
    return f"{kind}:{name}"


def on_grid(series: Series, grid: Sequence[float]) -> list[tuple[float, float]]:
    """The series at every grid time; a time Prometheus has no sample for counts as 0."""
    values = {round(t, 3): v for t, v in series.samples}
    return [(t, values.get(round(t, 3), 0.0)) for t in grid]


@dataclass
class PrometheusUsageSource:
    """Historical (windowed, decayed, capacity-normalised) usage per node from Prometheus."""

    client: PrometheusClient
    policy: FairSharingPolicy
    step_seconds: float | None = None  # default: the usage sampling interval
    half_life_seconds: float | None = None  # None: the policy's usageHalfLifeTime; 0: no decay
    queries: UsageQueries = field(default_factory=UsageQueries)

    @property
    def step(self) -> float:
        return float(self.step_seconds or self.policy.usage_sampling_interval_seconds)

    @property
    def half_life(self) -> float:
        if self.half_life_seconds is None:
            return float(self.policy.usage_half_life_seconds)
        return float(self.half_life_seconds)

    def grid(self, now: float) -> tuple[float, list[float]]:
        """The window start and the sample times covering it (the first at or before the start)."""
        window = self.policy.usage_window
        start = window_start(now, window.size_seconds, window.type)
        first = math.floor(start / self.step) * self.step
        count = math.floor((now - first) / self.step) + 1
        return start, [first + i * self.step for i in range(count)]

    def series(
        self, now: float
    ) -> tuple[dict[str, dict[str, list[tuple[float, float]]]], dict[str, list[tuple[float, float]]]]:
        """Allocation per node and resource, and capacity per resource, on the sample grid."""
        _, grid = self.grid(now)
        first, last = grid[0], grid[-1]
        usage: dict[str, dict[str, list[tuple[float, float]]]] = {}
        for kind, promql in self.queries.usage.items():
            for item in self.client.query_range(promql, first, last, self.step):
                node = node_id(kind, NODE_NAME[kind](item.labels))
                resource = item.labels.get("resource", "")
                usage.setdefault(node, {})[resource] = on_grid(item, grid)
        capacity = {
            item.labels.get("resource", ""): on_grid(item, grid)
            for item in self.client.query_range(self.queries.capacity, first, last, self.step)
        }
        return usage, capacity

    def integral(self, samples: Sequence[tuple[float, float]], now: float) -> float:
        """The engine's windowed, half-life-decayed integral (one definition for both sources)."""
        window = self.policy.usage_window
        return windowed_usage(samples, now, window.size_seconds, window.type, self.half_life)

    def historical_usage(self, now: float) -> dict[str, dict[str, float]]:
        """``{node: {resource: U}}``: decayed usage over decayed capacity in the window."""
        usage, capacity = self.series(now)
        capacity_integral = {resource: self.integral(samples, now) for resource, samples in capacity.items()}
        result: dict[str, dict[str, float]] = {}
        for node, per_resource in sorted(usage.items()):
            shares: dict[str, float] = {}
            for resource, samples in sorted(per_resource.items()):
                total = capacity_integral.get(resource, 0.0)
                used = self.integral(samples, now)
                shares[resource] = used / total if total > 0 else 0.0
            result[node] = shares
        return result


def usage_source_from_settings(
    policy: FairSharingPolicy, prometheus_url: str, timeout: float = 10.0
) -> PrometheusUsageSource | None:
    """The Prometheus source when ``PROMETHEUS_URL`` is set, else None (the built-in series).

    The control loop calls this with ``settings.FAIR_SHARING`` and ``settings.PROMETHEUS_URL``
    and, when it gets a source, fills ``Snapshot.historical_usage`` from ``historical_usage(now)``.
    """
    if not prometheus_url:
        return None
    return PrometheusUsageSource(PrometheusClient(prometheus_url, timeout=timeout), policy)
