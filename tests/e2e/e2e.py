#!/usr/bin/env python3
"""End-to-end checks of uarch in its three link modes and in real programs.

Each check is one Meson test (see meson.build): `e2e.py CHECK --key=path ...`.
Exit 0: passed, 1: failed, 77: skipped (the reason is printed, by name).
"""
import argparse
import functools
import hashlib
import json
import os
import random
import re
import shutil
import stat
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
import exe_wrapper  # noqa: E402  (tests/exe_wrapper.py: qemu in cross builds)

SKIP = 77
from ops_table import OPS, impl_names, libc_names, variant_symbol  # noqa: E402  (src/table/*.def, read)
PRELOAD_NAMES = [n for n, _, _ in libc_names()]   # src/table/libc_names.def
PRELOAD_QUERY = ["uarch_preload_impl", "uarch_preload_op", "uarch_preload_binding", "uarch_preload_entries"]
API_NAMES = ["uarch_memcpy", "uarch_memmove", "uarch_memset", "uarch_prefetch_range",
             "uarch_idle_wait", "uarch_idle_wake", "uarch_idle_wait_shared", "uarch_idle_wake_shared", "uarch_impl", "uarch_op", "uarch_smp_mb", "uarch_smp_rmb",
             "uarch_smp_wmb", "uarch_cpu_relax", "uarch_prefetch", "uarch_prefetchw"]

args = None
failures = []


def fail(msg):
    print("FAIL: " + msg)
    failures.append(msg)


def skip(msg):
    print("SKIP: " + msg)
    sys.exit(SKIP)


def base_env(**extra):
    env = {k: v for k, v in os.environ.items()
           if k not in ("UARCH_TUNABLES", "LD_PRELOAD", "LD_BIND_NOW", "LD_DEBUG", "LD_LIBRARY_PATH")}
    env.update({k: v for k, v in extra.items() if v is not None})
    return env


def preload_env(lib=None, **extra):
    return base_env(LD_BIND_NOW="1", LD_PRELOAD=lib or args.preload_lib, **extra)


def run(cmd, env=None, timeout=300, **kw):
    cmd, env = exe_wrapper.wrap(cmd, env if env is not None else base_env())
    r = subprocess.run(cmd, env=env, stdout=subprocess.PIPE,
                       stderr=subprocess.PIPE, timeout=timeout, **kw)
    return r


def show(r, what):
    print(f"--- {what}: exit {r.returncode}")
    out = r.stdout.decode(errors="replace")
    err = r.stderr.decode(errors="replace")
    if out:
        print(out[-3000:].rstrip())
    if err:
        print("stderr: " + err[-3000:].rstrip())


def bindings(stdout):
    """op -> variant from the 'op=variant' lines of impl_print & co."""
    out = {}
    for line in stdout.decode(errors="replace").splitlines():
        if line.startswith("#") or "=" not in line:
            continue
        k, v = line.split("=", 1)
        out[k.strip()] = v.strip()
    return out


def at_secure(stdout):
    m = re.search(r"at_secure=(\d+)", stdout.decode(errors="replace"))
    return int(m.group(1)) if m else None


def three_modes(tunables=None, **extra):
    """Runs impl_print in the three link modes; returns {mode: bindings}."""
    res = {}
    for mode, cmd, env in (("shared", [args.shared], base_env(UARCH_TUNABLES=tunables, **extra)),
                           ("static", [args.static], base_env(UARCH_TUNABLES=tunables, **extra)),
                           ("preload", [args.preload_prog], preload_env(UARCH_TUNABLES=tunables, **extra))):
        r = run(cmd, env)
        show(r, f"{mode} (UARCH_TUNABLES={tunables!r})")
        if r.returncode != 0:
            fail(f"{mode}: {cmd[0]} exited {r.returncode}")
        if r.stderr:
            fail(f"{mode}: the program printed to stderr")
        b = bindings(r.stdout)
        if sorted(b) != sorted(OPS):
            fail(f"{mode}: expected one line per op, got {sorted(b)}")
        res[mode] = b
    return res


def elf_header(path):
    return run(["readelf", "-hlW", path]).stdout.decode()


# ---- the three link modes ----------------------------------------------------

def check_modes():
    h = elf_header(args.shared)
    if not re.search(r"Type:\s+DYN", h) or "INTERP" not in h:
        fail("the shared-mode program is not a PIE")
    h = elf_header(args.static)
    if "INTERP" in h or "DYNAMIC" in h:
        fail("the static-mode program is not statically linked")
    needed = run(["readelf", "-dW", args.shared]).stdout.decode()
    if "libuarch.so.0" not in needed:
        fail("the shared-mode program does not need libuarch.so.0")
    needed = run(["readelf", "-dW", args.preload_prog]).stdout.decode()
    if "libuarch" in needed:
        fail("the preload-mode program links uarch itself")
    res = three_modes()
    if not failures and not (res["shared"] == res["static"] == res["preload"]):
        fail(f"bindings differ between modes: {res}")
    print(f"bindings in all three modes: {res['shared']}")


def check_tunables():
    default = three_modes()
    # baseline is what the issue names; when the CPU's default already is
    # baseline (an SSE2-only CPU) use the portable generic one instead.
    want = "baseline" if default["shared"].get("memcpy") != "baseline" else "generic"
    tuned = three_modes(f"memcpy={want}")
    for mode, b in tuned.items():
        if b.get("memcpy") != want:
            fail(f"{mode}: UARCH_TUNABLES=memcpy={want} gave memcpy={b.get('memcpy')}")
        others = {k: v for k, v in b.items() if k != "memcpy"}
        dflt = {k: v for k, v in default[mode].items() if k != "memcpy"}
        if others != dflt:
            fail(f"{mode}: memcpy={want} changed other ops: {others} vs {dflt}")
    print(f"memcpy: {default['shared'].get('memcpy')} -> {want} in all three modes")
    # The environment the program started with decides, whatever the
    # program does to its copy before its first call (setenv puts its own
    # string into the start-up array, unsetenv shifts the array).
    other = "generic" if want != "generic" else "gpr"
    for edit in (f"memcpy={other}", "-"):
        for mode, b in three_modes(f"memcpy={want}", E2E_EDIT_TUNABLES=edit).items():
            if b.get("memcpy") != want:
                fail(f"{mode}: started with memcpy={want}, edited to {edit!r} before the first call: "
                     f"memcpy={b.get('memcpy')}")
    print(f"memcpy={want} as started, after the program's setenv and unsetenv")


def nosuid(path):
    return bool(os.statvfs(path).f_flag & os.ST_NOSUID)


def check_setuid():
    if os.geteuid() != 0:
        skip("setuid/setgid: creating a set-id helper owned by another user needs root")
    candidates = [os.environ.get("UARCH_BUILD_ROOT", ""), tempfile.gettempdir(), "/var/tmp"]
    base = next((c for c in candidates if c and os.path.isdir(c) and not nosuid(c)), None)
    if base is None:
        skip(f"setuid/setgid: every candidate directory {candidates} is on a nosuid mount")
    nobody = 65534
    tmp = tempfile.mkdtemp(prefix="uarch-setuid-", dir=base)
    try:
        os.chmod(tmp, 0o755)   # the set-id copy runs as nobody and must reach its files
        libs = {"shared": os.path.join(tmp, "libuarch.so.0"),
                "preload": os.path.join(tmp, "libuarch_preload.so"),
                "record": os.path.join(tmp, "libuarch_record.so")}
        shutil.copy(args.lib, libs["shared"])
        shutil.copy(args.preload_lib, libs["preload"])
        shutil.copy(args.record_lib, libs["record"])
        # Where the recorder would write: anyone may create files there, so
        # only AT_SECURE keeps the set-id runs from writing.
        prof_dir = os.path.join(tmp, "prof")
        os.mkdir(prof_dir)
        os.chmod(prof_dir, 0o1777)
        progs = {}
        for name, src in (("static", args.static), ("helper", args.secure_helper)):
            progs[name] = os.path.join(tmp, name)
            shutil.copy(src, progs[name])
        for p in list(libs.values()) + list(progs.values()):
            os.chmod(p, 0o755)
        default = bindings(run([args.shared]).stdout)
        want_tuned = "baseline" if default.get("memcpy") != "baseline" else "generic"
        tun = f"memcpy={want_tuned}"
        cases = [("static", [progs["static"]], progs["static"]),
                 ("shared (dlopen libuarch.so)", [progs["helper"], libs["shared"]], progs["helper"]),
                 ("preload (dlopen libuarch_preload.so)", [progs["helper"], libs["preload"]], progs["helper"]),
                 ("recorder (dlopen libuarch_record.so)", [progs["helper"], libs["record"]], progs["helper"])]
        checked = 0
        for label, cmd, exe in cases:
            for kind, owner, group, mode in (("control", nobody, nobody, 0o755),
                                             ("setuid", nobody, 0, 0o4755),
                                             ("setgid", 0, nobody, 0o2755)):
                os.chown(exe, owner, group)
                os.chmod(exe, mode)   # after chown, which clears the set-id bits
                for f in os.listdir(prof_dir):
                    os.unlink(os.path.join(prof_dir, f))
                r = run(cmd, base_env(UARCH_TUNABLES=tun, UARCH_PROF_OUT=prof_dir + "/p-"))
                show(r, f"{label}, {kind}, UARCH_TUNABLES={tun}")
                written = os.listdir(prof_dir)
                if label.startswith("recorder") and (kind == "control") != bool(written):
                    fail(f"{label} {kind}: UARCH_PROF_OUT {'not followed' if kind == 'control' else 'followed'} "
                         f"(files: {written})")
                b = bindings(r.stdout)
                sec = at_secure(r.stdout)
                if r.returncode != 0:
                    fail(f"{label} {kind}: exit {r.returncode}")
                    continue
                if kind == "control":
                    if sec != 0 or b.get("memcpy") != want_tuned:
                        fail(f"{label} control: expected AT_SECURE=0 and memcpy={want_tuned}, "
                             f"got AT_SECURE={sec} memcpy={b.get('memcpy')}")
                else:
                    if sec != 1:
                        fail(f"{label} {kind}: the process did not get AT_SECURE")
                    elif b != default:
                        fail(f"{label} {kind}: tunables were not ignored: {b} vs default {default}")
                checked += 1
        # File capabilities give AT_SECURE with equal real and effective ids.
        setcap, setpriv = shutil.which("setcap"), shutil.which("setpriv")
        if setcap and setpriv:
            exe = progs["static"]
            os.chown(exe, 0, 0)
            os.chmod(exe, 0o755)
            rc = run([setcap, "cap_net_raw+ep", exe])
            if rc.returncode == 0:
                r = run([setpriv, f"--reuid={nobody}", f"--regid={nobody}", "--clear-groups", exe],
                        base_env(UARCH_TUNABLES=tun))
                show(r, f"static with file capability cap_net_raw+ep, run as uid {nobody}")
                if at_secure(r.stdout) != 1 or bindings(r.stdout) != default:
                    fail("file capabilities: tunables were not ignored under AT_SECURE")
                checked += 1
            else:
                print("note: setcap failed here (" + rc.stderr.decode().strip() + "); file-capability case not run")
        else:
            print("note: setcap/setpriv missing; file-capability case not run")
        print(f"{checked} set-id runs checked; tunables applied only in the control runs")
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


