"""uarch-run --compare and --tune: does uarch help this program, and with
what settings. Runs the program without and with uarch (or with two
settings) in interleaved pairs, the order drawn within each pair, and
reports the median of the per-pair CPU-time ratios with its bootstrap 95%
interval. The measuring is scripts/bench-e2e.sh's (workload.py,
measure.py, pairs.py); this file parses, plans, runs and reports."""
import argparse
import csv
import json
import os
import random
import shutil
import shlex
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import time

import measure
import pairs
import workload
from predict import Predictor

PROG = "uarch-run"


class Usage(Exception):
    """Bad arguments: one line, exit 2."""


# -- parse ----------------------------------------------------------------------

class Parser(argparse.ArgumentParser):
    def error(self, message):
        raise Usage(message)


def parse(argv):
    p = Parser(prog=PROG, add_help=False)
    mode = p.add_mutually_exclusive_group(required=True)
    mode.add_argument("--compare", action="store_true")
    mode.add_argument("--tune", action="store_true")
    p.add_argument("--pairs", type=int, default=None)
    p.add_argument("--precision", type=float, default=None)
    p.add_argument("--max-pairs", type=int, default=None)
    p.add_argument("--tunables", default=None)
    p.add_argument("--against", default=None)
    p.add_argument("--json", action="store_true")
    p.add_argument("--csv", default=None)
    p.add_argument("--predict", action="store_true")
    p.add_argument("--install", action="store_true")
    p.add_argument("--profile", default=None)
    p.add_argument("--client", default=None)
    p.add_argument("--ready", default=None)
    p.add_argument("--port", type=int, default=None)
    p.add_argument("--seed", type=int, default=15)
    p.add_argument("cmd", nargs=argparse.REMAINDER)
    a = p.parse_args(argv)
    if a.cmd and a.cmd[0] == "--":
        a.cmd = a.cmd[1:]
    if not a.cmd:
        raise Usage("no PROGRAM given (--help for usage)")
    if a.pairs is None:
        a.pairs = 20 if a.compare else 10
    if a.pairs < 5:
        raise Usage(f"--pairs {a.pairs}: at least 5 (fewer give no interval worth the name)")
    why, a.max_pairs = pairs.bad_precision(a.precision, a.max_pairs, a.pairs)
    if why:
        raise Usage(why)
    if (a.ready or a.port) and not a.client:
        raise Usage("--ready and --port wait for a server: give its --client")
    if a.client and not (a.ready or a.port):
        raise Usage("--client needs --ready CMD or --port N to know when the server accepts")
    if a.port is not None and not 0 < a.port < 65536:
        raise Usage(f"--port {a.port}: not a port")
    if a.tune and (a.tunables is not None or a.against is not None):
        raise Usage("--tune chooses the tunables itself: no --tunables or --against")
    if a.install and not a.tune:
        raise Usage("--install pins what --tune found: only with --tune")
    if a.profile is not None and not a.install:
        raise Usage("--profile FILE says where --install writes: only with --install")
    if a.against is not None and a.tunables is None:
        raise Usage("--against compares two settings: give the other with --tunables")
    if not shutil.which(a.cmd[0]):
        raise Usage(f"{a.cmd[0]}: command not found")
    return a


# -- what is run ------------------------------------------------------------------

class Command(workload.Client):
    """PROGRAM ARGS, run to its end in the caller's directory."""
    name = "command"

    def __init__(self, ctx, argv):
        super().__init__(ctx)
        self.argv = argv
        self.program = os.path.basename(argv[0])
        self.cwd = os.getcwd()

    def cmd(self):
        return self.argv


class UserServer(workload.Server):
    """PROGRAM ARGS as a server, started afresh for each run in a cgroup of
    its own; measured: its CPU time while the client runs."""
    name = "server"
    trace_runs = 0         # each measured run is a fresh server's first
    # Stopped as by ^C: most servers shut down cleanly on it (nginx,
    # redis-server, postgres, and Python's, which SIGTERM kills before
    # the recorder can write the trace --predict replays).
    stop_signal = signal.SIGINT

    def __init__(self, ctx, argv, client, ready_cmd, port):
        super().__init__(ctx)
        self.argv, self.client_line, self.ready_cmd, self.port = argv, client, ready_cmd, port
        self.program = os.path.basename(argv[0])
        self.cwd = os.getcwd()

    def setup(self):
        os.makedirs(self.dir, exist_ok=True)

    def server_cmd(self, inst):
        return self.argv

    def ready(self, inst):
        if self.ready_cmd:
            return subprocess.run(["sh", "-c", self.ready_cmd], env=self.ctx.plain, stdin=subprocess.DEVNULL,
                                  stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL).returncode == 0
        try:
            with socket.create_connection(("127.0.0.1", self.port), timeout=1):
                return True
        except OSError:
            return False

    def client_cmd(self, inst):
        return ["sh", "-c", self.client_line]

    def run(self, side):
        inst = self.start(side)
        try:
            n = len(inst.group.pids())
            t0 = inst.group.cpu_seconds()
            self.client(inst)
            inst.group.settle(n)
            return inst.group.cpu_seconds() - t0
        finally:
            self.halt(inst)

    def trace(self, prefix, runs=1):
        inst = self.start("plain", prefix=prefix, tag=f"trace-{runs}")
        try:
            for _ in range(runs):
                self.client(inst)
        finally:
            self.halt(inst)


