"""Usage sampling (KEP-4136 decay through the engine), the usage time series and its retention.

One sample: admitted usage per LocalQueue, Namespace, ClusterQueue and Cohort from the
admitted-usage counters (``AdmittedUsage``, kept by the transitions: no join over the admitted
workloads), admitted and pending workloads per LocalQueue from the workload counters
(``WorkloadCount``, kept by the transitions and the submission: no count over the workloads), decay by the engine's rule (``fairshare.usage.usage.sample``), one series row per
object. On PostgreSQL the two large levels are decayed and written by one set-based statement;
elsewhere, and for the small levels, row by row through the engine; both store the same values.
The status rows are locked in a fixed order for the duration, the same order the admission
pass uses to add entry penalties, so a penalty is never lost between the read and the write of
a sample.
"""

from __future__ import annotations

import logging
from collections import defaultdict
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from datetime import datetime, timedelta
from functools import lru_cache
from types import SimpleNamespace
from typing import Any

from django.conf import settings
from django.db import connection, transaction
from django.db.models import Model, Q, Sum
from django.utils import timezone

from core.bulk import execute_with_rows, rows_cte
from fairshare.policy import FairSharingPolicy
from fairshare.quota.scopes import ancestry, highest_mode
from fairshare.types import TIME_AWARE, node_id
from fairshare.usage import usage as engine_usage
from fairshare.usage.accounting import path_nodes
from queues.admission.load import usage_state
from queues.interop.prometheus import PrometheusError
from queues.interop.usage_source import usage_source_from_settings
from queues.locks import try_advisory_xact_lock
from queues.models import (
    AdmittedUsage,
    ClusterQueue,
    ClusterQueueQuota,
    Cohort,
    CohortQuota,
    LocalQueue,
    Namespace,
    UsageSample,
)
from queues.services import usage_counters

logger = logging.getLogger(__name__)

Usage = dict[str, int]
Kind = UsageSample.Kind


@dataclass(frozen=True)
class SampleResult:
    sampled: bool
    at: datetime
    rows: int = 0


def _add(into: Usage, other: Mapping[str, int]) -> None:
    for resource, amount in other.items():
        into[resource] = into.get(resource, 0) + amount


def _cohort_chains(cohorts: list[Cohort], cluster_queues: list[ClusterQueue]) -> dict[int, tuple[int, ...]]:
    """ClusterQueue id -> the ids of its cohort and those above it, nearest first."""
    parent = {cohort.id: cohort.parent_id for cohort in cohorts}
    return {queue.id: ancestry(queue.cohort_id, parent) for queue in cluster_queues}


def admitted_usage(cohort_chains: Mapping[int, tuple[int, ...]]) -> dict[str, dict[int, Usage]]:
    """Admitted usage per LocalQueue, Namespace, ClusterQueue and Cohort (one query).

    Read from the admitted-usage counters (``AdmittedUsage``, kept by the transitions: one row
    per LocalQueue, ClusterQueue and resource, a few thousand rows where the join they replace
    read every admitted workload's resource rows), the namespace from the LocalQueue (a
    workload's namespace is its LocalQueue's), then summed on every node of the path (the
    engine's ``path_nodes``: the cohorts of ``cohort_chains`` included, so a cohort's amount
    is the sum over the ClusterQueues of its whole subtree). A counter no admitted workload
    holds (``workloads`` 0) is absent, as a resource nobody holds was from the join.
    """
    usage: dict[str, dict[int, Usage]] = {
        Kind.LOCAL_QUEUE: {},
        Kind.NAMESPACE: {},
        Kind.CLUSTER_QUEUE: {},
        Kind.COHORT: {},
    }
    with connection.cursor() as cursor:
        cursor.execute(_COUNTERS)
        rows = cursor.fetchall()
    for lq_id, namespace_id, cq_id, resource, total in rows:
        for kind, key in path_nodes(lq_id, namespace_id, cq_id, cohort_chains.get(cq_id, ())):
            amounts = usage[kind].setdefault(key, {})
            amounts[resource] = amounts.get(resource, 0) + int(total)
    for level in usage.values():  # the same order as before: resources sorted
        for key, amounts in level.items():
            level[key] = dict(sorted(amounts.items()))
    return usage


_COUNTERS = (
    "SELECT c.local_queue_id, lq.namespace_id, c.cluster_queue_id, c.resource, SUM(c.amount) "
    f"FROM {AdmittedUsage._meta.db_table} c JOIN queues_localqueue lq ON lq.id = c.local_queue_id "
    "GROUP BY c.local_queue_id, lq.namespace_id, c.cluster_queue_id, c.resource HAVING SUM(c.workloads) > 0"
)


def _cohort_rollup(
    cohorts: list[Cohort], cluster_queues: list[ClusterQueue], per_queue: Mapping[int, Usage]
) -> dict[int, Usage]:
    """Each cohort's amount is the sum over the ClusterQueues of its whole subtree."""
    totals: dict[int, Usage] = defaultdict(dict)
    for queue_id, chain in _cohort_chains(cohorts, cluster_queues).items():
        for node in chain:
            _add(totals[node], per_queue.get(queue_id, {}))
    return totals


