#!/usr/bin/env python3
"""uarch-prof --trace and uarch-bench mem --trace on known sequences
(tests/prof/trace_pattern.c, tests/prof/pattern.c):
- the trace holds exactly the calls made (names, sizes, order, count,
  addresses), keep first and keep last, one section per process image
  (fork, exec, threads as the profile counts them);
- the replay runs that sequence (--trace-dump), less a base run's calls
  (--trace-base), or one op's calls of some sizes (--trace-only), one
  buffer into one arena
  slot, fresh mappings into addresses never used before (the slot
  statistics, not timing), and its table has a row;
- memcmp, bcmp, strlen and strcmp are counted with their calls and bytes;
- bad arguments and files: one line, exit status 2.

usage: prof_trace.py UARCH_PROF TRACE_PATTERN PATTERN RECORD_LIB [UARCH_BENCH]"""
import json, os, re, subprocess, sys, tempfile

prof, tpat, pat, lib = sys.argv[1:5]
bench = sys.argv[5] if len(sys.argv) > 5 else ""
env = dict(os.environ, UARCH_RECORD_LIB=os.path.abspath(lib))
failures = []


def check(what, got, want):
    if got != want:
        failures.append(f"{what}: got {got!r}, want {want!r}")


def run(cmd, **kw):
    return subprocess.run(cmd, env=env, capture_output=True, text=True, **kw)


def record(d, name, args, trace="100000", keep=None):
    out = os.path.join(d, name + ".uprof")
    cmd = [prof, "-o", out, "--trace", trace] + (["--trace-keep", keep] if keep else []) + ["--"] + args
    r = run(cmd)
    check(f"{name}: exit status", r.returncode, 0)
    if not re.search(r"recording cost about [0-9.]+ ns a call", r.stderr):
        failures.append(f"{name}: no recording cost on stderr: {r.stderr!r}")
    check(f"{name}: leftover part files", sorted(f for f in os.listdir(d) if f.startswith(name + ".uprof.parts")), [])
    return out, os.path.join(d, name + ".utrace")


def dump(trace):
    r = run([prof, "report", "--dump", trace])
    check(f"dump {trace}: status", r.returncode, 0)
    rows = []
    for line in r.stdout.splitlines():
        if line.startswith("#"):
            continue
        sec, seq, tid, entry, op, size, dst, src, gap = line.split()
        rows.append(dict(sec=int(sec), seq=int(seq), tid=int(tid), entry=entry, op=op, size=int(size),
                         dst=int(dst, 16), src=int(src, 16)))
    return rows


seq_calls = [("memcpy", i % 50 + 1) for i in range(1000)] + [("memset", i % 10 * 8 + 1) for i in range(100)] + \
            [("memmove", 100)] * 10

