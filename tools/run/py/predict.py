"""The ratio a replay predicts before anything is measured: a run recorded
by uarch-prof --trace, replayed by uarch-bench mem --trace (glibc's
functions against uarch's, in the recorded order)."""
import csv
import os
import re
import subprocess

import measure


class Predictor:
    """The ratio uarch-bench mem --trace predicts from a run recorded by
    uarch-prof --trace (its end_to_end column), and the share of the
    program's CPU time its mem* calls take with the C library's functions
    (calls made x libc_ns / program_ms). Used only when both tools of this
    build name --trace in their --help."""
    CALLS = 1000000     # calls recorded a process (48 B each)

    def __init__(self, prof, bench, quick):
        self.quick = ["--quick"] if quick else []
        self.prof, self.bench = prof, bench
        self.ok = all(self._has_trace(t) for t in (self.prof, self.bench))

    @staticmethod
    def _has_trace(tool):
        try:
            r = subprocess.run([tool, "--help"], capture_output=True, text=True, timeout=30)
        except (OSError, subprocess.TimeoutExpired):
            return False
        return "--trace" in r.stdout + r.stderr

    def predict(self, w):
        """(predicted ratio, share in mem functions or None)."""
        d = os.path.join(w.dir, "trace")
        os.makedirs(d, exist_ok=True)
        if w.server and w.owner():
            pw = measure.pwd.getpwnam(w.owner())
            os.chown(d, pw.pw_uid, pw.pw_gid)
        w.trace([self.prof, "-o", os.path.join(d, "run.uprof"), "--trace", str(self.CALLS), "--"])
        out = os.path.join(w.dir, "prediction.csv")
        r = subprocess.run([self.bench, "mem", *self.quick, "--trace", os.path.join(d, "run.utrace"), "--csv", out],
                           capture_output=True, text=True, timeout=600)
        if r.returncode:
            raise RuntimeError(f"uarch-bench mem --trace exited {r.returncode}: "
                               f"{(r.stderr.strip().splitlines() or [''])[-1]}")
        with open(out) as f:
            row = next(csv.DictReader(f))
        share = None
        m = re.search(r"the (\d+) calls they made", r.stdout)
        if m and float(row["program_ms"]) > 0:
            share = int(m.group(1)) * float(row["libc_ns"]) / (float(row["program_ms"]) * 1e6)
        return float(row["end_to_end"]), share


# -- statistics ---------------------------------------------------------------