def capacities(cohorts: list[Cohort], cluster_queues: list[ClusterQueue]) -> tuple[dict[int, Usage], dict[int, Usage]]:
    """Nominal quota per ClusterQueue, and per cohort over its subtree including its own quota."""
    per_queue: dict[int, Usage] = defaultdict(dict)
    for row in ClusterQueueQuota.objects.values("cluster_queue_id", "resource").annotate(total=Sum("nominal")):
        per_queue[row["cluster_queue_id"]][row["resource"]] = int(row["total"])
    per_cohort = _cohort_rollup(cohorts, cluster_queues, per_queue)
    parent = {cohort.id: cohort.parent_id for cohort in cohorts}
    for cohort_row in CohortQuota.objects.values("cohort_id", "resource").annotate(total=Sum("nominal")):
        for node in ancestry(cohort_row["cohort_id"], parent):
            _add(per_cohort[node], {cohort_row["resource"]: int(cohort_row["total"])})
    return per_queue, per_cohort


def _decay(
    rows: list[Any], current: Mapping[int, Usage], now: float, policy: FairSharingPolicy, weight_attr: str = "weight"
) -> None:
    last_update = datetime.fromtimestamp(now, tz=timezone.get_current_timezone())
    for row in rows:
        state = engine_usage.sample(
            usage_state(row.consumed_resources, row.entry_penalty, row.usage_last_update),
            current.get(row.id, {}),
            now,
            policy,
        )
        row.consumed_resources = dict(state.consumed)
        row.entry_penalty = {}
        row.usage_last_update = last_update
        score = engine_usage.usage_score(state, float(getattr(row, weight_attr)), policy)
        row.weighted_share = score if score != float("inf") else None


_STATUS_COLUMNS = ("id", "weight", "consumed_resources", "entry_penalty", "usage_last_update", "weighted_share")


def _write_status(model: type[Model], rows: list[Any], moment: datetime) -> None:
    """The decayed state of every row of one level in one ``UPDATE ... FROM`` (penalties folded in)."""
    if not rows:
        return
    table = model._meta.db_table
    execute_with_rows(
        f"UPDATE {table} SET consumed_resources = s.consumed, entry_penalty = %s, usage_last_update = %s, "
        f"weighted_share = s.share FROM s WHERE {table}.id = s.id",
        "s",
        (("id", "bigint"), ("consumed", "jsonb"), ("share", "float8")),
        [(row.id, row.consumed_resources, row.weighted_share) for row in rows],
        ["{}", moment],
    )


_SERIES_COLUMNS = (
    ("kind", "text"),
    ("object_id", "bigint"),
    ("allocated", "jsonb"),
    ("consumed", "jsonb"),
    ("capacity", "jsonb"),
    ("weighted_share", "float8"),
    ("admitted_count", "integer"),
    ("pending_count", "integer"),
)


def _write_series(moment: datetime, rows: list[tuple[Any, ...]]) -> None:
    """One usage-series row per object, in one ``INSERT ... SELECT`` per chunk."""
    if not rows:
        return
    names = ", ".join(name for name, _ in _SERIES_COLUMNS)
    execute_with_rows(
        f"INSERT INTO {UsageSample._meta.db_table} (sampled_at, resolution, {names}) SELECT %s, %s, {names} FROM t",
        "t",
        _SERIES_COLUMNS,
        rows,
        [moment, UsageSample.Resolution.RAW],
    )


def _locked_rows(model: type[Namespace] | type[LocalQueue], *fields: str) -> list[SimpleNamespace]:
    """Every row of a (large) level, locked in id order, as plain records: no model instances."""
    columns = [*_STATUS_COLUMNS, *fields]
    return [
        SimpleNamespace(**dict(zip(columns, values)))
        for values in model.objects.select_for_update().order_by("id").values_list(*columns)
    ]