# ---- real programs under LD_PRELOAD -------------------------------------------

def same_with_and_without(label, cmd, **kw):
    a = run(cmd, base_env(), **kw)
    b = run(cmd, preload_env(), **kw)
    print(f"--- {label}: exit {a.returncode} without, {b.returncode} with the preload library; "
          f"{len(a.stdout)} / {len(b.stdout)} bytes of output")
    if a.returncode != 0:
        show(a, label + " without preload")
        fail(f"{label}: fails even without the preload library")
    if (a.returncode, a.stdout, a.stderr) != (b.returncode, b.stdout, b.stderr):
        show(b, label + " with preload")
        fail(f"{label}: output differs under LD_PRELOAD")
    return b


PY_SCRIPT = r"""
import array, hashlib, json, random, struct, zlib
r = random.Random(1234)
data = bytes(r.getrandbits(8) for _ in range(1 << 18))
h = hashlib.sha256()
for n in (0, 1, 15, 16, 17, 63, 64, 255, 256, 4095, 4097, 65536, 200000):
    b = bytearray(data[:n]); b[n//3:n//3] = data[:n//2]; b *= 2
    m = memoryview(b)[1:]; h.update(bytes(m)); h.update(b.replace(b"\x00", b"ab"))
a = array.array("d", (r.random() for _ in range(50000))); a.reverse(); h.update(a.tobytes())
s = struct.pack("<1000Q", *range(1000)); h.update(s); h.update(zlib.compress(data * 4, 9))
j = json.dumps({str(i): [i, str(i) * 10, {"x": i / 7}] for i in range(5000)}, sort_keys=True)
h.update(j.encode()); assert json.loads(j)["4999"][0] == 4999
print(h.hexdigest(), len(j))
"""

NODE_SCRIPT = r"""
const zlib = require('zlib'), crypto = require('crypto');
let seed = 42; const rnd = () => (seed = (seed * 1103515245 + 12345) % 2147483648) & 255;
const src = Buffer.alloc(1 << 20); for (let i = 0; i < src.length; i++) src[i] = rnd();
const parts = []; for (let n = 0; n < 3000; n += 7) parts.push(src.subarray(n, n * 3));
const cat = Buffer.concat(parts); const copy = Buffer.alloc(cat.length); cat.copy(copy);
const filled = Buffer.alloc(123457, 'uarch'); const z = zlib.gzipSync(Buffer.concat([cat, filled]), {level: 9});
const back = zlib.gunzipSync(z); const obj = {}; for (let i = 0; i < 20000; i++) obj['k' + i] = [i, 'v'.repeat(i % 40)];
const js = JSON.stringify(obj); const h = crypto.createHash('sha256');
h.update(copy); h.update(z); h.update(back); h.update(js); h.update(Buffer.from(JSON.parse(js).k19999[1]));
console.log(h.digest('hex'), cat.length, z.length, js.length);
"""


def check_preload_ls():
    same_with_and_without("ls -laRn /usr/include", ["/bin/ls", "-laRn", "--time-style=full-iso", "/usr/include"])


def check_preload_python():
    py = "/usr/bin/python3"
    if not os.path.exists(py):
        skip("python3: /usr/bin/python3 is not installed")
    r = same_with_and_without("python3 bytes/array/struct/zlib/json script", [py, "-c", PY_SCRIPT])
    print(r.stdout.decode().strip())


def check_preload_node():
    node = shutil.which("node") or shutil.which("nodejs")
    if not node:
        skip("node: no node or nodejs on PATH (Debian package nodejs)")
    r = same_with_and_without("node Buffer/zlib/JSON script", [node, "-e", NODE_SCRIPT])
    print(r.stdout.decode().strip())


def git_session(git, work, env):
    """A deterministic git session; returns everything it printed."""
    env = dict(env, GIT_AUTHOR_NAME="A", GIT_AUTHOR_EMAIL="a@example.org", GIT_COMMITTER_NAME="C",
               GIT_COMMITTER_EMAIL="c@example.org", GIT_AUTHOR_DATE="2024-01-01T00:00:00Z",
               GIT_COMMITTER_DATE="2024-01-01T00:00:00Z", GIT_CONFIG_NOSYSTEM="1", HOME=work,
               GIT_CONFIG_GLOBAL="/dev/null")
    repo = os.path.join(work, "repo")
    os.makedirs(repo)
    out = []

    def g(*a, **kw):
        r = run([git, "-C", repo] + list(a), env, **kw)
        out.append((a, r.returncode, r.stdout, r.stderr))
        if r.returncode != 0:
            show(r, "git " + " ".join(a))
        return r
    g("init", "-q", "-b", "main")
    rnd = random.Random(7)
    alphabet = bytes((b"abcdefgh\n" * 29)[:256])
    for c in range(6):
        for f in range(25):
            n = rnd.choice([0, 1, 100, 4096, 30000, 200000])
            with open(os.path.join(repo, f"f{f}.txt"), "wb") as fh:
                fh.write(rnd.randbytes(n).translate(alphabet))
        g("add", "-A")
        g("commit", "-q", "-m", f"commit {c}")
        if c == 2:
            g("checkout", "-q", "-b", "side")
    g("checkout", "-q", "main")
    g("merge", "-q", "--no-edit", "-s", "ours", "side")
    g("gc", "-q")
    g("fsck", "--full", "--strict")
    g("log", "--stat", "--format=%H %s")
    g("diff", "HEAD~3", "HEAD", "--stat")
    a = g("archive", "--format=tar", "HEAD")
    out[-1] = (out[-1][0], a.returncode, hashlib.sha256(a.stdout).hexdigest().encode(), a.stderr)
    g("cat-file", "-p", "HEAD")
    return out


def check_preload_git():
    git = shutil.which("git")
    if not git:
        skip("git: not installed (Debian package git)")
    with tempfile.TemporaryDirectory(prefix="uarch-git-") as t:
        os.makedirs(os.path.join(t, "a"))
        os.makedirs(os.path.join(t, "b"))
        plain = git_session(git, os.path.join(t, "a"), base_env())
        pre = git_session(git, os.path.join(t, "b"), preload_env())
    print(f"{len(plain)} git commands; last: {plain[-1][2][:200].decode(errors='replace')}")
    for x, y in zip(plain, pre):
        if x[1] != 0:
            fail(f"git {' '.join(x[0])} failed without the preload library")
        if x[1:] != y[1:]:
            fail(f"git {' '.join(x[0])}: output differs under LD_PRELOAD")


