"""Usage accounting: KEP-4136 decayed usage, the entry penalty, scores, and KAI's windowed usage.

The Celery sampler calls ``sample`` for every LocalQueue, ClusterQueue, Namespace and Cohort
each ``usageSamplingInterval``; the planner adds ``entry_penalty`` at each admission; the
simulator does both on its own clock. All amounts are millis of the resource's base unit.
"""

from __future__ import annotations

import math
from bisect import bisect_left, bisect_right
from collections.abc import Iterable, Mapping, Sequence
from functools import reduce
from itertools import islice, repeat
from operator import add, le, mul, sub, truediv

from fairshare.policy import FairSharingPolicy
from fairshare.types import UsageState, frozen_map

INFINITE_SCORE = math.inf


def decay_alpha(elapsed_seconds: float, half_life_seconds: float) -> float:
    """``alpha = 1 - 0.5 ** (elapsed / half_life)``: the weight the current usage gets."""
    if elapsed_seconds <= 0:
        return 0.0
    return 1.0 - 0.5 ** (elapsed_seconds / half_life_seconds)


def decayed(consumed: float, current: float, alpha: float) -> float:
    """``(1 - alpha) * consumed + alpha * current``."""
    return (1.0 - alpha) * consumed + alpha * current


def sample(
    state: UsageState,
    current: Mapping[str, int],
    now: float,
    policy: FairSharingPolicy,
) -> UsageState:
    """The state after one sample at ``now`` with ``current`` admitted usage (millis per resource).

    ``alpha`` comes from the real time since ``last_update`` (a late sample decays more). After
    more than ``resetInactivityPeriod`` without a sample the usage restarts from zero (and then
    decays towards ``current``). The entry penalty is folded in: it stood in for workloads
    admitted since the last sample, and this sample now counts them in ``current``, so the
    pending penalty is cleared (as Kueue does). A state never sampled gets ``last_update = now``
    and keeps its consumed values (no time has elapsed to average over).
    """
    if state.last_update is None:
        return UsageState(consumed=state.consumed, penalty=frozen_map(None), last_update=now)
    alpha, reset = sample_factors(state.last_update, now, policy)
    previous: Mapping[str, float] = {} if reset else state.consumed
    consumed: dict[str, float] = {}
    for resource in sorted(set(previous) | set(current)):
        value = decayed(previous.get(resource, 0.0), float(current.get(resource, 0)), alpha)
        if value != 0.0:
            consumed[resource] = value
    return UsageState(consumed=frozen_map(consumed), penalty=frozen_map(None), last_update=max(now, state.last_update))


def sample_factors(last_update: float, now: float, policy: FairSharingPolicy) -> tuple[float, bool]:
    """``(alpha, reset)`` of a sample at ``now`` of a state last sampled at ``last_update``.

    What ``sample`` decays with: ``alpha`` from the real elapsed time, and whether the usage
    restarts from zero (more than ``resetInactivityPeriod`` without a sample). A sampler that
    decays many rows at once (in SQL) computes these once per distinct ``last_update``.
    """
    elapsed = now - last_update
    reset = policy.reset_inactivity_seconds
    return decay_alpha(elapsed, policy.usage_half_life_seconds), reset > 0 and elapsed > reset


def projected(state: UsageState, current: Mapping[str, int], now: float, policy: FairSharingPolicy) -> dict[str, float]:
    """What ``sample`` would store at ``now`` (for charts between samples); the state is unchanged."""
    return dict(sample(state, current, now, policy).consumed)


def entry_penalty(requests: Mapping[str, int], policy: FairSharingPolicy) -> dict[str, float]:
    """``alpha_s * requests``: the usage an admission adds at once, before the next sample sees it."""
    alpha_s = policy.sampling_alpha
    return {resource: alpha_s * amount for resource, amount in sorted(requests.items()) if amount}


def add_penalty(state: UsageState, penalty: Mapping[str, float]) -> UsageState:
    """``state`` with ``penalty`` added to its pending entry penalty."""
    merged = dict(state.penalty)
    for resource, amount in penalty.items():
        merged[resource] = merged.get(resource, 0.0) + amount
    return UsageState(consumed=state.consumed, penalty=frozen_map(merged), last_update=state.last_update)


def weighted_usage(state: UsageState, policy: FairSharingPolicy) -> float:
    """``sum_r w_r * (consumed_r + penalty_r)``, resources in name order for a stable float sum."""
    total = 0.0
    consumed, penalty = state.consumed, state.penalty
    for resource in sorted(set(consumed) | set(penalty)):
        total += policy.resource_weight(resource) * (consumed.get(resource, 0.0) + penalty.get(resource, 0.0))
    return total