def sample_usage(
    *, now: datetime | None = None, policy: FairSharingPolicy | None = None, set_based: bool | None = None
) -> SampleResult:
    """Take one usage sample of every queue level; skipped when another sample is running.

    Lock order: the advisory lock ``usage-sample``, then the status rows level by level
    (cohorts, ClusterQueues, namespaces, LocalQueues), each in id order: the order the
    admission pass adds entry penalties in. Admitted usage and the admitted and pending counts
    come from the counters (``admitted_usage``, ``usage_counters.COUNTS_SQL``), which the
    sample reads without locking: it never reads the workload table. It first folds the
    workload count changes into the counts (``usage_counters.fold``, one statement), so they
    stay a few rows per LocalQueue changed since the last sample.

    On PostgreSQL (``set_based``, the default there) the two large levels, namespaces and
    LocalQueues, are decayed, rescored and written in one statement (``_set_based_sql``, one
    float column per resource) without their rows leaving the database: a fixed number of
    statements whatever the number of queues or workloads (about 15, and the TimeAware
    history's reads when a scope uses it, and its write when a share changed: a LocalQueue's
    ``historical_share`` is rewritten only when its value changes). The row-by-row path
    (SQLite, and the reference the tests compare the set-based one with) decays every row
    through the engine; both store the same values.
    """
    policy = policy or settings.FAIR_SHARING
    if set_based is None:
        set_based = connection.vendor == "postgresql"
    with transaction.atomic():
        moment = now or timezone.now()
        if not try_advisory_xact_lock("usage-sample"):
            return SampleResult(sampled=False, at=moment)
        cohorts = list(Cohort.objects.select_for_update().order_by("id"))
        cluster_queues = list(ClusterQueue.objects.select_for_update().order_by("id"))
        usage_counters.fold()
        if set_based:
            rows = _sample_set_based(cohorts, cluster_queues, moment, policy)
        else:
            rows = _sample_row_by_row(cohorts, cluster_queues, moment, policy)
    return SampleResult(sampled=True, at=moment, rows=rows)


def _sample_row_by_row(
    cohorts: list[Cohort], cluster_queues: list[ClusterQueue], moment: datetime, policy: FairSharingPolicy
) -> int:
    """Every level's rows read, decayed by the engine one by one, and written back."""
    namespaces = _locked_rows(Namespace, "name")
    local_queues = _locked_rows(LocalQueue, "name", "namespace_id", "cluster_queue_id", "historical_share")

    usage = admitted_usage(_cohort_chains(cohorts, cluster_queues))
    counts = _counts_per_local_queue(local_queues)
    counts.update(_cohort_counts(cohorts, cluster_queues, counts))
    levels: list[tuple[type[Model], list[Any], str]] = [
        (Cohort, cohorts, Kind.COHORT),
        (ClusterQueue, cluster_queues, Kind.CLUSTER_QUEUE),
        (Namespace, namespaces, Kind.NAMESPACE),
        (LocalQueue, local_queues, Kind.LOCAL_QUEUE),
    ]
    rows = _decay_levels(levels, usage, counts, cohorts, cluster_queues, moment, policy)
    names = {namespace.id: namespace.name for namespace in namespaces}
    _update_historical_shares(cohorts, cluster_queues, names, local_queues, moment, policy)
    return rows


def _decay_levels(
    levels: list[tuple[type[Model], list[Any], str]],
    usage: Mapping[str, Mapping[int, Usage]],
    counts: Mapping[tuple[str, int], tuple[int, int]],
    cohorts: list[Cohort],
    cluster_queues: list[ClusterQueue],
    moment: datetime,
    policy: FairSharingPolicy,
) -> int:
    """Decay ``levels`` through the engine, write their state and their series rows; the count."""
    queue_capacity, cohort_capacity = capacities(cohorts, cluster_queues)
    now_s = moment.timestamp()
    series: list[tuple[Any, ...]] = []
    for _model, rows, kind in levels:
        _decay(rows, usage[kind], now_s, policy)
        for row in rows:
            admitted, pending = counts.get((kind, row.id), (0, 0))
            capacity = (
                queue_capacity.get(row.id, {})
                if kind == Kind.CLUSTER_QUEUE
                else (cohort_capacity.get(row.id, {}) if kind == Kind.COHORT else {})
            )
            series.append(
                (
                    kind,
                    row.id,
                    dict(usage[kind].get(row.id, {})),
                    row.consumed_resources,
                    dict(capacity),
                    row.weighted_share,
                    admitted,
                    pending,
                )
            )
    _write_series(moment, series)
    for model, rows, _kind in levels:
        _write_status(model, rows, moment)
    return len(series)


# --- the set-based sample (PostgreSQL) --------------------------------------------------------

# A float as Python's json.dumps writes it, so both paths store the same JSON: PostgreSQL's
# shortest round-trip text (the same digits as Python's repr), with the ".0" Python gives an
# integral value below 1e16 (without it, jsonb would keep an integer: 2000 instead of 2000.0).
# A null stays null.
_JSON_FLOAT = (
    "(CASE WHEN {v} = trunc({v}) AND abs({v}) < 1e16 THEN ((({v})::text::numeric)::text || '.0')::jsonb "
    "ELSE to_jsonb({v}) END)"
)
_FLOAT = "({j})::text::float8"  # a jsonb number as Python's float() of the parsed JSON


def _each(template: str, resources: int, separator: str = ", ") -> str:
    """``template`` once per resource (``{i}``: its 1-based position in ``k.names``), joined."""
    return separator.join(template.format(i=i) for i in range(1, resources + 1))


def _columns(template: str, resources: int) -> str:
    """``_each`` as extra columns of a ``SELECT`` list (a leading comma; nothing without resources)."""
    return "".join(f", {template.format(i=i)}" for i in range(1, resources + 1))