def make(ctx, a):
    if a.client:
        return UserServer(ctx, a.cmd, a.client, a.ready, a.port)
    return Command(ctx, a.cmd)


# -- run --------------------------------------------------------------------------

def progress(text):
    if sys.stderr.isatty():
        sys.stderr.write("\r\033[K" + text)
        sys.stderr.flush()


def compare(w, npairs, seed, label="", precision=None, most=None):
    """Paired runs of w: one warm-up each side, then npairs pairs in drawn
    order (with precision: more, pairs.run). Returns a dict: median ratio
    without/with, interval, times."""
    rng = random.Random(seed)
    for side in ("plain", "uarch"):
        w.run(side)
    plain, uarch, first = [], [], []

    def run_pair(i, order):
        progress(f"{PROG}: {label}pair {i + 1}" + ("" if precision else f"/{npairs}"))
        t = {side: w.run(side) for side in order}
        if min(t.values()) <= 0:
            raise RuntimeError(f"no CPU time measured in pair {i + 1} (a run too short to time?)")
        plain.append(t["plain"])
        uarch.append(t["uarch"])
        first.append("without" if order[0] == "plain" else "with")
        return t["plain"], t["uarch"]
    ratios, (med, lo, hi) = pairs.run(run_pair, npairs, rng, seed, precision=precision, most=most)
    progress("")
    return dict(pairs=len(ratios), median_ratio=med, ci_low=lo, ci_high=hi, without_s=plain, with_s=uarch,
                first=first, median_without_s=statistics.median(plain), median_with_s=statistics.median(uarch))


def verdict(r, names=("uarch", "without it")):
    lo, hi, med = r["ci_low"], r["ci_high"], r["median_ratio"]
    if lo > 1:
        return f"faster with {names[0]} by {(med - 1) * 100:.1f}% (95% interval {(lo - 1) * 100:.1f}% to {(hi - 1) * 100:.1f}%)"
    if hi < 1:
        return f"slower with {names[0]} by {(1 - med) * 100:.1f}% (95% interval {(1 - hi) * 100:.1f}% to {(1 - lo) * 100:.1f}%)"
    return (f"no difference this run can resolve: the 95% interval [{lo:.3f}, {hi:.3f}] is "
            f"{(hi - lo) * 100:.1f}% wide and holds 1")


def cpu_and_libc(tools):
    try:
        j = json.loads(subprocess.run([tools["info"], "--json"], capture_output=True, text=True, timeout=30).stdout)
        cpu = f"{j['brand'].strip()} ({j.get('zen') or j.get('core') or j.get('microarchitecture')})"
    except (OSError, ValueError, KeyError, subprocess.TimeoutExpired):
        cpu = "unknown CPU"
    import platform
    return cpu, "glibc " + platform.libc_ver()[1]


# -- report -----------------------------------------------------------------------

def sides(a):
    if a.against is not None:
        return f"UARCH_TUNABLES={a.tunables!r}", f"UARCH_TUNABLES={a.against!r}"
    return ("uarch" + (f" (UARCH_TUNABLES={a.tunables!r})" if a.tunables else ""), "without uarch")