def check_preload_sqlite():
    sq = shutil.which("sqlite3")
    if not sq:
        skip("sqlite3: not installed (Debian package sqlite3)")
    script = """
CREATE TABLE t(id INTEGER PRIMARY KEY, s TEXT, b BLOB);
WITH RECURSIVE c(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM c WHERE i < 20000)
INSERT INTO t SELECT i, printf('%.*c', i % 300, 'x') || i, zeroblob(i % 700) FROM c;
UPDATE t SET b = CAST(s || s AS BLOB) WHERE id % 3 = 0;
CREATE INDEX ts ON t(s);
DELETE FROM t WHERE id % 7 = 0;
VACUUM;
SELECT count(*), sum(length(s)), sum(length(b)), max(s) FROM t;
SELECT id, substr(s, 1, 20), hex(substr(b, 1, 8)) FROM t ORDER BY s LIMIT 20 OFFSET 5000;
.dump
"""
    with tempfile.TemporaryDirectory(prefix="uarch-sqlite-") as t:
        outs = []
        for name, env in (("plain", base_env()), ("preload", preload_env())):
            db = os.path.join(t, name + ".db")
            r = run([sq, db], env, input=script.encode())
            with open(db, "rb") as fh:
                outs.append((r.returncode, r.stdout, r.stderr, hashlib.sha256(fh.read()).hexdigest()))
        print(f"sqlite3: exit {outs[0][0]}, {len(outs[0][1])} bytes of output, db sha256 {outs[0][3]}")
        if outs[0][0] != 0 or outs[0][2]:
            fail("sqlite3 failed without the preload library: " + outs[0][2].decode())
        if outs[0] != outs[1]:
            fail("sqlite3: output or database file differs under LD_PRELOAD")


def check_preload_compress():
    rnd = random.Random(99)
    words = [bytes(rnd.choice(b"etaoinshrdlu") for _ in range(rnd.randint(1, 12))) for _ in range(3000)]
    text = b" ".join(rnd.choice(words) for _ in range(100000))
    data = text + rnd.randbytes(1 << 18) + bytes(1 << 18) + text[:299983]
    with tempfile.TemporaryDirectory(prefix="uarch-compress-") as t:
        src = os.path.join(t, "data")
        with open(src, "wb") as fh:
            fh.write(data)
        tools = [("gzip", ["-9", "-c"], ["-d", "-c"]), ("xz", ["-1", "-T1", "-c"], ["-d", "-c"]),
                 ("zstd", ["-12", "-q", "-c"], ["-d", "-q", "-c"])]
        ran = 0
        for tool, comp, decomp in tools:
            exe = shutil.which(tool)
            if not exe:
                fail(f"{tool}: not installed")
                continue
            a = run([exe] + comp + [src])
            b = run([exe] + comp + [src], preload_env())
            if a.returncode or b.returncode:
                fail(f"{tool}: compression failed ({a.returncode}, {b.returncode})")
                continue
            if a.stdout != b.stdout:
                fail(f"{tool}: compressed output differs under LD_PRELOAD")
            packed = os.path.join(t, "packed." + tool)
            with open(packed, "wb") as fh:
                fh.write(b.stdout)
            d = run([exe] + decomp + [packed], preload_env())
            if d.returncode or d.stdout != data:
                fail(f"{tool}: round trip under LD_PRELOAD does not give the input back")
            print(f"{tool}: {len(data)} -> {len(a.stdout)} bytes, identical with and without preload, "
                  f"round trip exact")
            ran += 1
        print(f"{ran} of {len(tools)} compressors checked")


def check_cpython_tests():
    py = "/usr/bin/python3"
    tests = ["test_bytes", "test_memoryview", "test_struct", "test_array", "test_zlib", "test_json"]
    probe = run([py, "-c", "import test.support, test.test_bytes"]) if os.path.exists(py) else None
    if probe is None or probe.returncode != 0:
        skip("CPython tests: /usr/bin/python3 lacks the test package (Debian libpython3.X-testsuite)")
    with tempfile.TemporaryDirectory(prefix="uarch-cpython-") as t:
        r = run([py, "-m", "test", "-j1", "--timeout=300"] + tests, preload_env(HOME=t), timeout=900, cwd=t)
    text = r.stdout.decode(errors="replace")
    print(text[-2500:])
    if r.returncode != 0 or "SUCCESS" not in text:
        print(r.stderr.decode(errors="replace")[-2000:])
        fail("CPython's tests failed under LD_BIND_NOW=1 LD_PRELOAD=libuarch_preload.so")


def check_ld_debug():
    binding = re.compile(r"binding file (\S+) \[0\] to (\S+) \[0\]: normal symbol `([\w]+)'")
    cases = [(["/bin/ls", "-la", "/"], ["memcpy", "memset"]),
             ([args.fortify, "memcpy", "8"], ["__memcpy_chk", "__memset_chk"]),
             ([args.names], ["mempcpy", "__mempcpy", "bzero", "explicit_bzero", "__memmove_chk",
                             "__mempcpy_chk"])]
    if exe_wrapper.foreign(args.names):   # this machine's ls cannot load the cross build's library
        cases = [c for c in cases if exe_wrapper.foreign(c[0][0])]
    for cmd, syms in cases:
        r = run(cmd, preload_env(LD_DEBUG="bindings"))
        seen = {}
        for m in binding.finditer(r.stderr.decode(errors="replace")):
            if os.path.realpath(m.group(1)) == os.path.realpath(cmd[0]):
                seen[m.group(3)] = m.group(2)
        for s in syms:
            to = seen.get(s)
            ok = to is not None and os.path.basename(to).startswith("libuarch_preload.so")
            print(f"{os.path.basename(cmd[0])}: {s} bound to {to}")
            if not ok:
                fail(f"{cmd[0]}: {s} was not bound to libuarch_preload.so")


def check_fortify():
    h = run([exe_wrapper.tool("objdump", args.fortify), "-d", args.fortify]).stdout.decode()
    for f in (n for n in PRELOAD_NAMES if n.endswith("_chk")):
        if f"<{f}@plt>" not in h:
            fail(f"the fortified program does not call {f}: the test would prove nothing")
    for op in ("memcpy", "memmove", "memset", "mempcpy", "explicit_bzero"):
        for n, overflow in ((0, False), (16, False), (17, True), (4000, True)):
            for label, env in (("preload", preload_env()), ("plain", base_env())):
                r = run([args.fortify, op, str(n)], env)
                err = r.stderr.decode(errors="replace")
                if overflow:
                    ok = r.returncode == -6 and "*** buffer overflow detected ***" in err and not r.stdout
                else:
                    ok = r.returncode == 0 and f"{op} {n} ok" in r.stdout.decode() and not err
                print(f"{label}: fortify {op} {n}: exit {r.returncode} {'(SIGABRT) ' if r.returncode == -6 else ''}"
                      f"{err.strip() or r.stdout.decode().strip()} -> {'ok' if ok else 'WRONG'}")
                if not ok:
                    fail(f"{label}: {op} with n={n} into a 16-byte array")


def check_preload_names():
    r = run([args.names], preload_env(E2E_EXPECT_OBJECT="libuarch_preload.so"))
    show(r, "every preload name under LD_PRELOAD")
    if r.returncode != 0 or b"12 of 12 names checked, all ok" not in r.stdout:
        fail("a preload name is missing, misbound or wrong")
    aborts = r.stderr.decode().count("*** buffer overflow detected ***")
    if aborts != 5:
        fail(f"expected 5 fortify aborts from the _chk names, saw {aborts}")


# ---- how the preload entries are bound ------------------------------------------

def entry_lines(stdout):
    """{name: {impl, addr, own, offset, bytes}}, {name: {bytes, target, offset}}
    for the entries, and the other key=value lines."""
    names, entries, rest = {}, {}, {}
    for line in stdout.decode(errors="replace").splitlines():
        parts = line.split()
        if parts and parts[0] in ("memcpy", "memmove", "memset"):
            names[parts[0]] = dict(p.split("=", 1) for p in parts[1:])
        elif len(parts) > 1 and parts[0] == "entry":
            entries[parts[1]] = dict(p.split("=", 1) for p in parts[2:])
        elif "=" in line:
            k, v = line.split("=", 1)
            rest[k] = v
    return names, entries, rest


# ELF e_machine -> the architecture's name in the variants' symbols.
ARCH_NAMES = {62: "x86_64", 183: "aarch64"}


def lib_arch():
    return ARCH_NAMES.get(exe_wrapper.machine(args.preload_lib))


def disassemble(hexbytes, vma):
    """objdump's reading of an entry's first bytes, placed at its address
    ([] where no objdump reads the library's architecture)."""
    arch = lib_arch()
    objdump = exe_wrapper.tool("objdump", args.preload_lib)
    with tempfile.NamedTemporaryFile(suffix=".bin") as f:
        f.write(bytes.fromhex(hexbytes))
        f.flush()
        try:
            r = run([objdump, "-D", "-b", "binary", "-mi386:x86-64" if arch == "x86_64" else "-maarch64",
                     f"--adjust-vma={vma}", f.name])
        except OSError:
            return []
    return [ln.strip() for ln in r.stdout.decode().splitlines() if re.match(r"\s*[0-9a-f]+:\t", ln)]


def pointer_entry(hexbytes):
    """True when hexbytes start an entry as linked, which adds its slot's
    offset to the slot's address and jumps there, after its landing pad:
    x86-64 `endbr64; lea off(%rip), %r11; add (%r11), %r11; jmp *%r11`
    (f3 0f 1e fa 4c 8d 1d rel32 4d 03 1b 41 ff e3); arm64 `bti c`,
    `adrp x16, off`, `add x16, x16, #lo12`, `ldr x17, [x16]` (as many of
    those words as given)."""
    b = bytes.fromhex(hexbytes)
    if lib_arch() == "x86_64":
        want = b"\xf3\x0f\x1e\xfa\x4c\x8d\x1d"
        tail = b"\x4d\x03\x1b\x41\xff\xe3"
        if len(b) < len(want):
            return want.startswith(b)
        return b[:7] == want and (len(b) < 11 + len(tail) or b[11:11 + len(tail)] == tail)
    masks = [(0xffffffff, 0xd503245f), (0x9f00001f, 0x90000010), (0xffc003ff, 0x91000210), (0xffffffff, 0xf9400211)]
    words = [int.from_bytes(b[i:i + 4], "little") for i in range(0, min(len(b), 16) - 3, 4)]
    return bool(words) and all(w & m == v for w, (m, v) in zip(words, masks))