def _level_sql(prefix: str, table: str, current: str, count: str, resources: int, parents: str = "") -> str:
    """The CTEs that decay one level (``prefix``: their names); ``_write_sql`` writes it.

    ``current``: the level's admitted-usage counters as ``(id, resource, amount, workloads)``
    rows, not grouped; ``count``: ``(id, admitted, pending)``. The resources are the statement's
    ``k.names`` (``resources`` of them: every key of the two levels' stored usage and every
    counter's resource, in Python's sort order, their weights in ``k.weights``). Each row's
    stored usage is read as one float column per resource (``p1``, ``p2``, ...: null when the
    map lacks the key) and its admitted usage pivoted from the counters the same way (``n1``,
    ...: null when no admitted workload holds the resource), so the decay is arithmetic on the
    columns of one row: no map is taken apart and grouped again, and no aggregate sorts.

    Per resource as the engine's ``sample``: a row never sampled keeps its usage (as floats,
    zeros included); otherwise ``(1 - alpha) * previous + alpha * current`` (previous ignored
    after ``resetInactivityPeriod``), zeros dropped, ``alpha`` and the reset from ``f`` (the
    engine's ``sample_factors`` per distinct ``usage_last_update``). Then ``usage_score``: the
    kept resources' weighted sum, added from 0.0 in name order as the engine adds them, over
    the row's weight (none when it is <= 0). ``unknown`` (rows and counters): a key or resource
    outside ``k.names`` (a row or counter committed after the names were read), for ``guard``.
    ``parents``: more columns of the level's rows ``{prefix}_rows`` keeps (``t.column, ``).
    """
    consumed = _each(f"k.names[{{i}}], {_JSON_FLOAT.format(v='e.v{i}')}", resources)
    allocated = _each("k.names[{i}], to_jsonb(e.n{i})", resources)
    weighted = "0::float8"
    for i in range(1, resources + 1):  # the engine's order of additions: ((0.0 + a) + b) + c
        weighted = f"({weighted} + COALESCE(k.weights[{i}] * (e.v{i} + 0::float8), 0::float8))"
    return f"""
    {prefix}_cur AS (
        SELECT c.id, bool_or(c.resource <> ALL(k.names)) AS unknown{
        _columns(
            "CASE WHEN SUM(c.workloads) FILTER (WHERE c.resource = k.names[{i}]) > 0 "
            "THEN SUM(c.amount) FILTER (WHERE c.resource = k.names[{i}]) END AS n{i}",
            resources,
        )
    }
          FROM ({current}) c, k GROUP BY c.id
    ),
    {prefix}_rows AS (
        SELECT t.id, {
        parents
    }t.weight, t.usage_last_update IS NULL AS fresh, f.alpha, COALESCE(f.reset, false) AS reset,
               t.consumed_resources - k.names <> '{{}}'::jsonb AS unknown{
        _columns(f"{_FLOAT.format(j='t.consumed_resources -> k.names[{i}]')} AS p{{i}}", resources)
    }
          FROM {table} t LEFT JOIN f ON f.last_update = t.usage_last_update CROSS JOIN k
    ),
    {prefix}_values AS (
        SELECT r.id, r.weight, r.fresh{_columns("c.n{i}", resources)}{
        _columns(
            "CASE WHEN r.fresh THEN r.p{i} WHEN r.p{i} IS NULL AND c.n{i} IS NULL THEN NULL "
            "ELSE (1::float8 - r.alpha) * COALESCE(CASE WHEN r.reset THEN NULL ELSE r.p{i} END, 0::float8) "
            "+ r.alpha * COALESCE(c.n{i}::float8, 0::float8) END AS v{i}",
            resources,
        )
    }
          FROM {prefix}_rows r LEFT JOIN {prefix}_cur c ON c.id = r.id
    ),
    {prefix}_kept AS (
        SELECT id, weight{_columns("n{i}", resources)}{
        _columns("CASE WHEN fresh OR v{i} <> 0 THEN v{i} END AS v{i}", resources)
    }
          FROM {prefix}_values
    ),
    {prefix}_out AS (
        SELECT e.id, jsonb_strip_nulls(jsonb_build_object({allocated})) AS allocated,
               jsonb_strip_nulls(jsonb_build_object({consumed})) AS consumed,
               CASE WHEN e.weight > 0 THEN ({weighted}) / e.weight::float8 END AS share
          FROM {prefix}_kept e, k
    ),
    {prefix}_cnt AS ({count})"""


def _write_sql(prefix: str, table: str) -> str:
    """The CTE that writes one level's decayed state, unless ``guard`` found an unknown resource."""
    return f"""
    {prefix}_write AS (
        UPDATE {table} SET consumed_resources = o.consumed, entry_penalty = '{{}}'::jsonb,
               usage_last_update = m.moment, weighted_share = o.share
          FROM {prefix}_out o, m, guard WHERE {table}.id = o.id AND NOT guard.unknown
    )"""