def report(a, w, r, prediction, cpu, libc):
    what = "the server's CPU time while the client ran" if a.client else "CPU time of the program and its children"
    with_name, without_name = sides(a)
    r = dict(r, program=a.cmd, verdict=verdict(r, (with_name, without_name)), cpu=cpu, libc=libc,
             measured=what, with_side=with_name, without_side=without_name)
    if prediction:
        r["predicted_ratio"], r["mem_share"] = prediction
        share = prediction[1]
        # Were the memcpy family free, the program would gain 1/(1 - share)
        # at most; more than that is drift between the runs, or an effect
        # on the cache that the replay does not see.
        resolved = r["ci_low"] > 1 or r["ci_high"] < 1
        if resolved and share is not None and share < 1 and max(r["median_ratio"], 1 / r["median_ratio"]) > 1 / (1 - share):
            r["verdict"] += (f"; more than the memcpy family's whole share of the CPU ({share * 100:.1f}%) "
                             f"could give: drift between runs, or an effect on the cache; run it again")
    if a.csv:
        with open(a.csv, "w", newline="") as f:
            out = csv.writer(f)
            out.writerow(["program", "pair", "first", "without_s", "with_s", "ratio", "cpu", "libc"])
            for i, (p, u) in enumerate(zip(r["without_s"], r["with_s"])):
                out.writerow([" ".join(a.cmd), i + 1, r["first"][i], "%.6g" % p, "%.6g" % u, "%.4f" % (p / u), cpu, libc])
    if a.json:
        print(json.dumps(r, indent=1))
        return
    print(f"{PROG} --compare: {shlex.join(a.cmd)}")
    print(f"  on {cpu}, {libc}; measured: {what}")
    print(f"  {without_name}: median {r['median_without_s']:.4f} s    {with_name}: median {r['median_with_s']:.4f} s")
    if prediction:
        share = f", {prediction[1] * 100:.1f}% of its CPU in the memcpy family" if prediction[1] is not None else ""
        print(f"  predicted by the replay of a trace: {prediction[0]:.3f}{share}")
    print(f"  ratio without/with: {r['median_ratio']:.3f}   95% interval [{r['ci_low']:.3f}, {r['ci_high']:.3f}]"
          f"   {r['pairs']} pairs   (> 1: faster with)")
    print(f"  verdict: {r['verdict']}")


# -- tune -------------------------------------------------------------------------