@functools.lru_cache(maxsize=None)
def local_symbols(lib):
    """offset -> names, from the library's full symbol table (read once)."""
    out = {}
    for line in run([exe_wrapper.tool("nm", lib), lib]).stdout.decode().splitlines():
        parts = line.split()
        if len(parts) == 3:
            out.setdefault(int(parts[0], 16), []).append(parts[2])
    return out


@functools.lru_cache(maxsize=None)
def sized_symbols(lib):
    """name -> (offset, size), for the symbols of lib's full table that
    have a size (read once)."""
    out = {}
    for line in run([exe_wrapper.tool("nm", lib), "-S", lib]).stdout.decode().splitlines():
        parts = line.split()
        if len(parts) == 4:
            out[parts[3]] = (int(parts[0], 16), int(parts[1], 16))
    return out


def entry_page(lib=None):
    """The offset of the preload library's entry page, in hex (None, and a
    failure, where its symbol table has none)."""
    lib = lib or args.preload_lib
    page = [o for o, n in local_symbols(lib).items() if "uarch_preload_entry_page" in n]
    if len(page) != 1:
        fail(f"no uarch_preload_entry_page in {lib}'s symbol table")
        return None
    return f"{page[0]:x}"


def run_entry(label, prefix=(), lib=None):
    page = entry_page(lib)
    if page is None:
        return {}, {}, {}
    r = run(list(prefix) + [args.entry, page], preload_env(lib))
    show(r, label)
    if r.returncode != 0 or b"all ok" not in r.stdout:
        fail(f"{label}: a name or an entry gave a wrong result (exit {r.returncode})")
    if r.stderr:
        fail(f"{label}: the program printed to stderr")
    names, entries, rest = entry_lines(r.stdout)
    for what, got in (("names", names), ("entries", entries)):
        if sorted(got) != ["memcpy", "memmove", "memset"]:
            fail(f"{label}: expected memcpy, memmove and memset {what}, got {sorted(got)}")
    if rest.get("wx_mappings") != "0":
        fail(f"{label}: {rest.get('wx_mappings')} mappings are writable and executable")
    # An emulator (qemu-user) may keep a page of its own, present from the
    # start; natively there is none.
    start = "0" if not exe_wrapper.foreign(args.entry) else rest.get("anon_exec_at_start")
    if rest.get("anon_exec_mappings") != start:
        fail(f"{label}: after copies of 2 and 64 MiB, {rest.get('anon_exec_mappings')} executable mappings "
             f"are backed by no file, {rest.get('anon_exec_at_start')} before the copies (code written at run time)")
    return names, entries, rest


def variant_symbols(name, impl):
    """The function the table names for the variant uarch_impl() calls impl
    (a set: empty where the table has none)."""
    cxx = [k for k, v in impl_names().items() if v == impl]
    return {variant_symbol(name, c, lib_arch()) for c in cxx} - {None}


def check_entries_unpatched(label, entries):
    """However large the copies, each entry is still its landing pad and a
    jump through its pointer: no code is rewritten at run time."""
    for name, e in entries.items():
        insns = disassemble(e["bytes"], 0)
        print(f"{label}: entry {name}: " + " | ".join(insns[:3]))
        if not pointer_entry(e["bytes"]) or "target" in e:
            fail(f"{label}: entry {name} is not its landing pad and a jump through its pointer: {e['bytes']}")


def check_preload_entry():
    """Under LD_PRELOAD the dynamic symbols memcpy/memmove/memset name the
    variants from load on: the program's own GOT and dlsym hold the variant
    that uarch_impl names, whose code is what the library's symbol table
    says is there. The entries that objects bound before the library call
    jump through pointers, before and after copies of 256 KiB to 64 MiB,
    and no executable mapping without a file appears."""
    if not args.entry:
        skip("preload-entry: no preload_entry program in this build")
    early = "pointer"
    names, entries, rest = run_entry("preload binding")
    start = rest.get("binding_at_start", "")
    if start.split()[0:1] != ["symbols"]:
        fail(f"before main: {start!r}, expected 'symbols' (bound at load)")
    first = re.search(r"first_bytes=([0-9a-f]+)", start)
    if f"entries_at_start={early}" not in start or not first or not pointer_entry(first.group(1)):
        fail(f"before any large copy the entries are {start!r}, expected {early}, jumping through the pointer")
    if rest.get("entries_after_64k") != early:
        fail(f"after a 64 KiB copy: {rest.get('entries_after_64k')!r}, expected {early!r} "
             "(copies below 256 KiB ask for no cache size)")
    late = "pointer"
    if rest.get("binding") != "symbols" or rest.get("entries") != late:
        fail(f"after a large copy: binding {rest.get('binding')!r}, entries {rest.get('entries')!r}, "
             f"expected symbols and {late}")
    syms = local_symbols(args.preload_lib)
    lib_code = open(args.preload_lib, "rb").read()
    # Where the file holds the executable segment's bytes.
    text = [ln for ln in run(["readelf", "-lW", args.preload_lib]).stdout.decode().splitlines()
            if ln.split()[:1] == ["LOAD"] and "E" in ln.split()[-2]]
    f_off, vaddr = (int(text[0].split()[1], 16), int(text[0].split()[2], 16)) if text else (0, 0)
    for name, e in names.items():
        if e["own"] != e["addr"]:
            fail(f"{name}: the program's own address {e['own']} differs from dlsym's {e['addr']}")
        off = int(e.get("offset", "-1"), 16)
        at = syms.get(off, [])
        insns = disassemble(e["bytes"], off)
        print(f"{name} ({e['impl']}) at offset {off:#x} {at}: " + " | ".join(insns[:3]))
        if not variant_symbols(name, e["impl"]) & set(at):
            fail(f"{name}: the symbol names {at}, expected {variant_symbols(name, e['impl'])}")
        # The bytes the call reaches are the library file's own at that
        # offset.
        file_bytes = lib_code[off - vaddr + f_off:off - vaddr + f_off + 16].hex()
        if file_bytes != e["bytes"]:
            fail(f"{name}: the bytes at the symbol ({e['bytes']}) are not the variant's ({file_bytes})")
    check_entries_unpatched("preload binding", entries)


def dynsym_in_relro(lib):
    """Whether lib's .dynsym lies inside its PT_GNU_RELRO range."""
    sections = run(["readelf", "-SW", lib]).stdout.decode()
    m = re.search(r"\.dynsym\s+DYNSYM\s+([0-9a-f]+)\s+[0-9a-f]+\s+([0-9a-f]+)", sections)
    relro = re.search(r"GNU_RELRO\s+0x[0-9a-f]+\s+(0x[0-9a-f]+)\s+0x[0-9a-f]+\s+0x[0-9a-f]+\s+(0x[0-9a-f]+)",
                      run(["readelf", "-lW", lib]).stdout.decode())
    if not m or not relro:
        return False
    at, size, lo = int(m.group(1), 16), int(m.group(2), 16), int(relro.group(1), 16)
    return lo <= at and at + size <= lo + int(relro.group(2), 16)


def check_fallback_names(label, names, plain, symbols):
    """Each name reached the variant of the unrefused run: its symbol
    (symbols) or the entry's jump through its pointer (not symbols)."""
    for name, e in names.items():
        if e["impl"] != plain.get(name, {}).get("impl"):
            fail(f"{label}: {name} bound to {e['impl']}, {plain.get(name, {}).get('impl')} with nothing refused")
        if symbols and e["offset"] != plain.get(name, {}).get("offset"):
            fail(f"{label}: {name} reached offset {e['offset']}, the variant is at {plain.get(name, {}).get('offset')}")
        if not symbols and (e["addr"] != e["own"] or not pointer_entry(e["bytes"])):
            fail(f"{label}: {name} reached {e['bytes'][:24]}, expected the entry's jump through its pointer")


