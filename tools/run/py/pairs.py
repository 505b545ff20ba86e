"""Paired runs: which side goes first in each pair, the median of the
per-pair ratios with its bootstrap 95% interval, and the loop that runs
pairs until that interval is as narrow as asked."""
import random
import statistics

RESAMPLES = 2000
# Pairs added at a time once the first ones ran: an even number, so that
# each side goes first equally often, and two of a server's blocks.
STEP = 10
# The fewest blocks an interval that stops the pairs rests on: one block
# resampled is always itself, and a few give an interval too narrow.
FEWEST = 6


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


def reach(est):
    """How far the interval of (median, low, high) reaches from the median."""
    med, lo, hi = est
    return max(med - lo, hi - med)


def orders(pairs, rng):
    """Which side runs first in each pair: each equally often, shuffled."""
    o = [("plain", "uarch"), ("uarch", "plain")] * (pairs // 2 + 1)
    o = o[:pairs]
    rng.shuffle(o)
    return o


def bad_precision(precision, most, first):
    """Why --precision P / --max-pairs N (None: not given) with --pairs
    first cannot run, or None; and the cap to use (most, else 150)."""
    if precision is not None and not 0 < precision < 1:
        return f"--precision {precision:g}: not in (0, 1) (0.02 asks for +-2% of the median)", None
    if most is not None and precision is None:
        return "--max-pairs bounds --precision: give both", None
    most = most or max(150, first)
    if most < first:
        return f"--max-pairs {most} is below --pairs {first}", None
    return None, most


def run(run_pair, first, rng, seed, block=1, precision=None, most=None):
    """Runs `first` pairs; then, if precision is given, STEP more at a time
    while the interval reaches farther than precision from the median (or
    rests on fewer than FEWEST blocks) and fewer than `most` pairs ran.
    run_pair(i, order) runs pair i in that order and returns its two times
    (without, with). Returns the ratios and median_ci's (median, low, high)
    over them."""
    ratios = []
    todo = first
    while True:
        for order in orders(todo, rng):
            plain, uarch = run_pair(len(ratios), order)
            ratios.append(plain / uarch)
        est = median_ci(ratios, seed, block)
        if precision is None or len(ratios) >= most or \
                (len(ratios) >= FEWEST * block and reach(est) <= precision):
            return ratios, est
        todo = min(STEP, most - len(ratios))
