#!/usr/bin/env python3
"""End-to-end suite: the CPU time real programs spend without and with
LD_PRELOAD=libuarch_preload.so (see scripts/bench-e2e.sh for its usage).

Each program does a fixed amount of generated work (scripts/e2e/programs.py);
runs come in pairs, one without and one with the preload library, in an
order drawn at random within each pair (seeded, each order equally often).
A pair's ratio is the CPU time without / with (> 1: faster with uarch); each
program gets the median ratio and a bootstrap 95% confidence interval of that
median (the pairs' ratios resampled 2000 times, fixed seed). A server is
started again every 5 pairs, and its interval resamples those blocks of 5.
--precision adds pairs until the interval is as narrow as asked
(tools/run/py/pairs.py); --control preloads an empty library in place of
uarch, which shows how far the machine alone moves a ratio.
"""
import argparse
import csv
import glob
import json
import os
import random
import re
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "tools", "run", "py"))
import programs  # noqa: E402
import pairs  # noqa: E402
from predict import Predictor  # noqa: E402
from workload import Context  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
BY_NAME = {w.name: w for w in programs.ALL}


class Parser(argparse.ArgumentParser):
    def error(self, message):
        print(f"bench-e2e: {message} (--help for usage)", file=sys.stderr)
        sys.exit(2)


def parse_args(argv):
    p = Parser(prog="scripts/bench-e2e.sh", description="CPU time of real programs without / with "
               "LD_PRELOAD=libuarch_preload.so: median ratio of interleaved pairs, bootstrap 95% CI.")
    p.add_argument("build", nargs="?", default=os.path.join(ROOT, "build"), metavar="BUILD_DIR",
                   help="the build with libuarch_preload.so (default: build)")
    p.add_argument("--quick", action="store_true",
                   help=f"only check that it runs: {', '.join(programs.QUICK)}, 5 pairs, scale 0.25")
    p.add_argument("--pairs", type=int, help="pairs per program (default 30)")
    p.add_argument("--programs", help="comma-separated names (--list); default all")
    p.add_argument("--precision", type=float, metavar="P",
                   help="after --pairs, 10 more at a time until the interval is within +-P of the median "
                        "(0.02: +-2%%), or --max-pairs ran")
    p.add_argument("--max-pairs", type=int, metavar="N", help="the most pairs --precision runs (default 150)")
    p.add_argument("--scale", type=float, help="work per run, relative to about 0.4 s (default 1)")
    p.add_argument("--seed", type=int, default=15, help="order of the pairs and the bootstrap (default 15)")
    p.add_argument("--out", metavar="DIR", help="where e2e.csv, e2e-pairs.csv, e2e.png go (default BUILD_DIR/e2e)")
    p.add_argument("--no-install", action="store_true", help="skip programs whose packages are missing")
    p.add_argument("--no-trace", action="store_true", help="leave the predicted column n/a")
    p.add_argument("--control", action="store_true",
                   help="preload an empty library in place of uarch: how far this machine moves a ratio "
                        "by itself (e2e-control.csv, no prediction)")
    p.add_argument("--list", action="store_true", help="print the programs and exit")
    p.add_argument("--record-profiles", metavar="DIR",
                   help="measure nothing: record each program's run with uarch-prof into DIR/NAME.uprof")
    a = p.parse_args(argv)
    if a.pairs is not None and a.pairs < 3:
        p.error("--pairs must be at least 3")
    if a.scale is not None and not 0 < a.scale <= 100:
        p.error("--scale must be in (0, 100]")
    names = a.programs.split(",") if a.programs else (programs.QUICK if a.quick else list(BY_NAME))
    for n in names:
        if n not in BY_NAME:
            p.error(f"unknown program '{n}' (one of {', '.join(BY_NAME)})")
    a.names = names
    a.pairs = a.pairs or (5 if a.quick else 30)
    a.scale = a.scale or (0.25 if a.quick else 1.0)
    why, a.max_pairs = pairs.bad_precision(a.precision, a.max_pairs, a.pairs)
    if why:
        p.error(why)
    return a


# -- installs -----------------------------------------------------------------

def dpkg_installed(pkg):
    r = subprocess.run(["dpkg-query", "-W", "-f=${Status}", pkg], capture_output=True, text=True)
    return r.returncode == 0 and "install ok installed" in r.stdout


def apt_candidate(pkg):
    r = subprocess.run(["apt-cache", "policy", pkg], capture_output=True, text=True)
    m = re.search(r"Candidate: (\S+)", r.stdout)
    return m and m.group(1) != "(none)"


