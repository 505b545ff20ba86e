"""pairs.median_ci: a block of pairs that share a condition (a server's
processes) is resampled whole, so that the interval covers how far the
condition moves the ratio; single pairs are resampled as before."""
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
for f in failures:
    print("FAIL", f)
print(f"{len(failures)} failure(s)")
sys.exit(1 if failures else 0)
