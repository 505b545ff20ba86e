#!/usr/bin/env python3
"""The recorder's exact profile for tests/prof/pattern.c, through
`uarch-prof report --json`; exec following; exit status passed through;
bad output path, corrupt and truncated files: one line, exit status 2;
--writers: a process that drops to that user is recorded too."""
import json, os, shutil, subprocess, sys, tempfile

prof, pattern, record_lib = sys.argv[1:4]
env = dict(os.environ, UARCH_RECORD_LIB=os.path.abspath(record_lib))
failures = []


def check(what, got, want):
    if got != want:
        failures.append(f"{what}: got {got!r}, want {want!r}")


def expected(exec_first):
    sizes = {op: {} for op in ("memcpy", "memmove", "memset")}
    dst = {op: [0] * 64 for op in sizes}
    src = {op: [0] * 64 for op in sizes}
    entries = {}

    def call(entry, op, d, s, n, times):
        entries[entry] = entries.get(entry, 0) + times
        key = (n, n) if n <= 4096 else (1 << (n.bit_length() - 1), (2 << (n.bit_length() - 1)) - 1)
        if n > 4096 and key[0] <= 4096:
            key = (4097, key[1])
        sizes[op][key] = sizes[op].get(key, 0) + times
        dst[op][d % 64] += times
        if op != "memset":
            src[op][s % 64] += times

    for k, n in enumerate([0, 1, 7, 64, 4096, 4097, 10000]):
        call("memcpy", "memcpy", n % 64, 3, n, k + 1)
    call("mempcpy", "memcpy", 0, 0, 16, 5)
    call("__memcpy_chk", "memcpy", 8, 8, 8, 2)
    call("memmove", "memmove", 0, 0, 100, 3)
    call("memmove", "memmove", 0, 10, 50, 4)
    call("memmove", "memmove", 10, 0, 50, 5)
    call("memmove", "memmove", 0, 0, 32, 2)
    call("memset", "memset", 5, 0, 33, 6)
    call("bzero", "memset", 0, 0, 1000, 2)
    call("explicit_bzero", "memset", 1, 0, 12, 1)
    call("__memset_chk", "memset", 2, 0, 20, 1)
    call("__explicit_bzero_chk", "memset", 4, 0, 24, 2)
    call("memcpy", "memcpy", 0, 32, 256, 3000)   # three threads
    call("memset", "memset", 16, 0, 77, 7)       # the forked child
    call("memset", "memset", 17, 0, 78, 3)       # the child that ends by _exit
    if exec_first:                                # before the exec, around one that failed
        call("memset", "memset", 3, 0, 9, 11)
    overlap = {"disjoint": 3, "forward": 4, "backward": 5, "same": 2}
    return sizes, dst, src, entries, overlap


def run_and_check(label, args):
    with tempfile.TemporaryDirectory() as d:
        out = os.path.join(d, "p.uprof")
        r = subprocess.run([prof, "-o", out, "--", pattern] + args, env=env, capture_output=True, text=True)
        check(f"{label}: exit status", r.returncode, 0)
        check(f"{label}: stderr", r.stderr, "")
        check(f"{label}: leftover part files", sorted(os.listdir(d)), ["p.uprof"])
        rep = subprocess.run([prof, "report", "--json", out], capture_output=True, text=True)
        check(f"{label}: report status", rep.returncode, 0)
        j = json.loads(rep.stdout)
        exec_first = args == ["exec"]
        sizes, dst, src, entries, overlap = expected(exec_first)
        # One file per process image: the image exec replaced has its own.
        check(f"{label}: processes", j["processes"], 4 if exec_first else 3)
        check(f"{label}: threads", j["threads"], 7 if exec_first else 6)
        for e, n in j["entries"].items():
            check(f"{label}: calls of {e}", n, entries.get(e, 0))
        for op, o in j["ops"].items():
            got = {(lo, hi): c for lo, hi, c in o["sizes"]}
            check(f"{label}: {op} sizes", got, sizes[op])
            check(f"{label}: {op} calls", o["calls"], sum(sizes[op].values()))
            check(f"{label}: {op} dst_align", o["dst_align"], dst[op])
            check(f"{label}: {op} src_align", o["src_align"], src[op])
        check(f"{label}: memmove overlap", j["ops"]["memmove"]["overlap"], overlap)
        check(f"{label}: memcpy bytes", j["ops"]["memcpy"]["bytes"],
              sum(k * n for k, n in enumerate([0, 1, 7, 64, 4096, 4097, 10000], 1)) + 5 * 16 + 2 * 8 + 3000 * 256)
        # The text report and the plot accept the same file.
        txt = subprocess.run([prof, "report", out], capture_output=True, text=True)
        check(f"{label}: text report status", txt.returncode, 0)
        if "memmove" not in txt.stdout or "overlap: disjoint" not in txt.stdout:
            failures.append(f"{label}: text report lacks memmove overlap: {txt.stdout}")
        return open(out, "rb").read()