def copied_bytes(tools, w):
    """Bytes the program's memcpy and memmove calls moved, by size: a list of
    (smallest, largest, bytes) from a recorded run (uarch-prof), or None."""
    path = os.path.join(w.ctx.work, "tune.uprof")
    try:
        w.trace([tools["prof"], "-o", path, *w.writers(), "--"])
        j = json.loads(subprocess.run([tools["prof"], "report", "--json", path], capture_output=True, text=True,
                                      timeout=120).stdout)
        return [(lo, hi, n * (lo + hi) // 2) for op in ("memcpy", "memmove") for lo, hi, n in j["ops"][op]["sizes"]]
    except (OSError, ValueError, KeyError, RuntimeError, subprocess.SubprocessError):
        return None


def share_in(sizes, lo, hi):
    total = sum(b for _, _, b in sizes) or 1
    return sum(b for a, z, b in sizes if a >= lo and z < hi) / total


def candidates(tools, sizes):
    """A few settings around this CPU's defaults (its rule row, as uarch-info
    reports it): the rep movsb window's start lowered and raised, rep movsb
    off, the copy variant one ISA step down, streaming earlier and later.
    With the program's recorded sizes, a window is tried only where at least
    5% of the bytes it copies fall near it. Returns [(setting, why)]."""
    try:
        j = json.loads(subprocess.run([tools["info"], "--json"], capture_output=True, text=True, timeout=30).stdout)
        th, bound = j["thresholds"], j["impl"]["memcpy"]
    except (OSError, ValueError, KeyError, subprocess.TimeoutExpired) as e:
        raise RuntimeError(f"uarch-info --json gave no thresholds: {e}")
    out = []

    def near(lo, hi, what):
        if sizes is None:
            return "no recorded sizes"
        s = share_in(sizes, lo, hi)
        return f"{s * 100:.0f}% of the bytes copied {what}" if s >= 0.05 else None
    rep, stop = th.get("rep_movsb_threshold"), th.get("rep_movsb_stop") or 1 << 62
    if isinstance(rep, int) and 0 < rep < 1 << 40:
        why = near(rep // 4, stop, "from a quarter of the window's start to its end")
        if why:
            out += [(f"rep_movsb_threshold={max(rep // 4, 1024)}", why), (f"rep_movsb_threshold={rep * 4}", why),
                    ("rep_movsb_threshold=inf", why)]
    if bound == "avx512":
        out.append(("memcpy=avx2", "the copy variant one ISA step down"))
    nt = th.get("nt_threshold")
    if isinstance(nt, int) and 0 < nt < 1 << 40:
        why = near(nt // 4, 1 << 62, "from a quarter of the streaming threshold up")
        if why:
            out += [(f"nt_threshold={nt // 4}", why), (f"nt_threshold={nt * 4}", why)]
    return out


def tune(a, ctx_for, tools):
    rows, best = [], None
    recorder = make(ctx_for(None, None), a)
    recorder.setup()
    sizes = copied_bytes(tools, recorder)
    tried = candidates(tools, sizes)
    why = dict(tried)
    for t, _ in tried:
        ctx = ctx_for(t, "")
        r = compare(make(ctx, a), a.pairs, a.seed, f"{t}: ", a.precision, a.max_pairs)
        rows.append((t, r))
        if r["ci_low"] > 1 and (best is None or r["median_ratio"] > best[1]["median_ratio"]):
            best = (t, r)
    print(f"{PROG} --tune: {shlex.join(a.cmd)}: each setting against this CPU's defaults, {a.pairs} pairs"
          + (f", then until +-{a.precision:g}" if a.precision else ""))
    print(f"  {'setting':<28} {'ratio':>6}  {'95% interval':<16}  tried because")
    for t, r in rows:
        mark = "  <- kept" if best and t == best[0] else ""
        print(f"  {t:<28} {r['median_ratio']:6.3f}  [{r['ci_low']:.3f}, {r['ci_high']:.3f}]  {why[t]}{mark}")
    if sizes is not None and len(tried) < 6:
        print("  (windows whose sizes carry under 5% of the bytes the program copied were not tried)")
    chosen = best[0] if best else ""
    if a.csv:
        cpu, libc = cpu_and_libc(tools)
        with open(a.csv, "w", newline="") as f:
            out = csv.writer(f)
            out.writerow(["program", "setting", "against", "pairs", "median_ratio", "ci_low", "ci_high", "kept",
                          "cpu", "libc"])
            for t, r in rows:
                out.writerow([shlex.join(a.cmd), t, "defaults", r["pairs"], "%.4f" % r["median_ratio"],
                              "%.4f" % r["ci_low"], "%.4f" % r["ci_high"], int(t == chosen), cpu, libc])
    try:
        if a.install and chosen:
            section = os.path.basename(a.cmd[0])
            where = ["--output", a.profile] if a.profile else ["--install"]
            r = subprocess.run([tools["tune"], "--section", section, "--entries", chosen] + where,
                               capture_output=True, text=True)
            sys.stdout.write(r.stdout)
            if r.returncode:
                raise RuntimeError((r.stderr.strip().splitlines() or ["uarch-tune failed"])[-1])
    finally:   # last, and printed even when writing it failed
        print(f"tunables: {chosen}", flush=True)
    return 0


# -- main -------------------------------------------------------------------------

def main(argv):
    lib = os.environ.get("UARCH_RUN_PRELOAD", "")
    tools = {k: os.environ.get("UARCH_RUN_" + k.upper(), "uarch-" + k) for k in ("info", "prof", "bench", "tune")}
    try:
        a = parse(argv)
        if not os.access(lib, os.R_OK):
            raise Usage(f"cannot read the preload library {lib!r}")
    except Usage as e:
        print(f"{PROG}: {e}", file=sys.stderr)
        return 2
    work = tempfile.mkdtemp(prefix="uarch-run-")
    ctxs = []

    def ctx_for(tunables, against):
        ctxs.append(workload.Context(lib, 1, work, tunables=tunables, against=against))
        return ctxs[-1]

    def stop(sig, _frame):
        raise KeyboardInterrupt
    signal.signal(signal.SIGTERM, stop)
    try:
        if a.tune:
            return tune(a, ctx_for, tools)
        ctx = ctx_for(a.tunables, a.against)
        w = make(ctx, a)
        w.setup()
        prediction = replayed = None
        if a.predict:
            p = Predictor(tools["prof"], tools["bench"], quick=True)
            if not p.ok:
                raise RuntimeError("--predict needs uarch-prof and uarch-bench with --trace")
            replayed = p.replay(w)
            # A server's start and stop (the base taken off) may take as
            # much CPU as the traced run: then its time is the measured one.
            if p.known(replayed):
                prediction = p.ratio(replayed, unit=w.unit)
            if not a.json:
                share = (f", {prediction[1] * 100:.1f}% of its CPU in the memcpy family"
                         if prediction and prediction[1] is not None else "")
                print(f"{PROG}: predicted ratio {prediction[0]:.3f}{share}; now measuring" if prediction else
                      f"{PROG}: predicted ratio after the measurement (the traced run's start and stop took as "
                      f"much CPU time as its work); now measuring", flush=True)
        r = compare(w, a.pairs, a.seed, "", a.precision, a.max_pairs)
        if replayed and not prediction:
            prediction = p.ratio(replayed, r["median_with_s"], w.unit)
        report(a, w, r, prediction, *cpu_and_libc(tools))
        return 0
    except measure.Failed as e:
        progress("")
        print(f"{PROG}: a run failed, comparison stopped: {' '.join(e.cmd)}: exit status {e.status}: {e.last}",
              file=sys.stderr)
        return e.status if 0 < e.status < 256 else 1
    except (RuntimeError, OSError) as e:
        progress("")
        print(f"{PROG}: {e}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        progress("")
        print(f"{PROG}: interrupted", file=sys.stderr)
        return 130
    finally:
        for ctx in ctxs:
            for w, inst in list(ctx.live):
                w.halt(inst)
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