def _series_sql(prefix: str, kind: str) -> str:
    return (
        f"SELECT m.moment, '{UsageSample.Resolution.RAW}', '{kind}', o.id, o.allocated, o.consumed, '{{}}'::jsonb, "
        f"o.share, COALESCE(k.admitted, 0), COALESCE(k.pending, 0) "
        f"FROM m, guard, {prefix}_out o LEFT JOIN {prefix}_cnt k ON k.id = o.id WHERE NOT guard.unknown"
    )


_USAGE = AdmittedUsage._meta.db_table


@lru_cache(maxsize=8)
def _set_based_sql(resources: int) -> str:
    """The statement that samples namespaces and LocalQueues, for ``resources`` resources.

    Parameters: the factors ``f`` (a ``rows_cte``), the moment, the resource names (sorted)
    and their weights. Nothing is written when ``guard`` finds a resource outside the names.
    """
    lq = _level_sql(
        "lq",
        "queues_localqueue",
        f"SELECT local_queue_id AS id, resource, amount, workloads FROM {_USAGE}",
        "SELECT id, admitted, pending FROM cnt",
        resources,
        "t.namespace_id, t.cluster_queue_id, ",
    )
    ns = _level_sql(  # the LocalQueues' namespaces from lq_rows: the table is not read again
        "ns",
        "queues_namespace",
        f"SELECT lq.namespace_id AS id, c.resource, c.amount, c.workloads FROM {_USAGE} c "
        "JOIN lq_rows lq ON lq.id = c.local_queue_id",
        "SELECT lq.namespace_id AS id, SUM(cnt.admitted) AS admitted, SUM(cnt.pending) AS pending "
        "FROM cnt JOIN lq_rows lq ON lq.id = cnt.id GROUP BY lq.namespace_id",
        resources,
    )
    return f"""
    m(moment) AS (SELECT %s::timestamptz),
    k(names, weights) AS (SELECT %s::text[], %s::float8[]),
    cnt AS (
        SELECT local_queue_id AS id, admitted, pending FROM ({usage_counters.COUNTS_SQL.format(where="")}) k
    ),
    {lq},
    {ns},
    guard(unknown) AS (
        SELECT EXISTS (SELECT 1 FROM lq_cur WHERE unknown) OR EXISTS (SELECT 1 FROM lq_rows WHERE unknown)
               OR EXISTS (SELECT 1 FROM ns_rows WHERE unknown)
    ),
    {_write_sql("lq", "queues_localqueue")},
    {_write_sql("ns", "queues_namespace")},
    series AS (
        INSERT INTO {UsageSample._meta.db_table} (sampled_at, resolution, kind, object_id, allocated, consumed,
                                                  capacity, weighted_share, admitted_count, pending_count)
        {_series_sql("ns", Kind.NAMESPACE)} UNION ALL {_series_sql("lq", Kind.LOCAL_QUEUE)}
        RETURNING 1
    )
SELECT 'series', NULL::bigint, (SELECT COUNT(*) FROM series)::numeric, NULL::numeric
UNION ALL
SELECT 'unknown', NULL, (SELECT unknown::int FROM guard), NULL
UNION ALL
SELECT 'clusterQueue', lq.cluster_queue_id, SUM(cnt.admitted), SUM(cnt.pending)
  FROM cnt JOIN lq_rows lq ON lq.id = cnt.id GROUP BY lq.cluster_queue_id
"""


def _lock_level(model: type[Model], *, counters: bool = False) -> tuple[list[datetime | None], set[str]]:
    """Lock every row of a level in id order (the lock order); its distinct ``usage_last_update``
    and the keys of its stored usage (with ``counters``, the counters' resources too)."""
    table = model._meta.db_table
    counted = f" UNION SELECT 'k', NULL, resource FROM {_USAGE} GROUP BY resource" if counters else ""
    with connection.cursor() as cursor:
        cursor.execute(
            f"WITH locked AS (SELECT id, usage_last_update, consumed_resources FROM {table} ORDER BY id FOR UPDATE) "
            "SELECT 'u', usage_last_update, NULL FROM locked GROUP BY usage_last_update "
            "UNION ALL SELECT 'k', NULL, key FROM locked, jsonb_object_keys(consumed_resources) key GROUP BY key"
            f"{counted}"
        )
        rows = cursor.fetchall()
    return [update for tag, update, _ in rows if tag == "u"], {key for tag, _, key in rows if tag == "k"}