def check_preload_fallback():
    """Where the system refuses what each binding needs, every preload name
    still binds and works; uarch_preload_binding() says how.

    The library's .dynsym lies in RELRO, which ld.so leaves writable until
    it has relocated the library, so the symbol binding makes no system
    call: with every mprotect that asks for PROT_WRITE refused the symbols
    are bound all the same, and with executable anonymous memory refused
    too only the entries keep their pointers. The copy linked without that
    move (.dynsym on a read-only page, the layout a linker without INSERT
    gives) makes the page writable for three stores: with that refused its
    symbols keep the entries. The entries are never rewritten, so a filter
    that kills the process on an mprotect asking for PROT_EXEC, as
    OpenSSH's pre-authentication sandbox does, leaves a program that copies
    64 MiB alive, its names bound."""
    if not args.entry or not args.deny_execmem or not args.preload_lib_mprotect:
        skip("preload-fallback: no preload_entry, deny_execmem or mprotect copy of the library in this build")
    probe = run([args.deny_execmem, "/bin/true"])
    if probe.returncode == SKIP:
        skip("preload-fallback: no seccomp filters here: " + probe.stderr.decode().strip())
    ro = args.preload_lib_mprotect
    # A linker that cannot INSERT (gold, lld) leaves .dynsym where it was:
    # the build says whether its linker took the script.
    relro = args.dynsym_relro != "no"
    if dynsym_in_relro(args.preload_lib) != relro:
        fail(f"{args.preload_lib}: .dynsym {'is not' if relro else 'is'} inside PT_GNU_RELRO, "
             f"but the build {'linked' if relro else 'could not link'} it there")
    if dynsym_in_relro(ro):
        fail(f"{ro}: .dynsym is inside PT_GNU_RELRO: the copy tests no mprotect")
    for lib, what in ((args.preload_lib, "the library"), (ro, "the mprotect copy")):
        plain, _, rest = run_entry(f"{what}, nothing refused", lib=lib)
        if rest.get("binding") != "symbols":
            fail(f"{what}, nothing refused: uarch_preload_binding() says {rest.get('binding')!r}, expected 'symbols'")
        bound = dynsym_in_relro(lib)   # the symbols, with writes refused
        flag_sets = [["-w"], ["-w", "-x"]] + ([["-k", "-x"]] if lib == args.preload_lib else [])
        for flags in flag_sets:
            label = f"{what}, " + {"-w": "writes refused", "-w -x": "writes and executable memory refused",
                                   "-k -x": "a filter that kills on executable memory"}[" ".join(flags)]
            names, entries, rest = run_entry(label, [args.deny_execmem] + flags, lib)
            expect = "symbols" if bound or flags[0] == "-k" else "pointer"
            if rest.get("binding") != expect or rest.get("entries") != "pointer":
                fail(f"{label}: binding {rest.get('binding')!r}, entries {rest.get('entries')!r}, "
                     f"expected {expect!r} and 'pointer'")
            check_fallback_names(label, names, plain, expect == "symbols")
            for name, e in entries.items():
                if not pointer_entry(e["bytes"]):
                    fail(f"{label}: entry {name}: expected the unpatched entry (through its pointer), "
                         f"saw {e['bytes'][:24]}")
    for lib in (args.preload_lib, ro):
        for flags in (["-x"], ["-w", "-x"]):
            r = run([args.deny_execmem] + flags + [args.names],
                    preload_env(lib, E2E_EXPECT_OBJECT=os.path.basename(lib)))
            show(r, f"every preload name of {os.path.basename(lib)}, deny_execmem {' '.join(flags)}")
            if r.returncode != 0 or b"12 of 12 names checked, all ok" not in r.stdout:
                fail(f"{os.path.basename(lib)} with deny_execmem {' '.join(flags)}: a preload name is missing, "
                     "misbound or wrong")


def check_preload_pagesize():
    """arm64 kernels run with 4, 16 or 64 KiB pages, and mprotect refuses an
    address that is not on a page boundary: where the symbol binding makes
    .dynsym writable (the copy linked without the move into RELRO) it must
    round to the page size the kernel reports (AT_PAGESZ), not to 4096.
    qemu-user reports the page size it is given (-p) but accepts any 4
    KiB-aligned address, so its system call trace is what shows the
    rounding: every mprotect of the process (the binding's two, on the
    .dynsym range, and ld.so's) must cover whole pages of that size (the
    kernel refuses an address off a boundary, and rounds a length up: a
    range rounded to 4096 would protect more than it names), and the
    binding must still be "symbols". The library itself, its .dynsym in
    RELRO, binds with no mprotect making a page writable."""
    if lib_arch() == "x86_64":
        skip("preload-pagesize: x86-64 Linux runs with 4 KiB pages only")
    emu = exe_wrapper.wrapper(args.entry) if args.entry else []
    if not emu or not emu[0].startswith("qemu-"):
        skip("preload-pagesize: needs the build's programs to run under qemu-user, which can report other page sizes")
    if not args.preload_lib_mprotect:
        skip("preload-pagesize: no mprotect copy of the preload library in this build")
    for lib, makes_writable in ((args.preload_lib, not dynsym_in_relro(args.preload_lib)),
                                (args.preload_lib_mprotect, True)):
        page = entry_page(lib)
        if page is None:
            return
        for size in (16384, 65536):
            label = f"{os.path.basename(lib)}, AT_PAGESZ {size}"
            r = run(emu + ["-p", str(size), "-strace", "-E", "LD_PRELOAD=" + lib, args.entry, page], base_env())
            print(f"{label}: " + " ".join(ln for ln in r.stdout.decode(errors="replace").splitlines() if "binding" in ln))
            if r.returncode != 0 or b"all ok" not in r.stdout:
                fail(f"{label}: a name or an entry gave a wrong result (exit {r.returncode})")
            _, _, rest = entry_lines(r.stdout)
            if rest.get("binding") != "symbols":
                fail(f"{label}: uarch_preload_binding() says {rest.get('binding')!r}, expected 'symbols'")
            calls = re.findall(r"mprotect\((0x[0-9a-f]+),(\d+),([A-Z_|]+)\)", r.stderr.decode(errors="replace"))
            writable = [c for c in calls if "PROT_WRITE" in c[2]]
            if makes_writable and not writable:
                fail(f"{label}: no mprotect made a page writable: the trace shows no symbol binding")
            if not makes_writable and writable:
                fail(f"{label}: {len(writable)} mprotect calls made pages writable, expected none (.dynsym in RELRO)")
            bad = [c for c in calls if int(c[0], 16) % size or int(c[1]) % size]
            for addr, length, prot in bad:
                fail(f"{label}: mprotect({addr}, {length}, {prot}) is not whole {size}-byte pages")
            print(f"{label}: {len(calls)} mprotect calls, {len(writable)} making pages writable, "
                  f"{len(calls) - len(bad)} of whole pages")


ASAN_GDB = """
import gdb
gdb.execute("set pagination off")
gdb.execute("break main")
gdb.execute("run")
for v in VARIANTS:   # by address: rbreak misses them in a build with debug information
    gdb.Breakpoint("*" + v, internal=True)
seen = set()
for _ in range(200):
    try:
        gdb.execute("continue", to_string=True)
        f = gdb.newest_frame()
    except gdb.error:   # the program ended
        break
    if not f.is_valid() or not (f.name() or "").startswith("uarch_x86_64_mem"):
        break
    caller = f.older()
    seen.add((f.name(), caller.name() if caller else None))
    if len({v for v, c in seen if c == "main"}) >= 3:
        break
for v, c in sorted(seen, key=str):
    print(f"variant {v} called from {c}")
if gdb.selected_inferior().pid:
    gdb.execute("kill")
"""


def check_preload_asan():
    """A program built with AddressSanitizer runs under the preload library
    when the sanitizer's runtime is preloaded first (ASan refuses to start
    otherwise): its copies and fills are right, an overflowing memcpy is
    still reported, and the program's calls reach uarch's variants (under
    gdb, a breakpoint on each)."""
    if lib_arch() != "x86_64" or os.uname().machine != "x86_64":
        skip("preload-asan: written for x86-64 (the variants' names)")
    cc = shutil.which("gcc")
    libasan = run([cc, "-print-file-name=libasan.so"]).stdout.decode().strip() if cc else ""
    if not os.path.isabs(libasan) or not os.path.exists(libasan):
        skip("preload-asan: gcc's libasan.so is not installed")
    src = os.path.join(os.path.dirname(os.path.abspath(__file__)), "asan_copy.c")
    with tempfile.TemporaryDirectory() as tmp:
        exe = os.path.join(tmp, "asan_copy")
        r = run([cc, "-fsanitize=address", "-O1", "-g", src, "-o", exe])
        if r.returncode != 0:
            show(r, "gcc -fsanitize=address")
            fail("preload-asan: the ASan program does not build")
            return
        env = base_env(LD_PRELOAD=f"{libasan}:{args.preload_lib}")
        env.pop("ASAN_OPTIONS", None)   # ASan's own check of the load order, as users get it
        for n in ("0", "100", "5000", "300000"):
            r = run([exe, n], env)
            if r.returncode != 0 or r.stdout.strip() != f"ok {n}".encode():
                show(r, f"asan_copy {n}")
                fail(f"asan_copy {n}: wrong result under ASan and the preload library")
        r = run([exe, "1000", "+1"], env)
        if b"heap-buffer-overflow" not in r.stderr or r.returncode == 0:
            show(r, "asan_copy 1000 +1")
            fail("an overflowing memcpy under the preload library went unreported by ASan")
        else:
            print("ASan reports the overflowing memcpy under the preload library")
        wrong_order = dict(env, LD_PRELOAD=f"{args.preload_lib}:{libasan}")
        r = run([exe, "100"], wrong_order)
        print(f"the preload library ahead of ASan's runtime: exit {r.returncode}, "
              f"{r.stderr.decode(errors='replace').strip()[:100]}")
        if r.returncode == 0 or b"does not come first" not in r.stderr:
            fail("ASan started with the preload library ahead of its runtime: the README's advice is out of date")
        if not shutil.which("gdb"):
            fail("preload-asan: gdb not found (scripts/deps.sh installs it)")
            return
        script = os.path.join(tmp, "asan.py")
        variants = sorted({n for names in local_symbols(args.preload_lib).values() for n in names
                           if re.match(r"uarch_x86_64_mem(cpy|move|set)_", n)})
        with open(script, "w") as f:
            f.write(f"VARIANTS = {variants!r}\n" + ASAN_GDB)
        r = run(["gdb", "-q", "-batch", "-ex", f"set environment LD_PRELOAD={libasan}:{args.preload_lib}",
                 "-x", script, "--args", exe, "300000"], timeout=120)
        lines = [ln for ln in r.stdout.decode(errors="replace").splitlines() if ln.startswith("variant ")]
        print("\n".join(lines))
        from_main = {ln.split()[1] for ln in lines if ln.endswith(" main")}
        ops = {re.sub(r"^uarch_x86_64_(mem\w+?)_.*", r"\1", v) for v in from_main}
        if not ({"memset"} <= ops and ops & {"memcpy", "memmove"}):
            show(r, "gdb")
            fail(f"the program's copies and fills did not all reach uarch's variants (seen from main: {sorted(from_main)})")