def one_line_error(label, cmd, **kw):
    r = subprocess.run(cmd, capture_output=True, text=True, env=env, **kw)
    check(f"{label}: exit status", r.returncode, 2)
    lines = r.stderr.splitlines()
    if len(lines) != 1 or not lines[0].startswith("uarch-prof: "):
        failures.append(f"{label}: want one uarch-prof line on stderr, got {r.stderr!r}")
    return r


data = run_and_check("run", ["run"])
run_and_check("exec", ["exec"])

# Past the recorder's 128 per-thread blocks, then a fork: the child's file
# counts its one thread, not the parent's overflow threads.
with tempfile.TemporaryDirectory() as d:
    out = os.path.join(d, "m.uprof")
    r = subprocess.run([prof, "-o", out, "--", pattern, "many"], env=env, capture_output=True, text=True)
    check("many: exit status", r.returncode, 0)
    j = json.loads(subprocess.run([prof, "report", "--json", out], capture_output=True, text=True).stdout)
    check("many: processes", j["processes"], 2)
    check("many: threads", j["threads"], 131)   # the 130 that called, and the child
    check("many: memset calls", j["ops"]["memset"]["calls"], 131)

# A version 1 file (before __explicit_bzero_chk; the committed profiles)
# reads, with that name at 0 calls.
v1 = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "data", "profiles", "gzip.uprof")
check("version 1 file: version", open(v1, "rb").read(12)[8:12], (1).to_bytes(4, "little"))
rep = subprocess.run([prof, "report", "--json", v1], capture_output=True, text=True)
check("version 1 file: report status", rep.returncode, 0)
if rep.returncode == 0:
    j = json.loads(rep.stdout)
    check("version 1 file: __explicit_bzero_chk calls", j["entries"].get("__explicit_bzero_chk"), 0)
    check("version 1 file: memset calls by name", sum(n for e, n in j["entries"].items()
          if e in ("memset", "bzero", "explicit_bzero", "__memset_chk", "__explicit_bzero_chk")),
          j["ops"]["memset"]["calls"])
    if not j["ops"]["memcpy"]["calls"]:
        failures.append("version 1 file: no memcpy calls read")