def _sample_set_based(
    cohorts: list[Cohort], cluster_queues: list[ClusterQueue], moment: datetime, policy: FairSharingPolicy
) -> int:
    """Namespaces and LocalQueues in one statement; cohorts and ClusterQueues (a few rows) as
    the row-by-row path does them, with the ClusterQueue counts that statement returns.

    Should a row or counter with a resource the locking reads did not see have committed in
    between (a LocalQueue created meanwhile, a workload of a new resource admitted), the
    statement writes nothing and the sample is taken row by row instead (the same values)."""
    namespace_updates, namespace_keys = _lock_level(Namespace)
    queue_updates, queue_keys = _lock_level(LocalQueue, counters=True)
    updates = {update for update in (*namespace_updates, *queue_updates) if update is not None}
    names = sorted(namespace_keys | queue_keys)
    now_s = moment.timestamp()
    factors = [(update, *engine_usage.sample_factors(update.timestamp(), now_s, policy)) for update in sorted(updates)]
    cte, cte_params = rows_cte(
        "f", (("last_update", "timestamptz"), ("alpha", "float8"), ("reset", "boolean")), factors
    )
    with connection.cursor() as cursor:
        # The planner prices the per-row JSON work high enough to compile it (JIT): seconds of
        # compiling for a statement that runs in a fraction of that. Off for this transaction.
        cursor.execute("SET LOCAL jit = off")
        # Its grouped aggregates (one group per LocalQueue) spill to disk in the default 4 MB.
        cursor.execute("SET LOCAL work_mem = '32MB'")
        cursor.execute(
            f"WITH {cte}, {_set_based_sql(len(names))}",
            [*cte_params, moment, names, [float(policy.resource_weight(name)) for name in names]],
        )
        result = cursor.fetchall()
    if any(tag == "unknown" and count for tag, _, count, _ in result):
        logger.info("usage sample: a resource appeared while sampling; sampled row by row")
        return _sample_row_by_row(cohorts, cluster_queues, moment, policy)
    written = sum(int(count) for tag, _, count, _ in result if tag == "series")
    chains = _cohort_chains(cohorts, cluster_queues)
    usage = _cluster_queue_usage(chains)
    counts: dict[tuple[str, int], tuple[int, int]] = {
        (Kind.CLUSTER_QUEUE, cq_id): (int(admitted), int(pending))
        for tag, cq_id, admitted, pending in result
        if tag == Kind.CLUSTER_QUEUE
    }
    counts.update(_cohort_counts(cohorts, cluster_queues, counts))
    levels: list[tuple[type[Model], list[Any], str]] = [
        (Cohort, cohorts, Kind.COHORT),
        (ClusterQueue, cluster_queues, Kind.CLUSTER_QUEUE),
    ]
    written += _decay_levels(levels, usage, counts, cohorts, cluster_queues, moment, policy)
    local_queues, names_by_id = _time_aware_local_queues(cohorts, cluster_queues)
    _update_historical_shares(cohorts, cluster_queues, names_by_id, local_queues, moment, policy)
    return written


def _cluster_queue_usage(cohort_chains: Mapping[int, tuple[int, ...]]) -> dict[str, dict[int, Usage]]:
    """Admitted usage per ClusterQueue and cohort from the counters (one query, a few rows)."""
    usage: dict[str, dict[int, Usage]] = {Kind.CLUSTER_QUEUE: {}, Kind.COHORT: {}}
    with connection.cursor() as cursor:
        cursor.execute(
            f"SELECT cluster_queue_id, resource, SUM(amount) FROM {_USAGE} "
            "GROUP BY cluster_queue_id, resource HAVING SUM(workloads) > 0 ORDER BY cluster_queue_id, resource"
        )
        rows = cursor.fetchall()
    for cq_id, resource, total in rows:
        for kind, key in ((Kind.CLUSTER_QUEUE, cq_id), *((Kind.COHORT, node) for node in cohort_chains.get(cq_id, ()))):
            amounts = usage[kind].setdefault(key, {})
            amounts[resource] = amounts.get(resource, 0) + int(total)
    for level in usage.values():
        for key, amounts in level.items():
            level[key] = dict(sorted(amounts.items()))
    return usage


def _time_aware_local_queues(
    cohorts: list[Cohort], cluster_queues: list[ClusterQueue]
) -> tuple[list[SimpleNamespace], dict[int, str]]:
    """The LocalQueues whose TimeAware history the sample refreshes or clears, and their
    namespaces' names (two queries, only those rows)."""
    scoped = list(time_aware_scopes(cohorts, cluster_queues))
    columns = ("id", "name", "namespace_id", "cluster_queue_id", "historical_share")
    rows = [
        SimpleNamespace(**dict(zip(columns, values)))
        for values in LocalQueue.objects.filter(Q(cluster_queue_id__in=scoped) | ~Q(historical_share={}))
        .order_by("id")
        .values_list(*columns)
    ]
    names = (
        dict(Namespace.objects.filter(pk__in={row.namespace_id for row in rows}).values_list("id", "name"))
        if rows
        else {}
    )
    return rows, names