def count_cpuid(*prog):
    """CPUID instructions libuarch_preload.so executes in prog (gdb)."""
    script = os.path.join(os.path.dirname(os.path.abspath(__file__)), "count_cpuid.py")
    r = run(["gdb", "-q", "-batch", "-ex", f"set exec-wrapper env LD_PRELOAD={args.preload_lib}",
             "-ex", f"python LIB='{args.preload_lib}'", "-x", script, "--args"] + list(prog), timeout=120)
    m = re.search(rb"cpuid executed: (\d+) \((\d+) sites\)", r.stdout)
    if not m:
        show(r, f"gdb counting CPUID in {' '.join(prog)}")
        fail(f"could not count CPUID in {' '.join(prog)}")
        return None
    return int(m.group(1))


def check_load_cpuid():
    """At load the library runs at most 6 CPUID instructions (each a VM exit
    in a guest; with glibc's loader table and its record of the caches,
    none); no copy, however large, runs one (under CPUID faulting it would
    kill the process)."""
    if os.uname().machine != "x86_64":
        skip("load-cpuid: CPUID is x86-64's")
    if not shutil.which("gdb"):
        skip("load-cpuid: needs gdb (scripts/deps.sh installs it)")
    at_load = count_cpuid("/bin/true")
    print(f"CPUID at load (/bin/true under LD_PRELOAD): {at_load}")
    if at_load is not None and at_load > 6:
        fail(f"{at_load} CPUID instructions at load, more than 6")
    # preload_entry copies up to 64 MiB: past every window.
    page = [o for o, n in local_symbols(args.preload_lib).items() if "uarch_preload_entry_page" in n]
    with_large = count_cpuid(args.entry, f"{page[0]:x}" if page else "0")
    print(f"CPUID with large copies (preload_entry): {with_large}")
    if at_load is not None and with_large is not None and with_large > at_load:
        fail(f"{with_large - at_load} CPUID instructions inside copies (the caches are the constructor's to ask)")


# ---- static replacement: GNU ld --wrap ----------------------------------------

LIBZ_A = "/usr/lib/x86_64-linux-gnu/libz.a"


def pkg_config(*a):
    env = base_env(PKG_CONFIG_PATH=os.path.join(os.environ["UARCH_BUILD_ROOT"], "meson-uninstalled"))
    r = run(["pkg-config"] + list(a) + ["uarch"], env)
    if r.returncode != 0:
        fail(f"pkg-config {' '.join(a)} uarch: {r.stderr.decode().strip()}")
    return r.stdout.decode().split()


def iplt_targets(exe):
    """IPLT slot address -> name of the ifunc resolver its IRELATIVE names."""
    syms = {}
    for line in run(["nm", exe]).stdout.decode().splitlines():
        parts = line.split()
        if len(parts) == 3:
            syms.setdefault(int(parts[0], 16), parts[2])
    irel = {}
    for line in run(["readelf", "-rW", exe]).stdout.decode().splitlines():
        parts = line.split()
        if len(parts) >= 4 and parts[2] == "R_X86_64_IRELATIVE":
            irel[int(parts[0], 16)] = syms.get(int(parts[3], 16), parts[3])
    out = {}
    dis = run(["objdump", "-d", "--no-show-raw-insn", "-j", ".plt", "-j", ".iplt", exe]).stdout.decode()
    for m in re.finditer(r"^\s*([0-9a-f]+):\s+jmp\s+\*0x[0-9a-f]+\(%rip\)\s+# ([0-9a-f]+)", dis, re.M):
        if int(m.group(2), 16) in irel:
            out[int(m.group(1), 16)] = irel[int(m.group(2), 16)]
    return out


def mem_calls_from(exe, functions):
    """(caller, callee) for every call/jmp from one of functions to a
    memory function (a name with mem/bzero in it, or an IPLT slot, named by
    its resolver)."""
    iplt = iplt_targets(exe)
    dis = run(["objdump", "-d", "--no-show-raw-insn", exe]).stdout.decode()
    out, fn = [], None
    for line in dis.splitlines():
        m = re.match(r"^[0-9a-f]+ <(.+)>:$", line)
        if m:
            fn = m.group(1)
            continue
        m = re.match(r"^\s*[0-9a-f]+:\s+(call|jmp)\s+([0-9a-f]+) <(.+)>", line)
        if not m or fn not in functions:
            continue
        target = int(m.group(2), 16)
        callee = iplt.get(target, m.group(3))
        if target in iplt or re.search(r"mem|bzero", callee):
            out.append((fn, callee))
    return out


def check_static_wrap():
    """-static and -static-pie programs, gcc and clang, linked with libz.a and
    `pkg-config --variable=wrap_ldflags uarch`: zlib's round trip is exact, and
    zlib's memcpy/memmove/memset calls reach uarch's variants (in the
    disassembly and at run time under a debugger)."""
    if os.uname().machine != "x86_64":
        skip("static-wrap: written for x86-64 (the variants' names, libz.a's path)")
    if not os.path.exists(LIBZ_A):
        skip(f"static-wrap: no {LIBZ_A} (Debian package zlib1g-dev, scripts/deps.sh installs it)")
    wrap = pkg_config("--variable=wrap_ldflags")
    flags = pkg_config("--static", "--cflags", "--libs")
    print(f"wrap_ldflags: {' '.join(wrap)}")
    if not any("--wrap=memcpy" in w for w in wrap):
        fail("pkg-config's wrap_ldflags has no --wrap=memcpy")
    zlib_fns = set()
    for line in run(["nm", "--defined-only", LIBZ_A]).stdout.decode().splitlines():
        parts = line.split()
        if len(parts) == 3 and parts[1] in "Tt":
            zlib_fns.add(parts[2])
    src = os.path.join(os.path.dirname(os.path.abspath(__file__)), "wrap_zlib.c")
    with tempfile.TemporaryDirectory() as tmp:
        for cc in ("gcc", "clang"):
            if not shutil.which(cc):
                fail(f"static-wrap: {cc} not found (scripts/deps.sh installs it)")
                continue
            for mode in ("-static", "-static-pie"):
                label = f"{cc} {mode}"
                exe = os.path.join(tmp, f"zlib-{cc}{mode}")
                cmd = [cc, "-O2", mode] + (["-fPIE"] if mode == "-static-pie" else []) + wrap + \
                    [src, "-o", exe, "-lz"] + flags
                r = run(cmd)
                if r.returncode != 0:
                    show(r, label + ": link")
                    fail(f"{label}: does not link")
                    continue
                r = run([exe])
                show(r, label)
                b = bindings(r.stdout)
                if r.returncode != 0 or r.stdout.count(b"round trip identical") != 3:
                    fail(f"{label}: the compression round trip is not byte-identical")
                calls = mem_calls_from(exe, zlib_fns)
                into_uarch = [c for c in calls if c[1].startswith("__wrap_")]
                elsewhere = [c for c in calls if not c[1].startswith("__wrap_")]
                print(f"{label}: zlib's calls to memory functions: {len(into_uarch)} to __wrap_*, "
                      f"{len(elsewhere)} elsewhere {sorted(set(elsewhere))[:6]}")
                if not into_uarch or elsewhere:
                    fail(f"{label}: zlib's memcpy/memmove/memset calls do not all go to __wrap_*")
                # At run time: who calls the bound variants (a breakpoint on
                # each, the caller read from the return address).
                variants = sorted({f"uarch_x86_64_{op}_{b.get(op)}" for op in ("memcpy", "memmove", "memset")})
                script = os.path.join(tmp, "callers.gdb")
                with open(script, "w") as f:
                    f.write("set pagination off\nset $hits = 0\n")
                    for v in variants:
                        f.write(f"break *{v}\ncommands\nsilent\ninfo symbol *(void **)$rsp\n"
                                "set $hits = $hits + 1\nif $hits >= 400\nkill\nend\ncontinue\nend\n")
                    f.write("run\n")
                gdb = ["gdb", "-q", "-batch", "-x", script, "--args", exe, "65536"]
                if not shutil.which("gdb"):
                    print(f"{label}: no gdb, the run-time check is skipped")
                    continue
                r = run(gdb, timeout=240)
                callers = re.findall(r"^(\S+) \+ \d+ in section", r.stdout.decode(), re.M)
                from_zlib = sorted(set(c for c in callers if c in zlib_fns))
                print(f"{label}: {len(callers)} calls into {variants} seen; callers from zlib: {from_zlib}")
                if not from_zlib:
                    show(r, label + ": gdb")
                    fail(f"{label}: no call from zlib reached uarch's variants at run time")