def score_of(weighted: float, weight: float) -> float:
    """``weighted / weight``; a weight <= 0 (or not a number) gives +inf, never NaN.

    Zero usage with zero weight is still +inf: a queue of weight 0 is never ahead of one with
    a positive weight, whatever their usage.
    """
    if not weight > 0:  # also catches NaN
        return INFINITE_SCORE
    value = weighted / weight
    return INFINITE_SCORE if math.isnan(value) else value


def usage_score(state: UsageState, weight: float, policy: FairSharingPolicy) -> float:
    """The Admission Fair Sharing score of a queue: lower goes first."""
    return score_of(weighted_usage(state, policy), weight)


def score_sort_key(score: float) -> tuple[int, float]:
    """A total order on scores (inf after every finite value; NaN, which should not occur, last)."""
    if math.isnan(score):
        return (2, 0.0)
    if math.isinf(score):
        return (1, 0.0) if score > 0 else (-1, 0.0)
    return (0, score)


# --- TimeAware (KAI): windowed, decayed usage over a series of samples -------------------------


def window_start(now: float, size_seconds: float, window_type: str) -> float:
    """Where the usage window begins: ``now - size`` (sliding) or the current bucket (tumbling).

    Tumbling windows are aligned to multiples of ``size`` from time 0 (the epoch in the live
    system, the start in the simulator).
    """
    if window_type == "tumbling":
        return math.floor(now / size_seconds) * size_seconds
    return now - size_seconds


def windowed_usage(
    samples: Sequence[tuple[float, float]],
    now: float,
    size_seconds: float,
    window_type: str = "sliding",
    half_life_seconds: float | None = None,
) -> float:
    """Amount x seconds used inside the window, each moment weighted by ``0.5 ** (age / half_life)``.

    ``samples`` are ``(t, amount)`` sorted by ``t``: a step function, each amount holding from
    its ``t`` to the next sample's (the last one until ``now``); nothing before the first
    sample. A ``half_life_seconds`` of None or <= 0 means no decay. The integral is exact.
    """
    times = [t for t, _ in samples]
    amounts = [amount for _, amount in samples]
    return windowed_integral(times, amounts, now, size_seconds, window_type, half_life_seconds)


def windowed_integral(
    times: Sequence[float],
    amounts: Sequence[float],
    now: float,
    size_seconds: float,
    window_type: str = "sliding",
    half_life_seconds: float | None = None,
) -> float:
    """``windowed_usage`` of the samples ``zip(times, amounts)``, kept as two lists."""
    start = window_start(now, size_seconds, window_type)
    total = 0.0
    decay = half_life_seconds is not None and half_life_seconds > 0
    rate = math.log(2) / half_life_seconds if decay else 0.0  # type: ignore[operator]
    # Segment i holds amounts[i] over [lo, hi] = [max(t_i, start), min(t_i+1, now)] (the last one
    # until now). With every t_i clamped into [start, now], a segment is not empty exactly when
    # bounds[i + 1] > bounds[i], and then lo = bounds[i], hi = bounds[i + 1]. Each bound's decay
    # factor is computed once and shared by the two segments it bounds: the same numbers, term
    # for term and in the same order, as computing both ends of each segment.
    bounds = list(times)
    if bounds and not start <= bounds[0] <= now:  # the usual sample out of range: the one covering start
        bounds[0] = _clamp(bounds[0], start, now)
    if bounds and (min(bounds) < start or max(bounds) > now):
        bounds = [_clamp(t, start, now) for t in bounds]
    bounds.append(now)
    # Every segment adds ``amount * width`` in order, the empty ones and those of amount 0 too:
    # bounds never decrease and amounts are >= 0, so such a term is +0.0, and adding +0.0 to a
    # total that starts at +0.0 changes nothing. The same sum, term for term, as skipping them;
    # ``map`` keeps the per-segment arithmetic in C.
    if not all(map(le, bounds, islice(bounds, 1, None))):  # unsorted samples: skip the backward segments
        return _unsorted_integral(bounds, amounts, now, rate, total)
    return _segments_sum(bounds, amounts, now, rate)


