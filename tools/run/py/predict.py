"""The ratio a replay predicts before anything is measured: a run recorded
by uarch-prof --trace, replayed by uarch-bench mem --trace (glibc's
functions against uarch's, in the recorded order)."""
import csv
import os
import re
import shutil
import subprocess


class Predictor:
    """The ratio uarch-bench mem --trace predicts from a run recorded by
    uarch-prof --trace (its end_to_end column), and the share of the
    program's CPU time its mem* calls take with the C library's functions
    (calls made x libc_ns / program_ms). Used only when both tools of this
    build name --trace in their --help."""
    CALLS = 1000000     # calls recorded a process (48 B each)

    def __init__(self, prof, bench, quick, keep=None):
        self.quick = ["--quick"] if quick else []
        self.keep = keep    # a directory: each trace is copied there as NAME.utrace
        if keep:
            os.makedirs(keep, exist_ok=True)
        self.prof, self.bench = prof, bench
        self.ok = all(self._has_trace(t) for t in (self.prof, self.bench))

    @staticmethod
    def _has_trace(tool):
        try:
            r = subprocess.run([tool, "--help"], capture_output=True, text=True, timeout=30)
        except (OSError, subprocess.TimeoutExpired):
            return False
        return "--trace" in r.stdout + r.stderr

    def predict(self, w, with_s=None):
        """(predicted ratio, share in mem functions or None): replay(w)
        set against with_s (ratio())."""
        return self.ratio(self.replay(w), with_s, w.unit)

    def replay(self, w):
        """Records w's run and replays it: the replay's row (a dict) and
        its text."""
        d = os.path.join(w.dir, "trace")
        w.make_dir(d)
        # A server is measured over one client run: it is traced with the
        # client run once more than a base run, keeping the last calls, and
        # the base is taken off (uarch-bench mem --trace-base): the start,
        # load, runs before the measured one (w.trace_runs) and stop.
        keep, base, runs = [], [], 1
        if w.server:
            w.trace([self.prof, "-o", os.path.join(d, "base.uprof"), "--trace", "1", *w.writers(), "--"],
                    runs=w.trace_runs)
            keep, base = ["--trace-keep", "last"], ["--trace-base", os.path.join(d, "base.utrace")]
            runs = w.trace_runs + 1
        w.trace([self.prof, "-o", os.path.join(d, "run.uprof"), "--trace", str(self.CALLS), *keep, *w.writers(), "--"],
                runs=runs)
        if self.keep:
            shutil.copyfile(os.path.join(d, "run.utrace"), os.path.join(self.keep, w.name + ".utrace"))
            if base:
                shutil.copyfile(base[1], os.path.join(self.keep, w.name + ".base.utrace"))
        out = os.path.join(w.dir, "prediction.csv")
        r = subprocess.run([self.bench, "mem", *self.quick, "--trace", os.path.join(d, "run.utrace"), *base,
                            "--csv", out], capture_output=True, text=True, timeout=600)
        if r.returncode:
            raise RuntimeError(f"uarch-bench mem --trace exited {r.returncode}: "
                               f"{(r.stderr.strip().splitlines() or [''])[-1]}")
        with open(out) as f:
            return next(csv.DictReader(f)), r.stdout

    @staticmethod
    def known(replayed):
        """Whether the replayed run's own CPU time is known (its base, a
        server's start and stop, may have taken as much)."""
        return replayed[0]["program_ms"] not in ("", "n/a")

    def ratio(self, replayed, with_s=None, unit="s"):
        """(predicted ratio, share or None) from replay()'s result. with_s:
        the measured CPU time of one run with uarch, where known: the time
        the saving is set against, in place of the traced run's (recording
        a trace into a ring out of the cache slows a busy program by more
        than the cost per call it times: MariaDB's client run took 0.50 s
        of CPU traced and 0.27 s measured on the Zen 5 guest)."""
        row, text = replayed
        share = None
        m = re.search(r"the (\d+) calls they made", text)
        ms = with_s * 1e3 if with_s and unit == "s" else float(row["program_ms"]) if self.known(replayed) else 0
        if not ms > 0:
            raise RuntimeError("the traced run's own CPU time is unknown (its base took as much)")
        if m:
            share = int(m.group(1)) * float(row["libc_ns"]) / (ms * 1e6)
        return (ms + float(row["saving_ms"])) / ms, share


# -- statistics ---------------------------------------------------------------