with tempfile.TemporaryDirectory() as d:
    out = os.path.join(d, "s.uprof")
    r = subprocess.run([prof, "-o", out, "--", pattern, "status"], env=env, capture_output=True)
    check("exit status passed through", r.returncode, 7)
    # Bad output path: refused before the program runs (it would create this file).
    marker = os.path.join(d, "ran")
    one_line_error("unwritable output", [prof, "-o", os.path.join(d, "no/such/dir/x.uprof"), "--",
                                         "sh", "-c", f": > {marker}"])
    check("program not run after a bad output path", os.path.exists(marker), False)
    one_line_error("--writers of no such user", [prof, "-o", os.path.join(d, "w.uprof"), "--writers",
                                                 "no-such-user-uarch", "--", "sh", "-c", f": > {marker}"])
    check("program not run, no file made after --writers of no such user",
          (os.path.exists(marker), os.path.exists(os.path.join(d, "w.uprof"))), (False, False))

    for name, blob in [("truncated", data[: len(data) - 100]), ("corrupt", data[:200] + bytes([data[200] ^ 1]) + data[201:]),
                       ("not a profile", b"hello\n"), ("empty", b"")]:
        p = os.path.join(d, "bad.uprof")
        open(p, "wb").write(blob)
        one_line_error(f"report of a {name} file", [prof, "report", p])
        one_line_error(f"json report of a {name} file", [prof, "report", "--json", p])
    one_line_error("report of a missing file", [prof, "report", os.path.join(d, "missing")])

    # Counts that a checksum vouches for but whose totals overflow 64 bits
    # (memcpy's calls of 1 byte; header 48 bytes, then 12 names' counts).
    def with_ones(n):
        b = bytearray(data)
        b[48 + 96 + 8:48 + 96 + 16] = n.to_bytes(8, "little")
        h = 0xcbf29ce484222325
        for x in b[48:]:
            h = ((h ^ x) * 0x100000001b3) & (2**64 - 1)
        b[24:32] = h.to_bytes(8, "little")
        return bytes(b)
    big, half = os.path.join(d, "big.uprof"), os.path.join(d, "half.uprof")
    open(big, "wb").write(with_ones(2**64 - 1))
    open(half, "wb").write(with_ones(2**63))
    one_line_error("report of counts that overflow", [prof, "report", big])
    r = subprocess.run([prof, "report", "--json", half], capture_output=True, text=True, env=env)
    check("one file of 2^63 calls: report status", r.returncode, 0)
    one_line_error("report of two files whose sum overflows", [prof, "report", half, half])
    one_line_error("no program", [prof, "-o", out])
    # A report that cannot be written whole is an error too, not status 0.
    with open("/dev/full", "w") as full:
        r = subprocess.run([prof, "report", v1], stdout=full, stderr=subprocess.PIPE, text=True, env=env)
    check("report to a full disk: exit status", r.returncode, 2)
    check("report to a full disk: one line", len(r.stderr.splitlines()), 1)

# --writers: a process that drops to that user (as a server's workers do)
# is recorded beside its root parent; without it, only the parent is.
if os.geteuid() == 0 and shutil.which("setpriv"):
    with tempfile.TemporaryDirectory() as d:
        os.chmod(d, 0o755)
        drop = ["setpriv", "--reuid=nobody", "--regid=nogroup", "--clear-groups", pattern, "run"]
        # setpriv (root), then pattern's 3 processes (nobody)
        for label, extra, want in (("without --writers", [], 1), ("with --writers nobody", ["--writers", "nobody"], 4)):
            out = os.path.join(d, label.replace(" ", "_") + ".uprof")
            r = subprocess.run([prof, "-o", out] + extra + ["--", *drop], env=env, capture_output=True, text=True)
            check(f"{label}: exit status", r.returncode, 0)
            j = json.loads(subprocess.run([prof, "report", "--json", out], capture_output=True, text=True).stdout)
            check(f"{label}: processes recorded", j["processes"], want)
        # What the writers plant in the directory (a link to a root-only
        # file, a FIFO) is left out, by name, and read by no one.
        out = os.path.join(d, "planted.uprof")
        plant = 'ln -s /etc/shadow "${UARCH_PROF_OUT}x.uprof" && mkfifo "${UARCH_PROF_OUT}y.utrace" && exec "$0" run'
        r = subprocess.run([prof, "-o", out, "--trace", "100", "--writers", "nobody", "--", *drop[:4], "sh", "-c",
                            plant, pattern], env=env, capture_output=True, text=True, timeout=60)
        check("planted link and FIFO: exit status", r.returncode, 0)
        left = sorted(line.split(": ")[-1] for line in r.stderr.splitlines() if "(left out)" in line)
        check("planted link and FIFO: both left out", left, ["a symbolic link, not followed (left out)", "not a regular file (left out)"])
        # Not root: no directory given away, no file made.
        os.chmod(d, 0o777)
        one_line_error("--writers root, not as root", [*drop[:4], prof, "-o", os.path.join(d, "n.uprof"),
                                                       "--writers", "root", "--", "true"])
        check("--writers root, not as root: no file made", os.path.exists(os.path.join(d, "n.uprof")), False)
else:
    print("skip --writers: needs root and setpriv to drop a process to another user")

for f in failures:
    print("FAIL", f)
print(f"{len(failures)} failure(s)")
sys.exit(1 if failures else 0)
