"""Real programs (ls, python3, node, git, sqlite3, the compressors,
CPython's own tests) under LD_BIND_NOW=1 LD_PRELOAD=libuarch_preload.so
give what they give without it."""
import hashlib
import os
import random
import shutil
import tempfile

from checklib import base_env, fail, run, show, skip
from common import preload_env


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


CHECKS = {
    "preload-ls": check_preload_ls,
    "preload-python3": check_preload_python,
    "preload-node": check_preload_node,
    "preload-git": check_preload_git,
    "preload-sqlite3": check_preload_sqlite,
    "preload-compress": check_preload_compress,
    "cpython-tests": check_cpython_tests,
}

# Checks a cross build cannot make, and why (e2e.py skips them there).
FOREIGN_PROGRAMS = "this machine's programs cannot load the cross build's preload library"
HOST_ONLY = {
    "preload-ls": FOREIGN_PROGRAMS, "preload-python3": FOREIGN_PROGRAMS, "preload-node": FOREIGN_PROGRAMS,
    "preload-git": FOREIGN_PROGRAMS, "preload-sqlite3": FOREIGN_PROGRAMS,
    "preload-compress": FOREIGN_PROGRAMS, "cpython-tests": FOREIGN_PROGRAMS,
}