def _counts_per_local_queue(local_queues: list[Any]) -> dict[tuple[str, int], tuple[int, int]]:
    """Admitted and pending workload counts per LocalQueue, rolled up to the other levels.

    One read of the workload counters (``usage_counters.COUNTS_SQL``, kept by the transitions
    and the submission: no count over the workload table); the LocalQueues' namespace and
    ClusterQueue come from the rows already loaded, not from a join.
    """
    parents = {lq.id: (lq.namespace_id, lq.cluster_queue_id) for lq in local_queues}
    counts: dict[tuple[str, int], list[int]] = defaultdict(lambda: [0, 0])
    with connection.cursor() as cursor:
        cursor.execute(usage_counters.COUNTS_SQL.format(where=""))
        rows = cursor.fetchall()
    for lq_id, admitted, pending in rows:
        namespace_id, cq_id = parents.get(lq_id, (None, None))
        for key in ((Kind.LOCAL_QUEUE, lq_id), (Kind.NAMESPACE, namespace_id), (Kind.CLUSTER_QUEUE, cq_id)):
            counts[key][0] += admitted
            counts[key][1] += pending
    return {key: (value[0], value[1]) for key, value in counts.items()}


def _cohort_counts(
    cohorts: list[Cohort], cluster_queues: list[ClusterQueue], counts: Mapping[tuple[str, int], tuple[int, int]]
) -> dict[tuple[str, int], tuple[int, int]]:
    """Each cohort's admitted and pending counts: the sums over the ClusterQueues of its subtree
    (as its usage is), so a cohort's chart agrees with its cards."""
    per_cohort: dict[int, dict[str, int]] = _cohort_rollup(
        cohorts,
        cluster_queues,
        {
            queue.id: dict(zip(("admitted", "pending"), counts.get((Kind.CLUSTER_QUEUE, queue.id), (0, 0))))
            for queue in cluster_queues
        },
    )
    return {
        (Kind.COHORT, cohort_id): (totals.get("admitted", 0), totals.get("pending", 0))
        for cohort_id, totals in per_cohort.items()
    }


# --- TimeAware: windowed, decayed history per LocalQueue ----------------------------------------


def time_aware_scopes(cohorts: list[Cohort], cluster_queues: list[ClusterQueue]) -> dict[int, tuple[str, int]]:
    """ClusterQueue id -> its TimeAware scope node (``(kind, id)``), for queues in such a scope.

    The highest scope on the path wins, as in Kueue (the engine's ``highest_mode``): a cohort
    above with another mode hides a ClusterQueue's own TimeAware setting.
    """
    modes = {cohort.id: cohort.admission_mode or None for cohort in cohorts}
    scopes: dict[int, tuple[str, int]] = {}
    chains = _cohort_chains(cohorts, cluster_queues)
    for queue in cluster_queues:
        found = highest_mode(
            [
                ((Kind.CLUSTER_QUEUE, queue.id), queue.admission_mode or None),
                *(((Kind.COHORT, node), modes[node]) for node in chains[queue.id]),
            ]
        )
        if found is not None and found[1] == TIME_AWARE:
            scopes[queue.id] = found[0]
    return scopes


def _series(
    kind: str, object_ids: Iterable[int], since: datetime, field: str
) -> dict[int, dict[str, list[tuple[float, float]]]]:
    """Step-function samples per object and resource, from ``since`` (one row earlier included)."""
    out: dict[int, dict[str, list[tuple[float, float]]]] = defaultdict(lambda: defaultdict(list))
    rows = (
        UsageSample.objects.filter(kind=kind, object_id__any_of=list(object_ids), sampled_at__gte=since)
        .order_by("object_id", "sampled_at", "id")
        .values_list("object_id", "sampled_at", field)
    )
    for object_id, at, amounts in rows.iterator(chunk_size=5000):
        t = at.timestamp()
        resources = out[object_id]
        for resource in set(resources) | set(amounts or {}):
            resources[resource].append((t, float((amounts or {}).get(resource, 0))))
    return out


