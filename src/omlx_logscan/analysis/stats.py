"""Exact small-count statistics for fault rates, in pure Python (no SciPy at run time).

Faults are rare (a handful in months of log), so normal approximations are useless: every
interval and p-value here is exact. The rate ratio of two Poisson counts is tested
conditionally: given ``n = k1 + k2`` faults, the number that fell in exposure ``t1`` is
Binomial(n, π) with ``π = RR·t1 / (RR·t1 + t2)``. A Clopper–Pearson interval on π, mapped
back through that formula, is the exact interval on the rate ratio (what R's
``poisson.test`` reports for two samples).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass

_BISECTION_STEPS = 200  # halves [0, 1] far below double precision


_TIE_TOLERANCE = 1 + 1e-7  # outcomes this close to the observed probability count as "as extreme"


def _log_pmf(k: int, n: int, p: float) -> float:
    if p <= 0.0:
        return 0.0 if k == 0 else -math.inf
    if p >= 1.0:
        return 0.0 if k == n else -math.inf
    log_choose = math.lgamma(n + 1) - math.lgamma(k + 1) - math.lgamma(n - k + 1)
    return log_choose + k * math.log(p) + (n - k) * math.log1p(-p)


def binomial_pmf(k: int, n: int, p: float) -> float:
    """P(X = k) for X ~ Binomial(n, p)."""
    return math.exp(_log_pmf(k, n, p))


def binomial_sf(k: int, n: int, p: float) -> float:
    """P(X ≥ k), summed directly rather than as 1 - cdf (no cancellation in the far tail)."""
    if k <= 0:
        return 1.0
    if k > n:
        return 0.0
    return min(1.0, math.fsum(binomial_pmf(i, n, p) for i in range(k, n + 1)))


def _crossing(increasing: Callable[[float], float], target: float) -> float:
    """The p in [0, 1] where an increasing function of p reaches ``target``, by bisection."""
    low, high = 0.0, 1.0
    for _ in range(_BISECTION_STEPS):
        middle = (low + high) / 2
        if increasing(middle) < target:
            low = middle
        else:
            high = middle
        if high - low < 1e-15:
            break
    return (low + high) / 2


def clopper_pearson(k: int, n: int, level: float = 0.95) -> tuple[float, float]:
    """The exact (Clopper–Pearson) interval for a binomial proportion after k successes in n.

    The low end is the p at which k or more successes have probability alpha/2; the high end
    the p at which k or fewer do, i.e. at which k + 1 or more have probability 1 - alpha/2.
    """
    if n <= 0 or not 0 <= k <= n:
        raise ValueError(f"need 0 <= k <= n and n > 0, got k={k}, n={n}")
    alpha = (1 - level) / 2
    low = 0.0 if k == 0 else _crossing(lambda p: binomial_sf(k, n, p), alpha)
    high = 1.0 if k == n else _crossing(lambda p: binomial_sf(k + 1, n, p), 1 - alpha)
    return low, high


def binomial_test(k: int, n: int, p0: float) -> float:
    """Two-sided exact binomial test: the probability of outcomes no more likely than k."""
    observed = binomial_pmf(k, n, p0)
    total = math.fsum(q for i in range(n + 1) if (q := binomial_pmf(i, n, p0)) <= observed * _TIE_TOLERANCE)
    return min(1.0, total)


@dataclass(frozen=True)
class RateRatio:
    """Rate inside over rate outside, its exact interval and the exact test of "no difference".

    With no fault outside, the point estimate is infinite: ``lower_bound_only`` is set and
    ``low`` is the figure to report ("≥ low"). ``high`` is ``math.inf`` then.
    """

    estimate: float
    low: float
    high: float
    p_value: float
    level: float

    @property
    def lower_bound_only(self) -> bool:
        return math.isinf(self.estimate)


def rate_ratio(k1: int, t1: float, k2: int, t2: float, level: float = 0.95) -> RateRatio | None:
    """Compare k1 events in exposure t1 with k2 in t2; None when there is nothing to compare."""
    n = k1 + k2
    if n == 0 or t1 <= 0 or t2 <= 0:
        return None
    scale = t2 / t1

    def ratio_of(share: float) -> float:
        return math.inf if share >= 1.0 else share / (1.0 - share) * scale

    low_share, high_share = clopper_pearson(k1, n, level)
    estimate = math.inf if k2 == 0 else (k1 / t1) / (k2 / t2)
    p_value = binomial_test(k1, n, t1 / (t1 + t2))
    return RateRatio(estimate, ratio_of(low_share), ratio_of(high_share), p_value, level)