# ---- library hygiene ----------------------------------------------------------

def dynsyms(lib, *flags):
    r = run(["nm", "-D"] + list(flags) + [lib])
    out = []
    for line in r.stdout.decode().splitlines():
        parts = line.split()
        if parts:
            out.append(parts[-1])
    return out


def check_hygiene():
    # What each library is for, and nothing else: the API under UARCH_0 in
    # libuarch.so; the C library's names, unversioned, and a query of their
    # binding in the preload library. An unversioned uarch_* there would
    # satisfy a program's uarch_memcpy@UARCH_0 in place of libuarch.so's.
    for lib, expect in ((args.lib, set(API_NAMES)), (args.preload_lib, set(PRELOAD_NAMES + PRELOAD_QUERY))):
        name = os.path.basename(lib)
        d = run(["readelf", "-dW", lib]).stdout.decode()
        needed = re.findall(r"\(NEEDED\)\s+Shared library: \[([^\]]+)\]", d)
        print(f"{name}: NEEDED {needed}")
        for n in needed:
            if n.startswith(("libstdc++", "libgcc_s", "libasan", "libubsan", "libm.")):
                fail(f"{name} needs {n} at run time")
        if "TEXTREL" in d:
            fail(f"{name} has text relocations")
        phdrs = run(["readelf", "-lW", lib]).stdout.decode()
        m = re.search(r"GNU_STACK.*\s(RWE|RW)\s", phdrs)
        if not m or m.group(1) != "RW":
            fail(f"{name}: stack is not marked non-executable")
        # The version node's own symbol (UARCH_0) is no export.
        defined = [s for s in dynsyms(lib, "--defined-only") if s.split("@")[0] != "UARCH_0"]
        plain = set(s.split("@")[0] for s in defined)
        print(f"{name}: {len(defined)} exported symbols: {' '.join(sorted(defined))}")
        if lib == args.lib:
            unversioned = [s for s in defined if not s.endswith("@@UARCH_0")]
            if unversioned:
                fail(f"{name}: exports outside the version node UARCH_0: {unversioned}")
        else:
            versioned = [s for s in defined if "@" in s]
            if versioned:
                fail(f"{name}: C library names are versioned ({versioned}); they would not interpose")
        if plain - expect:
            fail(f"{name} exports {sorted(plain - expect)}")
        if expect - plain:
            fail(f"{name} lacks {sorted(expect - plain)}")
        undef = dynsyms(lib, "--undefined-only")
        print(f"{name}: undefined: {' '.join(undef) or '(none)'}")
        bad = [s for s in undef if s.split("@")[0] in PRELOAD_NAMES]
        if bad:
            fail(f"{name} calls {bad} from the outside (recursion, and unbound inside resolvers)")
    # The static library too: a compiler-made memcpy call would jump through
    # an IRELATIVE slot that is not filled yet when a resolver runs.
    u = run(["nm", "--undefined-only", args.static_lib]).stdout.decode().split()
    bad = sorted(set(s for s in u if s in PRELOAD_NAMES))
    print(f"{os.path.basename(args.static_lib)}: references to C library copy names: {bad or 'none'}")
    if bad:
        fail(f"libuarch.a calls {bad}")
    # The two lists written by hand besides the table: the Debian symbols
    # file's block of the preload library, and the README.
    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    with open(os.path.join(root, "debian", "libuarch0.symbols")) as f:
        block = f.read().split("libuarch_preload.so.0 ")[1].split("\n", 1)[1]
    listed = set(line.split("@")[0].strip() for line in block.splitlines() if line.startswith(" "))
    if listed != set(PRELOAD_NAMES + PRELOAD_QUERY):
        fail(f"debian/libuarch0.symbols lists {sorted(listed ^ set(PRELOAD_NAMES + PRELOAD_QUERY))} unlike "
             "src/table/libc_names.def and the preload queries")
    with open(os.path.join(root, "README.md")) as f:
        readme = f.read()
    missing = [n for n in PRELOAD_NAMES if not re.search(r"(?<![\w])" + re.escape(n) + r"(?![\w])", readme)]
    if missing:
        fail(f"README.md does not name {missing} (src/table/libc_names.def)")
    print(f"debian/libuarch0.symbols and README.md name the {len(PRELOAD_NAMES)} names of src/table/libc_names.def")
    so = run(["readelf", "-dW", args.lib]).stdout.decode()
    if "Library soname: [libuarch.so.0]" not in so:
        fail("libuarch.so's soname is not libuarch.so.0")
    check_frameless()
    check_one_page()


def check_one_page():
    """Every memcpy/memmove/memset variant of this architecture lies within
    one 4 KiB page, in both libraries: a branch taken into the next page
    cost the avx512 copy's small sizes 0.27 ns a call (Zen 4 guest, see
    UARCH_MEM_ENTRY), so where the linker puts a variant must not decide
    its speed. Unoptimised builds (-O0, -Og) are not held to it: the avx512
    copy alone is 5 KiB there."""
    opt = build_optimization()
    if opt is None:
        return
    if opt in ("0", "g", "plain"):
        print(f"one page: not checked at -O{opt}")
        return
    arch = lib_arch()
    wanted = {variant_symbol(op, impl, arch) for op in ("memcpy", "memmove", "memset") for impl in impl_names()}
    wanted = {w for w in wanted if w and not w.startswith("uarch_generic_")}
    if not wanted:
        fail(f"one page: the table names no {arch} memory variant")
        return
    for lib in (args.lib, args.preload_lib):
        sized = {n: v for n, v in sized_symbols(lib).items() if n in wanted}
        name = os.path.basename(lib)
        if set(sized) != wanted:
            fail(f"{name}: no sized symbol for {sorted(wanted - set(sized))}")
        crossing = 0
        for sym, (at, size) in sorted(sized.items()):
            last = at + size - 1
            if at // 4096 != last // 4096:
                fail(f"{name}: {sym} [{at:#x}, {last:#x}] crosses a 4 KiB page boundary")
                crossing += 1
        print(f"one page: {name}: {len(sized)} variants, {crossing} crossing a 4 KiB page boundary "
              f"(largest {max((z for _, z in sized.values()), default=0)} bytes)")


def build_optimization():
    """The build's -O level as meson names it, or None (and a failure)."""
    try:
        with open(os.path.join(os.environ["UARCH_BUILD_ROOT"], "meson-info", "intro-buildoptions.json")) as f:
            return next(o["value"] for o in json.load(f) if o["name"] == "optimization")
    except (KeyError, OSError, StopIteration, ValueError):
        fail("cannot read the build's optimization level (UARCH_BUILD_ROOT)")
        return None


def check_frameless():
    """The x86-64 vector and erms entries run without a stack frame: a frame
    that realigns the stack for zmm spills costs every call that takes the
    path (mem_avx512.cpp, inline_loop)."""
    if "X86-64" not in run(["readelf", "-hW", args.lib]).stdout.decode():
        print("frameless entries: not an x86-64 library")
        return
    opt = build_optimization()
    if opt is None:
        return
    if opt not in ("2", "3", "s"):
        print(f"frameless entries: not checked at -O{opt} (the sanitizer tree's -O1 keeps frames)")
        return
    want = re.compile(r"^uarch_x86_64_mem(cpy|move|set)_(sse2|avx2|avx512|erms)$")
    # name -> (offset, size); memmove_X may alias memcpy_X
    entries = {n: v for n, v in sized_symbols(args.lib).items() if want.match(n)}
    names = sorted(entries)
    if len(names) < 12:
        fail(f"frameless entries: found {len(names)} x86-64 entries ({names}), expected 12")
    for n in names:
        off, size = entries[n]
        dis = run(["objdump", "-d", "--no-show-raw-insn", f"--start-address={off:#x}",
                   f"--stop-address={off + size:#x}", args.lib]).stdout.decode()
        body = [l for l in dis.splitlines() if re.match(r"^\s+[0-9a-f]+:\t", l)]
        if not body:
            fail(f"{n}: objdump showed no instructions")
        frame = [l.strip() for l in body if re.search(r"\bpush|%rsp|%rbp", l)]
        if frame:
            fail(f"{n} sets up a stack frame: {frame[:3]}")
        else:
            print(f"frameless entries: {n}: {len(body)} instructions, none touches %rsp or %rbp")


def find_info():
    p = args.info or os.path.join(os.environ.get("UARCH_BUILD_ROOT", ""), "tools", "info", "uarch-info")
    return p if p and os.path.isfile(p) and os.access(p, os.X_OK) else None


def flat_features(j):
    f = j.get("features")
    if isinstance(f, dict):
        return {k for k, v in f.items() if v}
    if isinstance(f, list):
        return set(f)
    return None


