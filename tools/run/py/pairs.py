"""Paired runs: which side goes first in each pair, and the median of the
per-pair ratios with its bootstrap 95% interval."""
import random
import statistics

RESAMPLES = 2000


def median_ci(ratios, seed, block=1):
    """Median of ratios and the bootstrap 95% percentile interval of it.
    block > 1: the ratios come in runs of block that share a condition (a
    server's processes), and whole runs are resampled, so that the interval
    covers how much the condition moves the ratio."""
    rng = random.Random(seed)
    runs = [ratios[i:i + block] for i in range(0, len(ratios), block)]
    meds = sorted(statistics.median([x for r in rng.choices(runs, k=len(runs)) for x in r])
                  for _ in range(RESAMPLES))
    return statistics.median(ratios), meds[int(0.025 * RESAMPLES)], meds[int(0.975 * RESAMPLES) - 1]


def orders(pairs, rng):
    """Which side runs first in each pair: each equally often, shuffled."""
    o = [("plain", "uarch"), ("uarch", "plain")] * (pairs // 2 + 1)
    o = o[:pairs]
    rng.shuffle(o)
    return o
