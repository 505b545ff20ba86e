#!/usr/bin/env python3
"""The recorder's cost per call, in instructions: tests/prof/overhead.c
under libuarch_preload.so and under libuarch_record.so, each run by
valgrind's callgrind at two call counts. The difference of the two totals
over the difference of the counts is what one call costs (start-up, the
warm-up loop and the profile written at exit cancel out); the recorder's
figure less the plain one is what recording adds, and it must not exceed
UARCH_PROF_MAX_INSNS. The same in trace mode (UARCH_PROF_TRACE, every
call recorded in order), against UARCH_PROF_MAX_TRACE_INSNS. Instructions, not nanoseconds: the count does not
drift with the machine's load, a timing does (uarch-bench mem --preload
libuarch_record.so measures the time).

usage: prof_overhead.py VALGRIND OVERHEAD PRELOAD_SO RECORD_SO"""
import glob, os, subprocess, sys, tempfile

valgrind, bench, preload, record = sys.argv[1:5]
if not valgrind or not os.access(valgrind, os.X_OK):
    print("prof_overhead: valgrind not found (scripts/deps.sh installs it)")
    sys.exit(1)
bench, preload, record = (os.path.abspath(p) for p in (bench, preload, record))
# 21: the counting path (18) and the test that the library is relocated
# (3: a load, a test, a branch), without which a call from another
# library's ifunc resolver read TLS offsets from an unrelocated GOT.
limit = int(os.environ.get("UARCH_PROF_MAX_INSNS", "21"))
trace_limit = int(os.environ.get("UARCH_PROF_MAX_TRACE_INSNS", "130"))
lo, hi = 100000, 300000


def instructions(lib, calls, d, trace=False):
    """Instructions the whole process executed, and the profiles (traces) it wrote."""
    tag = f"{os.path.basename(lib)}.{calls}{'.trace' if trace else ''}"
    out = os.path.join(d, f"cg.{tag}")
    prof = os.path.join(d, f"prof.{tag}")
    os.mkdir(prof)
    env = dict(os.environ, LD_PRELOAD=lib, UARCH_PROF_OUT=prof + "/")
    env.pop("UARCH_PROF_TRACE", None)
    if trace:
        env.update(UARCH_PROF_TRACE=str(hi + 200000), UARCH_PROF_TRACE_KEEP="first")
    r = subprocess.run([valgrind, "--tool=callgrind", "--callgrind-out-file=" + out, bench, str(calls)],
                       env=env, capture_output=True, text=True)
    if r.returncode != 0:
        print(f"prof_overhead: {lib} {calls}: exit {r.returncode}\n{r.stderr}")
        sys.exit(1)
    for line in open(out):
        if line.startswith("totals:"):
            return int(line.split()[1]), glob.glob(prof + ("/*.utrace" if trace else "/*.uprof"))
    print(f"prof_overhead: no totals line in {out}")
    sys.exit(1)


per_call = {}
with tempfile.TemporaryDirectory() as d:
    for lib in (preload, record):
        (a, pa), (b, pb) = instructions(lib, lo, d), instructions(lib, hi, d)
        per_call[lib] = (b - a) / (hi - lo)
        print(f"{os.path.basename(lib)}: {a} instructions at {lo} calls, {b} at {hi}: "
              f"{per_call[lib]:.2f} per call")
        # The recorder must have been recording, or its figure says nothing.
        if lib == record and not (pa and pb):
            print("prof_overhead: the recorder wrote no profile")
            sys.exit(1)
        if lib == preload and (pa or pb):
            print("prof_overhead: the plain preload library wrote a profile")
            sys.exit(1)
    (a, ta), (b, tb) = instructions(record, lo, d, True), instructions(record, hi, d, True)
    if not (ta and tb):
        print("prof_overhead: the recorder wrote no trace")
        sys.exit(1)
    traced = (b - a) / (hi - lo)
added = per_call[record] - per_call[preload]
trace_added = traced - per_call[preload]
print(f"recording adds {added:.2f} instructions per call (limit {limit})")
print(f"recording a trace adds {trace_added:.2f} instructions per call (limit {trace_limit})")
if per_call[preload] <= 0 or added < 0 or trace_added < added:
    print("prof_overhead: the counts are not plausible")
    sys.exit(1)
sys.exit(0 if round(added, 2) <= limit and round(trace_added, 2) <= trace_limit else 1)
