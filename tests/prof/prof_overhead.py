#!/usr/bin/env python3
"""The recorder's cost per call: tests/prof/overhead.c under
libuarch_preload.so and under libuarch_record.so, interleaved, 7 runs
each. The assertion uses the fastest run of each side (the one a busy
machine disturbed least) and must be <= 3 ns (UARCH_PROF_MAX_NS); the
medians are printed beside it."""
import os, statistics, subprocess, sys, tempfile

bench, preload, record = (os.path.abspath(p) for p in sys.argv[1:4])
limit = float(os.environ.get("UARCH_PROF_MAX_NS", "3"))
plain, rec = [], []
with tempfile.TemporaryDirectory() as d:
    for i in range(7):
        for lib, out in ((preload, plain), (record, rec)):
            env = dict(os.environ, LD_PRELOAD=lib, UARCH_PROF_OUT=d + "/")
            r = subprocess.run([bench, "20000000"], env=env, capture_output=True, text=True, check=True)
            out.append(float(r.stdout))
mp, mr = statistics.median(plain), statistics.median(rec)
print(f"preload: median {mp:.3f} ns/call (runs {', '.join(f'{x:.2f}' for x in plain)})")
print(f"record:  median {mr:.3f} ns/call (runs {', '.join(f'{x:.2f}' for x in rec)})")
added = min(rec) - min(plain)
print(f"recording adds {added:.3f} ns per call, fastest runs (medians: {mr - mp:.3f}; limit {limit} ns)")
sys.exit(0 if added <= limit else 1)