def _update_historical_shares(
    cohorts: list[Cohort],
    cluster_queues: list[ClusterQueue],
    names: Mapping[int, str],
    local_queues: list[SimpleNamespace],
    now: datetime,
    policy: FairSharingPolicy,
) -> None:
    """KAI's ``U``: each LocalQueue's windowed decayed usage over its scope's windowed capacity.

    From the built-in series by default; from Prometheus when ``PROMETHEUS_URL`` is set (as
    KAI does). Prometheus being unreachable keeps the previous values and logs why.
    """
    scopes = time_aware_scopes(cohorts, cluster_queues)
    before = {lq.id: lq.historical_share for lq in local_queues}
    targets = [lq for lq in local_queues if lq.cluster_queue_id in scopes]
    stale = [lq for lq in local_queues if lq.cluster_queue_id not in scopes and lq.historical_share]
    source = usage_source_from_settings(policy, getattr(settings, "PROMETHEUS_URL", ""))
    if targets and source is not None:
        try:
            history = source.historical_usage(now.timestamp())
        except PrometheusError as error:
            logger.warning("TimeAware history not refreshed: %s", error)
            targets = []
        else:
            for lq in targets:
                shares = history.get(node_id("localQueue", f"{names[lq.namespace_id]}/{lq.name}"), {})
                lq.historical_share = {resource: value for resource, value in sorted(shares.items()) if value}
    elif targets:
        window = policy.usage_window
        since = datetime.fromtimestamp(
            engine_usage.window_start(now.timestamp(), window.size_seconds, window.type), tz=now.tzinfo
        ) - timedelta(hours=1)
        usage = _series(Kind.LOCAL_QUEUE, [lq.id for lq in targets], since, "allocated")
        scope_nodes = {scopes[lq.cluster_queue_id] for lq in targets}
        capacity: dict[tuple[str, int], dict[str, list[tuple[float, float]]]] = {}
        for kind in (Kind.COHORT, Kind.CLUSTER_QUEUE):
            ids = [object_id for node_kind, object_id in scope_nodes if node_kind == kind]
            for object_id, series in _series(kind, ids, since, "capacity").items():
                capacity[(kind, object_id)] = series
        for lq in targets:
            scope_capacity = capacity.get(scopes[lq.cluster_queue_id], {})
            shares = {}
            for resource, samples in sorted(usage.get(lq.id, {}).items()):
                share = engine_usage.windowed_share(
                    samples,
                    scope_capacity.get(resource, []),
                    now.timestamp(),
                    window.size_seconds,
                    window.type,
                    policy.usage_half_life_seconds,
                )
                if share:
                    shares[resource] = share
            lq.historical_share = shares
    for lq in stale:
        lq.historical_share = {}
    changed = [lq for lq in targets + stale if not _same_json(lq.historical_share, before[lq.id])]
    execute_with_rows(  # no statement when nothing changed
        "UPDATE queues_localqueue SET historical_share = h.share FROM h WHERE queues_localqueue.id = h.id",
        "h",
        (("id", "bigint"), ("share", "jsonb")),
        [(lq.id, lq.historical_share) for lq in changed],
    )


def _same_json(new: Mapping[str, Any] | None, stored: Mapping[str, Any] | None) -> bool:
    """Whether writing ``new`` would store what is stored: the same keys, values equal and of the
    same type (2000.0 is stored as 2000.0, not as 2000), so an unchanged row is not rewritten."""
    if new is None or stored is None:
        return new is stored
    return new.keys() == stored.keys() and all(
        type(value) is type(stored[key]) and value == stored[key] for key, value in new.items()
    )


# --- retention --------------------------------------------------------------------------------


def _hour(moment: datetime) -> datetime:
    return moment.replace(minute=0, second=0, microsecond=0)


def _mean(maps: list[Mapping[str, float]]) -> dict[str, float]:
    total: dict[str, float] = defaultdict(float)
    for amounts in maps:
        for resource, amount in amounts.items():
            total[resource] += float(amount)
    return {resource: value / len(maps) for resource, value in sorted(total.items())}


@dataclass(frozen=True)
class PruneResult:
    downsampled: int
    hourly_rows: int
    deleted: int


def prune_usage_series(*, now: datetime | None = None) -> PruneResult:
    """Fold raw rows older than the raw retention into hourly averages; drop the oldest hours.

    Only whole hours before the cut are folded, so a later run never averages one hour twice.
    """
    moment = now or timezone.now()
    raw_cut = _hour(moment - timedelta(seconds=settings.USAGE_SERIES_RAW_RETENTION_SECONDS))
    keep_cut = moment - timedelta(
        seconds=max(settings.USAGE_SERIES_RETENTION_SECONDS, settings.FAIR_SHARING.usage_window.size_seconds)
    )
    with transaction.atomic():
        old = UsageSample.objects.filter(resolution=UsageSample.Resolution.RAW, sampled_at__lt=raw_cut)
        groups: dict[tuple[str, int, datetime], list[UsageSample]] = defaultdict(list)
        for row in old.order_by("sampled_at").iterator(chunk_size=5000):
            groups[(row.kind, row.object_id, _hour(row.sampled_at))].append(row)
        hourly = [
            UsageSample(
                sampled_at=hour,
                kind=kind,
                object_id=object_id,
                allocated=_mean([row.allocated for row in rows]),
                consumed=_mean([row.consumed for row in rows]),
                capacity=_mean([row.capacity for row in rows]),
                weighted_share=rows[-1].weighted_share,
                admitted_count=round(sum(row.admitted_count for row in rows) / len(rows)),
                pending_count=round(sum(row.pending_count for row in rows) / len(rows)),
                resolution=UsageSample.Resolution.HOURLY,
            )
            for (kind, object_id, hour), rows in groups.items()
        ]
        downsampled = sum(len(rows) for rows in groups.values())
        UsageSample.objects.bulk_create(hourly, batch_size=2000)
        old.delete()
        deleted, _ = UsageSample.objects.filter(sampled_at__lt=keep_cut).delete()
    return PruneResult(downsampled=downsampled, hourly_rows=len(hourly), deleted=deleted)