def sorted_windowed_integral(
    times: Sequence[float],
    amounts: Sequence[float],
    now: float,
    size_seconds: float,
    window_type: str = "sliding",
    half_life_seconds: float | None = None,
) -> float:
    """``windowed_integral`` of samples whose ``times`` never decrease (a step series kept in
    time order), equal to it to the last bit, without scanning for the order or the range.

    It adds the same terms in the same order, leaving out only terms that are +0.0: the
    segments of samples at or after ``now`` and those of samples before the last one at or
    before the window's start are empty (both their bounds clamp to ``now``, or to the start).
    The sum starts at +0.0 and every term is >= +0.0 (amounts are >= 0), so adding a +0.0 term
    changes nothing. Requires ``amounts`` >= 0 and ``times`` in order (not checked).
    """
    start = window_start(now, size_seconds, window_type)
    if start >= now:  # every bound clamps to now (a window of no width, or rounding past now)
        return 0.0
    last = bisect_left(times, now)  # samples from here on start at or after now: empty segments
    first = bisect_right(times, start, 0, last)  # samples at or before start, among those
    if first:  # the last of them holds from the window's start; the ones before it are empty
        bounds = [start, *islice(times, first, last), now]
        held = islice(amounts, first - 1, last)
    else:
        bounds = [*islice(times, 0, last), now]
        held = islice(amounts, 0, last)
    rate = math.log(2) / half_life_seconds if half_life_seconds is not None and half_life_seconds > 0 else 0.0
    return _segments_sum(bounds, held, now, rate)


def _segments_sum(bounds: Sequence[float], amounts: Iterable[float], now: float, rate: float) -> float:
    """Sum over the segments ``[bounds[i], bounds[i + 1]]`` (never decreasing) of ``amounts[i]``
    times the segment's width, decayed at ``rate`` towards ``now`` (0: no decay), added one by
    one in order from +0.0, as ``total += term`` would (``sum`` may compensate rounding)."""
    if rate:
        # integral of amount * exp(-rate * (now - s)) ds over [lo, hi]: amount * (f(hi) - f(lo)) / rate
        factors = list(map(math.exp, map(mul, repeat(-rate), map(sub, repeat(now), bounds))))
        widths = map(sub, islice(factors, 1, None), factors)
        terms = map(truediv, map(mul, amounts, widths), repeat(rate))
    else:
        terms = map(mul, amounts, map(sub, islice(bounds, 1, None), bounds))
    return reduce(add, terms, 0.0)


def _unsorted_integral(bounds: list[float], amounts: Sequence[float], now: float, rate: float, total: float) -> float:
    """``windowed_integral``'s sum over clamped ``bounds`` that go backwards somewhere: the
    segments with ``hi > lo`` and an amount, in order (``rate`` 0: no decay)."""
    ends = iter(bounds)
    next(ends)
    if rate:
        exp, neg = math.exp, -rate
        factors = [exp(neg * (now - bound)) for bound in bounds]
        after = iter(factors)
        next(after)
        terms = [
            amount * (high - low) / rate
            for lo, hi, low, high, amount in zip(bounds, ends, factors, after, amounts)
            if hi > lo and amount != 0
        ]
    else:
        terms = [amount * (hi - lo) for lo, hi, amount in zip(bounds, ends, amounts) if hi > lo and amount != 0]
    return reduce(add, terms, total)


def _clamp(t: float, start: float, now: float) -> float:
    """``min(max(t, start), now)`` (the same value, without the calls)."""
    low = start if start > t else t
    return now if now < low else low


def windowed_share(
    usage_samples: Sequence[tuple[float, float]],
    capacity_samples: Sequence[tuple[float, float]],
    now: float,
    size_seconds: float,
    window_type: str = "sliding",
    half_life_seconds: float | None = None,
) -> float:
    """KAI's normalised usage ``U``: windowed usage divided by windowed capacity (0 if no capacity).

    With 10 GPUs over 10 hours and no decay, 24 GPU-hours used gives 0.24.
    """
    capacity = windowed_usage(capacity_samples, now, size_seconds, window_type, half_life_seconds)
    if capacity <= 0:
        return 0.0
    return windowed_usage(usage_samples, now, size_seconds, window_type, half_life_seconds) / capacity


def prune_samples(samples: list[tuple[float, float]], now: float, size_seconds: float, window_type: str) -> None:
    """Drop samples that can no longer reach any future window (keeps the one covering the start)."""
    start = window_start(now, size_seconds, window_type)
    drop = 0
    while drop + 1 < len(samples) and samples[drop + 1][0] <= start:
        drop += 1
    if drop:
        del samples[:drop]
