"""pairs.median_ci: a block of pairs that share a condition (a server's
processes) is resampled whole, so that the interval covers how far the
condition moves the ratio; single pairs are resampled as before.
pairs.run: runs pairs until the interval is as narrow as asked, in steps
that keep both orders equally often, and no further than asked."""
import os
import random
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "tools", "run", "py"))
import pairs  # noqa: E402

failures = []
rng = random.Random(3)
# Six blocks of five: five sit at 1.00, one at 1.10, the pairs within one
# block within +-0.002 of it.
ratios = [level + rng.uniform(-0.002, 0.002) for level in (1.0, 1.0, 1.1, 1.0, 1.0, 1.0) for _ in range(5)]
med, lo1, hi1 = pairs.median_ci(ratios, 15)
_, lo5, hi5 = pairs.median_ci(ratios, 15, block=5)
if not lo5 <= med <= hi5:
    failures.append(f"median {med:.3f} outside the blocks' interval [{lo5:.3f}, {hi5:.3f}]")
if not (hi1 < 1.01 and hi5 > 1.04):
    failures.append(f"the pairs' interval [{lo1:.3f}, {hi1:.3f}] and the blocks' [{lo5:.3f}, {hi5:.3f}]: "
                    "only the blocks' should reach the 1.10 block")
# block=1 is the pairs' bootstrap: the same draws as resampling the ratios.
r = random.Random(15)
meds = sorted(sorted(r.choices(ratios, k=len(ratios)))[len(ratios) // 2 - 1:len(ratios) // 2 + 1]
              for _ in range(pairs.RESAMPLES))
want = sorted(sum(m) / 2 for m in meds)
if (lo1, hi1) != (want[int(0.025 * pairs.RESAMPLES)], want[int(0.975 * pairs.RESAMPLES) - 1]):
    failures.append(f"block=1 is not the pairs' bootstrap: [{lo1}, {hi1}]")
# A last block shorter than the rest is kept, not dropped.
if pairs.median_ci([1.0] * 7, 1, block=5) != (1.0, 1.0, 1.0):
    failures.append("seven equal ratios in blocks of five: not 1.0 [1.0, 1.0]")


def noisy(sd, seen):
    """A pair whose ratio is 1.05 with noise sd; seen collects the orders."""
    r = random.Random(7)

    def run_pair(i, order):
        if i != len(seen):
            failures.append(f"pair {i} asked for after {len(seen)}")
        seen.append(order)
        return 1.05 + r.gauss(0, sd), 1.0
    return run_pair


seen = []
ratios, est = pairs.run(noisy(0.05, seen), 20, random.Random(1), 15)
if len(ratios) != 20:
    failures.append(f"no precision asked: {len(ratios)} pairs, not 20")
seen = []
ratios, est = pairs.run(noisy(0.05, seen), 20, random.Random(1), 15, precision=0.02, most=400)
shorter = pairs.median_ci(ratios[:-pairs.STEP], 15)
if not (pairs.reach(est) <= 0.02 < pairs.reach(shorter) and len(ratios) > 20 and (len(ratios) - 20) % pairs.STEP == 0):
    failures.append(f"+-0.02 asked: {len(ratios)} pairs reach {pairs.reach(est):.4f}, "
                    f"{pairs.STEP} fewer {pairs.reach(shorter):.4f}")
for k in range(20, len(seen), pairs.STEP):
    step = seen[k:k + pairs.STEP]
    if step.count(("plain", "uarch")) != step.count(("uarch", "plain")):
        failures.append(f"pairs {k}-{k + len(step) - 1}: not each order equally often")
        break
if not 1.03 < est[0] < 1.07:
    failures.append(f"median {est[0]:.3f} of a 1.05 ratio")
seen = []
ratios, est = pairs.run(noisy(0.5, seen), 20, random.Random(1), 15, precision=0.02, most=45)
if len(ratios) != 45:
    failures.append(f"at most 45 asked, where +-0.02 is out of reach: {len(ratios)} pairs")
# One block of a server resampled is always itself: no interval to stop on.
seen = []
ratios, est = pairs.run(noisy(0.0, seen), 5, random.Random(1), 15, block=5, precision=0.02, most=100)
if not pairs.FEWEST * 5 <= len(ratios) < pairs.FEWEST * 5 + pairs.STEP:
    failures.append(f"blocks of 5, equal ratios: stopped after {len(ratios)} pairs, not at the first "
                    f"step past {pairs.FEWEST} blocks")
for f in failures:
    print("FAIL", f)
print(f"{len(failures)} failure(s)")
sys.exit(1 if failures else 0)