def check_info_features():
    info = find_info()
    if not info:
        skip("uarch-info features: tools/info/uarch-info is not built")
    r = run([info, "--json"])
    if r.returncode != 0:
        show(r, "uarch-info --json")
        fail("uarch-info --json failed")
        return
    try:
        j = json.loads(r.stdout)
    except ValueError as e:
        fail(f"uarch-info --json is not JSON: {e}")
        return
    feats = flat_features(j)
    if feats is None:
        fail("uarch-info --json has no features list")
        return
    if args.raw_cpuid:   # x86-64 only
        raw = bindings(run([args.raw_cpuid]).stdout)
        for k in ("avx512f", "erms", "fsrm", "fsrs"):
            have, want = k in feats, raw.get(k) == "1"
            print(f"{k}: raw CPUID {int(want)}, uarch-info {int(have)}")
            if have != want:
                fail(f"uarch-info says {k}={int(have)}, CPUID says {int(want)}")
    if j.get("ops") != OPS:
        fail(f"uarch-info --json ops {j.get('ops')} differ from src/table/ops.def's {OPS}")
    impl = j.get("impl", {})
    mine = bindings(run([args.shared]).stdout)
    for op in OPS:
        if op in impl and impl[op] != mine.get(op):
            fail(f"uarch-info impl {op}={impl[op]} but uarch_impl says {mine.get(op)}")
    print(f"uarch-info impl: {impl}")


# ---- packaging: subproject, install, pkg-config, CMake ------------------------

def check_subproject_and_install():
    meson = shutil.which("meson")
    if not meson:
        skip("subproject/install: meson is not on PATH")
    src_root = os.environ["UARCH_SOURCE_ROOT"]
    here = os.path.dirname(os.path.abspath(__file__))
    want = bindings(run([args.shared]).stdout)
    with tempfile.TemporaryDirectory(prefix="uarch-consumer-") as t:
        proj = os.path.join(t, "consumer")
        os.makedirs(os.path.join(proj, "subprojects"))
        shutil.copy(os.path.join(here, "subproject_consumer", "meson.build"), proj)
        shutil.copy(os.path.join(here, "consumer.c"), proj)
        os.symlink(src_root, os.path.join(proj, "subprojects", "uarch"))
        prefix = os.path.join(t, "prefix")
        b = os.path.join(t, "b")
        env = base_env()
        steps = [[meson, "setup", b, proj, "--prefix=" + prefix, "--force-fallback-for=uarch",
                  "-Dbuildtype=release"],
                 ["ninja", "-C", b],
                 [meson, "install", "-C", b, "--quiet", "--no-rebuild"]]
        for s in steps:
            r = run(s, env, timeout=900)
            if r.returncode != 0:
                show(r, " ".join(s))
                fail(f"{' '.join(s[:2])} failed")
                return
        r = run([os.path.join(b, "consumer")])
        show(r, "consumer built with uarch as a Meson subproject")
        if r.returncode != 0 or bindings(r.stdout) != want:
            fail("the subproject consumer's bindings differ from the built library's")

        # The installed files: headers, libraries, pc file, CMake package.
        found = {}
        for dp, _, files in os.walk(prefix):
            for f in files:
                found.setdefault(f, os.path.join(dp, f))
        print("installed: " + " ".join(sorted(os.path.relpath(v, prefix) for v in found.values())))
        for f in ("uarch.h", "libuarch.so.0", "libuarch.a", "libuarch_preload.so", "uarch.pc",
                  "uarchConfig.cmake", "uarchConfigVersion.cmake"):
            if f not in found:
                fail(f"meson install did not install {f}")
        if failures:
            return
        libdir = os.path.dirname(found["libuarch.so.0"])
        pcdir = os.path.dirname(found["uarch.pc"])
        pkg = shutil.which("pkg-config")
        cc = shutil.which("cc") or shutil.which("gcc")
        if pkg and cc:
            penv = base_env(PKG_CONFIG_PATH=pcdir)
            r = run([pkg, "--cflags", "--libs", "uarch"], penv)
            flags = r.stdout.decode().split()
            print(f"pkg-config --cflags --libs uarch: {' '.join(flags)}")
            exe = os.path.join(t, "pc-consumer")
            r2 = run([cc, os.path.join(here, "consumer.c"), "-o", exe] + flags + ["-Wl,-rpath," + libdir])
            if r.returncode or r2.returncode:
                show(r2, "cc with pkg-config flags")
                fail("building against the pkg-config file failed")
            else:
                r = run([exe])
                show(r, "pkg-config consumer")
                if r.returncode or bindings(r.stdout) != want:
                    fail("the pkg-config consumer's bindings differ")
        else:
            fail("pkg-config or cc missing")
        cmake = shutil.which("cmake")
        if not cmake:
            fail("cmake is not installed (Debian package cmake)")
            return
        cb = os.path.join(t, "cmake-build")
        for s in ([cmake, "-S", os.path.join(here, "cmake_consumer"), "-B", cb, "-DCMAKE_PREFIX_PATH=" + prefix,
                   "-DCONSUMER_SOURCE=" + os.path.join(here, "consumer.c"), "-DCMAKE_BUILD_TYPE=Release"],
                  [cmake, "--build", cb]):
            r = run(s, timeout=600)
            if r.returncode:
                show(r, " ".join(s[:2]))
                fail("the CMake find_package(uarch) consumer did not build")
                return
        for exe in ("consumer", "consumer_static", "consumer_wrap"):
            r = run([os.path.join(cb, exe)])
            show(r, f"CMake consumer {exe}")
            if r.returncode or bindings(r.stdout) != want:
                fail(f"the CMake consumer {exe} failed or its bindings differ")
        needed = run(["readelf", "-dW", os.path.join(cb, "consumer_static")]).stdout.decode()
        if "libuarch" in needed:
            fail("uarch::static linked the shared library")
        wrapped = run(["nm", os.path.join(cb, "consumer_wrap")]).stdout.decode()
        if not re.search(r" [iT] __wrap_memcpy$", wrapped, re.M):
            fail("uarch::wrap did not link __wrap_memcpy into the program")

        # The project's own build installs into a DESTDIR too, tools included.
        dest = os.path.join(t, "destdir")
        r = run([meson, "install", "-C", os.environ["UARCH_BUILD_ROOT"], "--destdir", dest,
                 "--no-rebuild", "--quiet"], timeout=300)
        if r.returncode:
            show(r, "meson install --destdir")
            fail("meson install --destdir of the build failed")
            return
        names = set()
        for dp, _, files in os.walk(dest):
            names.update(files)
        want_files = ["uarch.h", "libuarch.so.0", "libuarch.a", "libuarch_preload.so", "uarch.pc",
                      "uarchConfig.cmake"]
        if find_info():
            want_files.append("uarch-info")
        missing = [f for f in want_files if f not in names]
        print(f"meson install --destdir: {len(names)} files; missing: {missing or 'none'}")
        if missing:
            fail(f"meson install --destdir did not install {missing}")


CHECKS = {
    "modes": check_modes,
    "tunables": check_tunables,
    "setuid": check_setuid,
    "preload-ls": check_preload_ls,
    "preload-python3": check_preload_python,
    "preload-node": check_preload_node,
    "preload-git": check_preload_git,
    "preload-sqlite3": check_preload_sqlite,
    "preload-compress": check_preload_compress,
    "cpython-tests": check_cpython_tests,
    "ld-debug-bindings": check_ld_debug,
    "fortify": check_fortify,
    "preload-names": check_preload_names,
    "preload-entry": check_preload_entry,
    "static-wrap": check_static_wrap,
    "load-cpuid": check_load_cpuid,
    "preload-fallback": check_preload_fallback,
    "preload-pagesize": check_preload_pagesize,
    "preload-asan": check_preload_asan,
    "hygiene": check_hygiene,
    "info-features": check_info_features,
    "subproject-install": check_subproject_and_install,
}

# Checks a cross build cannot make: they run this machine's programs with
# the cross build's library, or need the kernel to see the program itself.
FOREIGN_PROGRAMS = "this machine's programs cannot load the cross build's preload library"
HOST_ONLY = {
    "setuid": "qemu-user cannot run a set-id program as one (the kernel sees qemu, which is not set-id)",
    "preload-ls": FOREIGN_PROGRAMS, "preload-python3": FOREIGN_PROGRAMS, "preload-node": FOREIGN_PROGRAMS,
    "preload-git": FOREIGN_PROGRAMS, "preload-sqlite3": FOREIGN_PROGRAMS,
    "preload-compress": FOREIGN_PROGRAMS, "cpython-tests": FOREIGN_PROGRAMS,
    "subproject-install": "packaging builds for this machine; the native build checks it",
    "static-wrap": "it links with this machine's gcc, clang and libz.a; the native build checks it",
    "load-cpuid": "gdb debugs programs of this machine; the native build checks it",
    "preload-asan": "it builds an ASan program with this machine's gcc; the native build checks it",
}


def main():
    global args
    p = argparse.ArgumentParser()
    p.add_argument("check", choices=sorted(CHECKS))
    for k in ("shared", "static", "preload-prog", "preload-lib", "lib", "static-lib", "secure-helper",
              "fortify", "names", "raw-cpuid", "info", "entry", "deny-execmem", "preload-lib-mprotect",
              "dynsym-relro", "record-lib"):
        p.add_argument("--" + k)
    args = p.parse_args()
    if args.lib and exe_wrapper.foreign(args.lib) and args.check in HOST_ONLY:
        skip(f"{args.check}: {HOST_ONLY[args.check]} (a cross build: its programs run under "
             f"{' '.join(exe_wrapper.wrapper(args.lib)) or 'an emulator'})")
    CHECKS[args.check]()
    if failures:
        print(f"{args.check}: {len(failures)} failure(s)")
        sys.exit(1)
    print(f"{args.check}: passed")


if __name__ == "__main__":
    main()
