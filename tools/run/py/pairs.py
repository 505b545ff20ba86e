"""Paired runs: which side goes first in each pair, and the median of the
per-pair ratios with its bootstrap 95% interval."""
import random
import statistics

RESAMPLES = 2000


def median_ci(ratios, seed):
    """Median of ratios and the bootstrap 95% percentile interval of it."""
    rng = random.Random(seed)
    n = len(ratios)
    meds = sorted(statistics.median(rng.choices(ratios, k=n)) for _ in range(RESAMPLES))
    return statistics.median(ratios), meds[int(0.025 * RESAMPLES)], meds[int(0.975 * RESAMPLES) - 1]


def orders(pairs, rng):
    """Which side runs first in each pair: each equally often, shuffled."""
    o = [("plain", "uarch"), ("uarch", "plain")] * (pairs // 2 + 1)
    o = o[:pairs]
    rng.shuffle(o)
    return o