with tempfile.TemporaryDirectory() as d:
    # The exact sequence, one buffer.
    _, t = record(d, "seq", [tpat, "seq"])
    rows = dump(t)
    check("seq: calls", [(r["entry"], r["size"]) for r in rows], seq_calls)
    check("seq: seq numbers", [r["seq"] for r in rows], list(range(1, 1111)))
    check("seq: one process", {r["sec"] for r in rows}, {0})
    check("seq: one thread", len({r["tid"] for r in rows}), 1)
    if rows:
        dst = rows[0]["dst"]
        check("seq: one destination", {r["dst"] for r in rows}, {dst})
        check("seq: memmove source", {r["src"] for r in rows if r["op"] == "memmove"}, {dst + 16})
        check("seq: memset source", {r["src"] for r in rows if r["op"] == "memset"}, {0})
    rep = run([prof, "report", t])
    check("seq: report status", rep.returncode, 0)
    if "calls of the memcpy family: 1110, recorded 1110 (100.0%), dropped 0" not in rep.stdout:
        failures.append(f"seq: report's counts: {rep.stdout}")
    if "internal copies (stdio, qsort, realloc)" not in rep.stdout:
        failures.append("seq: the report does not say what the trace sees")

    # The budget: the first 100, the last 100.
    _, t = record(d, "first", [tpat, "seq"], trace="100")
    check("keep first: calls", [(r["entry"], r["size"]) for r in dump(t)], seq_calls[:100])
    _, t = record(d, "last", [tpat, "seq"], trace="100", keep="last")
    rows = dump(t)
    check("keep last: calls", [(r["entry"], r["size"]) for r in rows], seq_calls[-100:])
    check("keep last: seq numbers", [r["seq"] for r in rows], list(range(1011, 1111)))
    if "recorded 100 (9.0%), dropped 1010" not in run([prof, "report", t]).stdout:
        failures.append("keep last: report's counts")

    # Processes and threads as the profile has them: pattern run is three
    # processes (two forked children), the first with four threads; pattern
    # exec one image more.
    for mode, procs in (("run", 3), ("exec", 4)):
        p, t = record(d, mode, [pat, mode])
        j = json.loads(run([prof, "report", "--json", p]).stdout)
        rows = dump(t)
        check(f"{mode}: sections", len({r["sec"] for r in rows}), procs)
        check(f"{mode}: records", len(rows), sum(o["calls"] for o in j["ops"].values()))
        threads = {}
        for r in rows:
            threads.setdefault(r["sec"], set()).add(r["tid"])
        check(f"{mode}: threads", sum(len(v) for v in threads.values()), j["threads"])
        sizes = sorted(r["size"] for r in rows if r["entry"] == "memset" and r["size"] in (77, 78))
        check(f"{mode}: the children's calls", sizes, [77] * 7 + [78] * 3)

    # Comparisons, counted in the profile (not in the trace).
    out = os.path.join(d, "cmp.uprof")
    r = run([prof, "-o", out, "--", tpat, "cmp"])
    check("cmp: exit status", r.returncode, 0)
    j = json.loads(run([prof, "report", "--json", out]).stdout)
    check("cmp: counts", j.get("compare"), {"memcmp": {"calls": 3, "bytes": 30}, "bcmp": {"calls": 2, "bytes": 40},
                                            "strlen": {"calls": 4, "bytes": 20}, "strcmp": {"calls": 6, "bytes": 20}})
    txt = run([prof, "report", out]).stdout
    if not re.search(r"^strcmp +6 +20 +3\.3 +40\.0% +18\.2%$", txt, re.M):
        failures.append(f"cmp: text report lacks strcmp's row: {txt}")

    # Replay.
    if not bench:
        print("skipped: the replay checks (uarch-bench not built: no Google Benchmark)")
    else:
        def replay_dump(t):
            r = run([bench, "mem", "--trace", t, "--trace-dump"])
            check(f"replay dump {t}: status", r.returncode, 0)
            lines = r.stdout.splitlines()
            stats = lines[0] if lines else ""
            calls = [(l.split()[0], int(l.split()[1]), int(l.split()[2]), int(l.split()[3]))
                     for l in lines[1:] if not l.startswith("#")]
            return stats, calls
        stats, calls = replay_dump(os.path.join(d, "seq.utrace"))
        check("replay seq: calls", [(op, n) for op, n, _, _ in calls],
              [("memcpy" if e == "memcpy" else e, n) for e, n in seq_calls])
        if "dst 1," not in stats:
            failures.append(f"replay seq: one buffer is not one slot: {stats}")
        check("replay seq: one arena destination", len({dd for _, _, dd, _ in calls}), 1)
        _, t = record(d, "fresh", [tpat, "fresh"])
        stats, calls = replay_dump(t)
        check("replay fresh: calls", len(calls), 300)
        if "dst 300," not in stats or not stats.endswith("calls into fresh dst addresses 300"):
            failures.append(f"replay fresh: fresh regions do not replay into fresh addresses: {stats}")
        # --trace-base: the calls a run without the measured work made come
        # off (the records up to its count), and its calls off the count.
        _, t = record(d, "more", [tpat, "more"])
        for base in ("--trace-base", os.path.join(d, "seq.utrace")), ("--trace-base=" + os.path.join(d, "seq.utrace"),):
            r = run([bench, "mem", "--trace", t, *base, "--trace-dump"])
            check(f"replay more {base[0][:12]}: status", r.returncode, 0)
            check(f"replay more {base[0][:12]}: calls", [tuple(l.split()[:2]) for l in r.stdout.splitlines()
                                                         if not l.startswith("#")], [("memcpy", "4096")] * 100)
        r = run([bench, "mem", "--trace", t, "--trace-base", os.path.join(d, "seq.utrace"),
                 "--benchmark_repetitions=2"])
        check("replay more with its base: status", r.returncode, 0)
        if not re.search(r"^more\.utrace +100 ", r.stdout, re.M) or "the 100 calls they made" not in r.stdout:
            failures.append(f"replay more with its base: not the 100 calls: {r.stdout}")
        # --trace-only: one op, one range of sizes, and the calls made scaled to them.
        seq = os.path.join(d, "seq.utrace")
        for only, want in (("memset:9-9", [("memset", "9")] * 10), ("memmove", [("memmove", "100")] * 10),
                           ("memcpy:49-1000", [("memcpy", str(49 + i % 2)) for i in range(40)])):
            r = run([bench, "mem", "--trace", seq, "--trace-only", only, "--trace-dump"])
            check(f"replay --trace-only {only}", [tuple(l.split()[:2]) for l in r.stdout.splitlines()
                                                   if not l.startswith("#")], want)
        r = run([bench, "mem", "--trace", seq, "--trace-only=memset:9-9", "--benchmark_repetitions=2"])
        if not re.search(r"^seq\.utrace +10 ", r.stdout, re.M) or "the 10 calls they made" not in r.stdout:
            failures.append(f"replay --trace-only memset:9-9: not the 10 calls: {r.stdout}")
        for only in ("memfoo", "memset:5", "memset:9-1", "memset:1-2x", "memset:200-300"):
            r = run([bench, "mem", "--trace", seq, "--trace-only", only])
            check(f"replay --trace-only {only}: status", r.returncode, 2)
            check(f"replay --trace-only {only}: one line", len(r.stderr.splitlines()), 1)
        # A base that took more CPU time than the run (a server's background
        # work): its calls still come off; the program's time is unknown.
        _, busy = record(d, "busy", [tpat, "busy"])
        r = run([bench, "mem", "--trace", t, "--trace-base", busy, "--benchmark_repetitions=2"])
        check("replay with a busier base: status", r.returncode, 0)
        if not re.search(r"^more\.utrace +100 +[0-9.]+ +[0-9.]+ +[0-9.]+ +[0-9.]+ +[0-9.]+ +n/a +[0-9.-]+ +n/a +n/a +n/a *$", r.stdout, re.M):
            failures.append(f"replay with a busier base: not 100 calls with an unknown program time: {r.stdout}")
        r = run([bench, "mem", "--trace", os.path.join(d, "seq.utrace"), "--trace-base", t])
        check("replay with a larger base: status", r.returncode, 2)
        check("replay with a larger base: one line", len(r.stderr.splitlines()), 1)
        r = run([bench, "mem", "--trace", os.path.join(d, "seq.utrace"), "--benchmark_repetitions=2"])
        check("replay seq: status", r.returncode, 0)
        row = re.search(r"^seq\.utrace +1110 +[0-9.]+ +[0-9.]+ +([0-9.]+) +([0-9.]+) +([0-9.]+) +[0-9.-]+ +[0-9.-]+ "
                        r"+([0-9.]+) +([0-9.]+) +([0-9.]+)$", r.stdout, re.M)
        if not row:
            failures.append(f"replay seq: no row: {r.stdout}")
        else:   # the ratio's quartiles over the arenas hold its median; the prediction's interval holds it
            q = [float(x) for x in row.groups()]
            if not q[1] <= q[0] <= q[2]:
                failures.append(f"replay seq: ratio {q[0]} outside its quartiles {q[1]}-{q[2]}")
            if not q[4] <= q[3] <= q[5]:
                failures.append(f"replay seq: end_to_end {q[3]} outside its interval {q[4]}-{q[5]}")
        data = open(os.path.join(d, "seq.utrace"), "rb").read()
        for name, blob in [("truncated", data[:len(data) - 10]), ("not a trace", b"hello"),
                           ("bad header", data[:64] + b"\xff" * 8 + data[72:])]:
            bad = os.path.join(d, "bad.utrace")
            open(bad, "wb").write(blob)
            r = run([bench, "mem", "--trace", bad])
            check(f"replay of a {name} file: status", r.returncode, 2)
            check(f"replay of a {name} file: one line", len(r.stderr.splitlines()), 1)
        for args in (["--trace-dump"], ["--trace", os.path.join(d, "seq.utrace"), "--benchmark_filter=x"],
                     ["--trace", os.path.join(d, "seq.utrace"), "--trace-base"],
                     ["--trace", os.path.join(d, "seq.utrace"), "--trace-base", os.path.join(d, "none.utrace")]):
            r = run([bench, "mem"] + args)
            check(f"uarch-bench mem {args}: status", r.returncode, 2)
            check(f"uarch-bench mem {args}: one line", len(r.stderr.splitlines()), 1)

    for args in (["--trace", "0"], ["--trace", "x"], ["--trace", "-5"], ["--trace", "9", "--trace-keep", "middle"]):
        r = run([prof, "-o", os.path.join(d, "e.uprof")] + args + ["--", "true"])
        check(f"uarch-prof {args}: status", r.returncode, 2)
        check(f"uarch-prof {args}: one line", len(r.stderr.splitlines()), 1)
    for args in (["--dump", out], ["--json", os.path.join(d, "seq.utrace")], [out, os.path.join(d, "seq.utrace")]):
        r = run([prof, "report"] + args)
        check(f"uarch-prof report {args}: status", r.returncode, 2)
        check(f"uarch-prof report {args}: one line", len(r.stderr.splitlines()), 1)

for f in failures:
    print("FAIL", f)
print(f"{len(failures)} failure(s)")
sys.exit(1 if failures else 0)