def install(packages):
    """Installs what is missing of packages ("a|b": the first of a, b that
    apt offers, checked at install time, so that names that differ between
    Debian releases resolve here). Services the packages would start at
    install are kept from starting (policy-rc.d): the suite starts its own."""
    if not shutil.which("dpkg-query"):
        return
    missing = [spec.split("|") for spec in dict.fromkeys(packages)
               if not any(dpkg_installed(a) for a in spec.split("|"))]
    if not missing:
        return
    if os.geteuid() != 0:
        print(f"bench-e2e: not root, cannot install {' '.join('|'.join(m) for m in missing)}", file=sys.stderr)
        return
    subprocess.run(["apt-get", "update", "-qq"], capture_output=True)
    want = []
    for alts in missing:
        pick = next((a for a in alts if apt_candidate(a)), None)
        if pick:
            want.append(pick)
        else:
            print(f"bench-e2e: no package {' or '.join(alts)} in apt's lists", file=sys.stderr)
    if not want:
        return
    print(f"bench-e2e: installing {' '.join(want)}", file=sys.stderr)
    policy = "/usr/sbin/policy-rc.d"
    ours = not os.path.exists(policy)
    if ours:
        with open(policy, "w") as f:
            f.write("#!/bin/sh\nexit 101\n")
        os.chmod(policy, 0o755)
    try:
        r = subprocess.run(["apt-get", "install", "-y", "-qq", "--no-install-recommends", *want],
                           env=dict(os.environ, DEBIAN_FRONTEND="noninteractive"),
                           stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
        if r.returncode:
            print(f"bench-e2e: apt-get install failed: {r.stderr.strip().splitlines()[-1:]}", file=sys.stderr)
    finally:
        if ours:
            os.unlink(policy)


# -- context ------------------------------------------------------------------

def cpu_name(build):
    info = os.path.join(build, "tools", "info", "uarch-info")
    try:
        j = json.loads(subprocess.run([info, "--json"], capture_output=True, text=True, timeout=30).stdout)
        core = j.get("zen") or j.get("core") or j.get("microarchitecture")
        if j.get("arch") == "x86_64":
            return f"{j['brand']} ({core}, family {j['family']:#x} model {j['model']:#x})"
        return f"{j['brand'] or j.get('implementer')} ({core}, part {j.get('part')})"
    except (OSError, ValueError, KeyError, subprocess.TimeoutExpired):
        pass
    fields = {}
    with open("/proc/cpuinfo") as f:
        for line in f:
            k, _, v = line.partition(":")
            fields.setdefault(k.strip(), v.strip())
    name = fields.get("model name", "unknown CPU")
    if "cpu family" in fields:
        return f"{name} (family {int(fields['cpu family']):#x} model {int(fields['model']):#x})"
    return name


# -- output -------------------------------------------------------------------

HEAD = f"{'program':<13} {'workload':<42} {'pairs':>5} {'without':>10} {'with':>10} {'ratio':>6}  {'95% CI':<15} {'predicted':>9}"


def fmt_time(t, unit):
    return f"{t * 1e6:.2f} us" if unit == "s/req" else f"{t:.4f} s"


def row_line(r):
    if r["status"] != "ok":
        return f"{r['program']:<13} {r['workload']:<42} {r['status']}"
    pred = f"{r['predicted_ratio']:.3f}" if r["predicted_ratio"] is not None else "n/a"
    return (f"{r['program']:<13} {r['workload'][:42]:<42} {r['pairs']:>5} {fmt_time(r['without'], r['unit']):>10} "
            f"{fmt_time(r['with'], r['unit']):>10} {r['median_ratio']:>6.3f}  "
            f"{'[%.3f, %.3f]' % (r['ci_low'], r['ci_high']):<15} {pred:>9}")


def libc_version():
    """The C library the programs run on, as "glibc 2.41"."""
    try:
        return os.confstr("CS_GNU_LIBC_VERSION") or "unknown"
    except (ValueError, OSError):
        return "unknown"


def write_csv(path, rows, cpu):
    cols = ["cpu", "libc", "program", "workload", "name", "pairs", "median_ratio", "ci_low", "ci_high",
            "predicted_ratio", "share_in_mem_functions", "without_median", "with_median", "unit", "status"]
    with open(path, "w", newline="") as f:
        out = csv.writer(f)
        out.writerow(cols)
        for r in rows:
            def num(k, fmt="%.4f"):
                return fmt % r[k] if r.get(k) is not None else "n/a"
            out.writerow([cpu, libc_version(), r["program"], r["workload"], r["name"], r.get("pairs", 0), num("median_ratio"),
                          num("ci_low"), num("ci_high"), num("predicted_ratio"), num("share", "%.3f"),
                          num("without", "%.6g"), num("with", "%.6g"), r["unit"], r["status"]])


def write_plot(path, rows, cpu, pairs, lib):
    """Median ratio and its interval per program (gnuplot, PNG); why not, or None."""
    rows = [r for r in rows if r["status"] == "ok"]
    if not rows:
        return "no program measured"
    if not shutil.which("gnuplot"):
        return "gnuplot is not on PATH"
    term = "pngcairo" if subprocess.run(["gnuplot", "-e", "set terminal pngcairo"],
                                        capture_output=True).returncode == 0 else "png"
    with tempfile.TemporaryDirectory(prefix="uarch-e2e-plot.") as d:
        data = os.path.join(d, "data")
        with open(data, "w") as f:
            for i, r in enumerate(rows):
                pred = "%.4f" % r["predicted_ratio"] if r["predicted_ratio"] is not None else "?"
                f.write(f'{i} "{r["name"]}" {r["median_ratio"]:.4f} {r["ci_low"]:.4f} {r["ci_high"]:.4f} {pred}\n')
        has_pred = any(r["predicted_ratio"] is not None for r in rows)

        def q(s):
            return "'" + s.replace("'", "''").replace("\n", " ") + "'"
        script = f"""set terminal {term} size {max(700, 80 * len(rows) + 200)},550
set output {q(path + '.tmp')}
set title {q(f'CPU time without / with {lib} preloaded')}."\\n".{q(f'{cpu}: median of {pairs} pairs, 95% CI')} noenhanced
set ylabel 'ratio (> 1: faster with it)'
set datafile missing '?'
set xrange [-0.6:{len(rows) - 0.4}]
set xtics rotate by -35 noenhanced
set grid ytics
set key top left
plot {q(data)} using 1:3:4:5:xticlabels(2) with yerrorbars pt 7 lc rgb '#1f5fa8' title 'measured', \\
     1 with lines dt 2 lc rgb '#555555' notitle{", " + q(data) + " using 1:6 with points pt 6 ps 1.5 lc rgb '#c03020' title 'trace-predicted'" if has_pred else ""}
"""
        r = subprocess.run(["gnuplot"], input=script, capture_output=True, text=True)
        if r.returncode or not os.path.exists(path + ".tmp"):
            return f"gnuplot failed: {(r.stderr.strip().splitlines() or ['no message'])[-1]}"
        os.replace(path + ".tmp", path)
    return None


# -- main ---------------------------------------------------------------------

# A server is started again every BLOCK pairs, and its interval resamples
# whole blocks: a server's processes hold their memory's layout for as long
# as they run, and nine starts of MariaDB, 10 pairs each, ran 1.006-1.034,
# 1.017 [1.005, 1.020] in one and 1.034 [1.028, 1.041] in another (Zen 4
# guest, glibc 2.36; policy-evidence.md#zen4).
BLOCK = 5


def measure_one(w, args, predictor, rng, pair_rows):
    t0 = time.monotonic()
    w.setup()
    plain, uarch = [], []

    def run_pair(i, order):
        if i == 0 or (w.server and i % BLOCK == 0):
            if i:
                w.restart()
            for side in ("plain", "uarch"):    # one run each, not counted: caches, page faults
                w.run(side)
        t = {side: w.run(side) for side in order}
        if min(t.values()) <= 0:
            raise RuntimeError(f"no CPU time measured in pair {i}")
        plain.append(t["plain"])
        uarch.append(t["uarch"])
        pair_rows.append([w.name, i, order[0], "%.6g" % t["plain"], "%.6g" % t["uarch"]])
        return t["plain"], t["uarch"]
    ratios, (med, lo, hi) = pairs.run(run_pair, args.pairs, rng, args.seed, BLOCK if w.server else 1,
                                      args.precision, args.max_pairs)
    w.stop()
    row = dict(status="ok", pairs=len(ratios), median_ratio=med, ci_low=lo, ci_high=hi,
               without=statistics.median(plain), predicted_ratio=None, share=None)
    row["with"] = statistics.median(uarch)
    if predictor:
        try:
            row["predicted_ratio"], row["share"] = predictor.predict(w, row["with"])
        except (OSError, RuntimeError, subprocess.SubprocessError) as e:
            print(f"bench-e2e: {w.name}: no prediction: {e}", file=sys.stderr)
    reach = pairs.reach((med, lo, hi))
    short = f"; +-{reach:.3f}, not +-{args.precision:g}" if args.precision and reach > args.precision else ""
    print(f"bench-e2e: {w.name}: {len(ratios)} pairs in {time.monotonic() - t0:.0f} s{short}", file=sys.stderr)
    return row


def record_profiles(ctx, classes, prof, out):
    """Each program's run (a server: started, loaded, its client run once)
    under uarch-prof, into OUT/NAME.uprof; the programs that cannot run
    here are named and skipped. Exit status 1 if one failed."""
    if not os.access(prof, os.X_OK):
        print(f"bench-e2e: {prof} not built", file=sys.stderr)
        return 2
    os.makedirs(out, exist_ok=True)
    failed = 0
    try:
        for c in classes:
            w = c(ctx)
            why = w.missing()
            if why:
                print(f"{c.name}: skipped: {why}")
                continue
            d = os.path.join(w.dir, "profile")
            try:
                w.setup()
                w.make_dir(d)
                w.trace([prof, "-o", os.path.join(d, "run.uprof"), *w.writers(), "--"])
                shutil.copyfile(os.path.join(d, "run.uprof"), os.path.join(out, c.name + ".uprof"))
                print(f"{c.name}: {os.path.join(out, c.name + '.uprof')}")
            except (OSError, RuntimeError, subprocess.SubprocessError) as e:
                print(f"{c.name}: failed: {e}", file=sys.stderr)
                failed += 1
            finally:
                w.stop()
    finally:
        for w, inst in list(ctx.live):
            w.halt(inst)
        shutil.rmtree(ctx.work, ignore_errors=True)
    return 1 if failed else 0


def preload_library(build):
    """BUILD/libuarch_preload.so, else its versioned file (libuarch_preload.so.N...)."""
    names = ["libuarch_preload.so"] + sorted(glob.glob(os.path.join(glob.escape(build), "libuarch_preload.so.*")),
                                             key=len, reverse=True)
    for n in names:
        p = os.path.join(build, n)
        if os.path.isfile(p):
            return p
    return None


def empty_library(work):
    """An empty shared library in work, built with the C compiler: the
    control. Preloading it moves the programs' memory layout and load time
    as uarch's does, and runs nothing."""
    cc = next((c for c in ("cc", "gcc", "clang") if shutil.which(c)), None)
    if not cc:
        raise RuntimeError("--control builds an empty library: no C compiler (cc, gcc, clang) on PATH")
    lib = os.path.join(work, "libempty_preload.so")
    r = subprocess.run([cc, "-shared", "-fPIC", "-x", "c", "-o", lib, "-"], input="int uarch_empty_control;\n",
                       capture_output=True, text=True)
    if r.returncode:
        raise RuntimeError(f"--control: {cc} failed: {(r.stderr.strip().splitlines() or ['no message'])[-1]}")
    os.chmod(lib, 0o755)
    return lib


def main(argv):
    args = parse_args(argv)
    if args.list:
        for c in programs.ALL:
            print(f"{c.name:<13} {c.program:<13} {c.workload}")
        return 0
    build = os.path.abspath(args.build)
    lib = preload_library(build)
    if not lib:
        print(f"bench-e2e: {build}/libuarch_preload.so not built", file=sys.stderr)
        return 2
    out = os.path.abspath(args.out or os.path.join(build, "e2e"))
    os.makedirs(out, exist_ok=True)
    classes = [BY_NAME[n] for n in args.names]
    if not args.no_install:
        install([p for c in classes for p in c.packages] + ["gnuplot-nox"])

    work = tempfile.mkdtemp(prefix="uarch-e2e.")
    os.chmod(work, 0o755)     # servers that run as their own user read their files here
    if args.control:
        try:
            lib = empty_library(work)
        except RuntimeError as e:
            shutil.rmtree(work, ignore_errors=True)
            print(f"bench-e2e: {e}", file=sys.stderr)
            return 2
    ctx = Context(lib, args.scale, work)
    if args.record_profiles:
        return record_profiles(ctx, classes, os.path.join(build, "tools", "prof", "uarch-prof"),
                               os.path.abspath(args.record_profiles))

    def on_signal(sig, _frame):
        raise KeyboardInterrupt(f"signal {sig}")
    for s in (signal.SIGTERM, signal.SIGHUP):
        signal.signal(s, on_signal)

    predictor = None
    if not args.no_trace and not args.control:
        predictor = Predictor(os.path.join(build, "tools", "prof", "uarch-prof"),
                              os.path.join(build, "tools", "bench", "uarch-bench"), args.quick,
                              keep=os.path.join(out, "traces"))
        predictor = predictor if predictor.ok else None
    cpu = cpu_name(build)
    kind = programs.measure.Group(f"uarch-e2e-{os.getpid()}-probe")
    how = {"v2": "cgroup v2 usage_usec", "v1": "cgroup v1 cpuacct.usage", "proc": "/proc/PID/stat"}[kind.kind]
    kind.remove()
    print(f"bench-e2e on {cpu}, {libc_version()}, {os.cpu_count()} CPUs, load average "
          f"{' '.join(open('/proc/loadavg').read().split()[:3])}")
    why_no_prediction = "uarch-bench mem --trace" if predictor else "n/a (--control)" if args.control else \
        "n/a (--no-trace)" if args.no_trace else "n/a (no --trace in this build)"
    until = f" (then until +-{args.precision:g}, at most {args.max_pairs})" if args.precision else ""
    print(f"{args.pairs} pairs per program{until}, scale {args.scale:g}, seed {args.seed}; CPU time: programs "
          f"the suite runs: rusage user+sys; servers (pinned to CPU {ctx.server_cpu}, clients to CPU "
          f"{ctx.client_cpu}): {how}; predicted: {why_no_prediction}")
    if args.control:
        print("control: an empty library preloaded in place of uarch; a ratio away from 1 is this machine's")
    if os.environ.get("UARCH_TUNABLES"):
        print(f"UARCH_TUNABLES={os.environ['UARCH_TUNABLES']} on the uarch side")
    print(HEAD, flush=True)

    rng = random.Random(args.seed)
    rows, pair_rows, failed = [], [], 0
    started = time.monotonic()
    try:
        for c in classes:
            w = c(ctx)
            base = dict(name=c.name, program=c.program, workload=c.workload, unit=c.unit)
            why = w.missing()
            if why:
                row = dict(base, status=f"skipped: {why}")
            else:
                try:
                    row = dict(base, **measure_one(w, args, predictor, rng, pair_rows))
                except (OSError, RuntimeError, subprocess.SubprocessError) as e:
                    detail = e.stderr.decode(errors="replace").strip().splitlines()[-1:] \
                        if isinstance(e, subprocess.CalledProcessError) and e.stderr else []
                    row = dict(base, status=f"failed: {e}{': ' + detail[0] if detail else ''}")
                    failed += 1
                finally:
                    w.stop()
            rows.append(row)
            print(row_line(row), flush=True)
    finally:
        for w, inst in list(ctx.live):
            w.halt(inst)
        shutil.rmtree(work, ignore_errors=True)

    print(f"ratio = median over the pairs of CPU time without / with (> 1: faster with "
          f"{'the empty library' if args.control else 'uarch'}); 95% CI: "
          f"bootstrap of the median ({pairs.RESAMPLES} resamples)"
          + "".join(f"; {r['program']}: CPU time per request" for r in rows if r["unit"] == "s/req"))
    stem = os.path.join(out, "e2e-control" if args.control else "e2e")
    csv_path, png = stem + ".csv", stem + ".png"
    write_csv(csv_path, rows, cpu)
    with open(stem + "-pairs.csv", "w", newline="") as f:
        csv.writer(f).writerows([["name", "pair", "first", "without", "with"]] + pair_rows)
    counts = sorted({r["pairs"] for r in rows if r["status"] == "ok"}) or [args.pairs]
    why = write_plot(png, rows, cpu, f"{counts[0]}" + (f"-{counts[-1]}" if len(counts) > 1 else ""),
                     "an empty library" if args.control else "libuarch_preload.so")
    print(f"{len(rows)} programs in {time.monotonic() - started:.0f} s; {csv_path}; "
          + (f"no plot: {why}" if why else png))
    return 1 if failed else 0


if __name__ == "__main__":
    try:
        sys.exit(main(sys.argv[1:]))
    except KeyboardInterrupt:
        print("bench-e2e: interrupted", file=sys.stderr)
        sys.exit(130)
