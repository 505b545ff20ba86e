"""The programs of the end-to-end suite and the work each one does.

Every input is generated (the same bytes every time) into the suite's
temporary directory. A run is one fixed amount of work, about 0.3-0.5 s of
CPU time on a current x86-64 core at scale 1: a command the suite runs
itself (its rusage is measured), or a client the suite runs against a server
(the server's CPU time is measured, not the client's). nginx under wrk runs
for a fixed time instead: its CPU time is divided by the requests it served.
"""
import hashlib
import os
import random
import re
import shutil
import signal
import socket
import subprocess
import time

import measure
from workload import Client, Server  # noqa: F401 (the classes every program derives from)

JOBS = os.path.join(os.path.dirname(os.path.abspath(__file__)), "jobs")
PY = "/usr/bin/python3"   # Debian's CPython, not whatever python3 PATH finds first


def words_text(path, size, seed=15):
    """size bytes of varied, compressible text: words, numbers, repeats."""
    r = random.Random(seed)
    words = ["".join(r.choice("abcdefghijklmnopqrstuvwxyz") for _ in range(r.randint(2, 10)))
             for _ in range(2000)]
    out, n = [], 0
    while n < size:
        line = " ".join(r.choice(words) for _ in range(r.randint(3, 14))) + f" {r.randint(0, 10**6)}\n"
        out.append(line)
        n += len(line)
    with open(path, "w") as f:
        f.write("".join(out))


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def first_cmd(*names):
    for n in names:
        p = shutil.which(n)
        if p:
            return p
    return None


def pg_bindir():
    """The newest installed PostgreSQL server's bin directory."""
    base = "/usr/lib/postgresql"
    try:
        vs = sorted((d for d in os.listdir(base) if d.isdigit() and
                     os.path.exists(f"{base}/{d}/bin/postgres")), key=int)
    except OSError:
        vs = []
    return f"{base}/{vs[-1]}/bin" if vs else None


JSON_PY = r'''
import json, random, sys
n = int(sys.argv[1])
r = random.Random(15)
words = ["".join(r.choice("abcdefghijklmnopqrstuvwxyz") for _ in range(r.randint(2, 12))) for _ in range(500)]
items = [{"id": i, "name": f"item-{i}", "tags": [r.choice(words) for _ in range(3)],
          "text": " ".join(r.choice(words) for _ in range(r.randint(4, 40))), "v": i * 1.5}
         for i in range(2000)]
total = 0
for _ in range(n):
    s = json.dumps(items)
    back = json.loads(s)
    parts = s.split(", ")
    joined = ", ".join(parts)
    lines = "\n".join(d["text"] for d in back).split("\n")
    total += len(joined) + len(lines) + len(s.replace("item", "ITEM"))
print(total)
'''


NODE_JS = r'''
// JSON, Buffers and strings: what a small service does with its messages.
const n = Number(process.argv[2]);
const items = [];
for (let i = 0; i < 20000; i++) items.push({id: i, name: 'item-' + i, tags: ['a', 'b', String(i % 7)], v: i * 1.5});
let total = 0;
for (let r = 0; r < n; r++) {
  const s = JSON.stringify(items);
  total += JSON.parse(s).length;
  const bufs = [];
  for (let i = 0; i < 2000; i++) bufs.push(Buffer.from(s.slice(i * 50, i * 50 + 50 + (i % 300))));
  const all = Buffer.concat(bufs);
  total += all.length + all.toString('base64').length + all.subarray(7).toString('latin1').length;
}
console.log(total);
'''


class PythonJson(Client):
    name, program, workload = "python-json", "python3", "json dump/parse, split/join"
    packages = ("python3",)

    def missing(self):
        return None if os.access(PY, os.X_OK) else f"{PY} not installed"

    def setup(self):
        super().setup()
        with open(os.path.join(self.dir, "job.py"), "w") as f:
            f.write(JSON_PY)

    def cmd(self):
        return [PY, "job.py", str(max(1, round(34 * self.ctx.scale)))]


class PythonBytes(PythonJson):
    name, workload = "python-bytes", "slices of 512-4096 B of 64 KiB"

    def setup(self):
        Client.setup(self)
        shutil.copy(os.path.join(JOBS, "slices.py"), os.path.join(self.dir, "job.py"))

    def cmd(self):
        return [PY, "job.py", str(max(1, round(190 * self.ctx.scale)))]


class Sqlite(Client):
    name, program, workload = "sqlite", "sqlite3", "in-memory table, index, group/sort"
    packages = ("sqlite3",)

    commands = ("sqlite3",)

    def setup(self):
        super().setup()
        rows = max(1000, round(165000 * self.ctx.scale))
        with open(os.path.join(self.dir, "job.sql"), "w") as f:
            f.write(f"""PRAGMA journal_mode=OFF;
CREATE TABLE t(id INTEGER PRIMARY KEY, name TEXT, grp INTEGER, payload BLOB);
WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c WHERE x < {rows})
INSERT INTO t SELECT x, printf('name-%08d-%s', x, substr('abcdefghijklmnopqrstuvwxyz', x % 26 + 1)),
                     x % 97, zeroblob(x % 600) FROM c;
CREATE INDEX t_grp ON t(grp, name);
SELECT grp, count(*), sum(length(payload)), max(name) FROM t GROUP BY grp ORDER BY grp LIMIT 20;
SELECT count(*) FROM t WHERE name LIKE 'name-0001%';
SELECT name FROM t WHERE grp = 42 ORDER BY name DESC LIMIT 5;
SELECT length(group_concat(name || hex(substr(payload, 1, 8)))) FROM t;
""")

    def cmd(self):
        return ["sqlite3", ":memory:"]

    def stdin(self):
        return os.path.join(self.dir, "job.sql")


def git_history(repo, commits, files, lines, seed=15):
    """A repository built by git fast-import: commits that each change a few
    lines of a few files; fixed names and dates."""
    r = random.Random(seed)
    subprocess.run(["git", "init", "-q", repo], check=True)
    content = {f"src/f{i:03d}.txt": [f"line {j} of file {i}: {r.random():.12f}\n" for j in range(lines)]
               for i in range(files)}
    out = []
    for c in range(commits):
        out.append(f"commit refs/heads/main\nmark :{c + 1}\n"
                   f"committer a <a@example.org> {1700000000 + c * 60} +0000\n"
                   f"data {len(f'change {c}')}\nchange {c}\n")
        if c:
            out.append(f"from :{c}\n")
        for name in r.sample(sorted(content), 4) if c else sorted(content):
            ls = content[name]
            for _ in range(r.randint(1, 8) if c else 0):
                ls[r.randrange(len(ls))] = f"commit {c} changed {r.random():.9f}\n"
            data = "".join(ls)
            out.append(f"M 100644 inline {name}\ndata {len(data)}\n{data}\n")
    subprocess.run(["git", "-C", repo, "fast-import", "--quiet"], input="".join(out).encode(), check=True)
    subprocess.run(["git", "-C", repo, "symbolic-ref", "HEAD", "refs/heads/main"], check=True)


class GitLog(Client):
    name, program, workload = "git-log", "git", "log -p of a generated history"
    packages = ("git",)

    commands = ("git",)

    def repo(self):
        return os.path.join(self.ctx.work, "git-repo")

    def setup(self):
        super().setup()
        if not os.path.isdir(self.repo()):
            git_history(self.repo(), max(20, round(800 * self.ctx.scale)), 60, 300)

    def cmd(self):
        return ["git", "-C", self.repo(), "log", "-p"]


class GitGc(GitLog):
    name, workload = "git-gc", "gc --aggressive of a copy"

    def before_run(self):
        copy = os.path.join(self.dir, "repo")
        shutil.rmtree(copy, ignore_errors=True)
        shutil.copytree(self.repo(), copy, symlinks=True)

    def cmd(self):
        return ["git", "-C", os.path.join(self.dir, "repo"), "-c", "pack.threads=1", "-c", "gc.aggressiveWindow=8", "gc", "--aggressive", "-q"]


class Zstd(Client):
    name, program, workload = "zstd", "zstd", "-3 of generated text"
    packages = ("zstd",)

    commands = ("zstd",)

    def input(self):
        return os.path.join(self.ctx.work, "text.txt")

    def setup(self):
        super().setup()
        if not os.path.exists(self.input()):
            words_text(self.input(), 32 << 20)

    @property
    def cwd(self):
        return self.ctx.work   # the text is shared with gzip

    def cmd(self):
        mib = max(1, round(32 * self.ctx.scale))
        return ["sh", "-c", f"head -c {mib}M text.txt | zstd -q -3 -T1 -c | zstd -q -d -c",]


class Gzip(Zstd):
    name, program, workload = "gzip", "gzip", "-6 of generated text"
    packages = ("gzip",)

    commands = ("gzip",)

    def cmd(self):
        mib = max(1, round(12 * self.ctx.scale))
        return ["sh", "-c", f"head -c {mib}M text.txt | gzip -6 -c | gzip -d -c"]


class Node(Client):
    name, program, workload = "node", "node", "JSON, Buffers, strings"
    packages = ("nodejs",)

    commands = ("node",)

    def setup(self):
        super().setup()
        with open(os.path.join(self.dir, "job.js"), "w") as f:
            f.write(NODE_JS)

    def cmd(self):
        return ["node", "job.js", str(max(1, round(9 * self.ctx.scale)))]


def unix_ping(path, send, expect):
    try:
        with socket.socket(socket.AF_UNIX) as s:
            s.settimeout(2)
            s.connect(path)
            if send:
                s.sendall(send)
            return s.recv(64).startswith(expect)
    except OSError:
        return False


class Redis(Server):
    name, program, workload = "redis", "redis-server", "redis-benchmark set/get 1 KiB and 16 KiB"
    packages = ("redis-server", "redis-tools")

    commands = ("redis-server", "redis-benchmark")

    def sock(self, inst):
        return os.path.join(inst.dir, "redis.sock")

    def server_cmd(self, inst):
        return ["redis-server", "--port", "0", "--unixsocket", self.sock(inst), "--save", "",
                "--appendonly", "no", "--daemonize", "no", "--logfile", "", "--dir", inst.dir]

    def ready(self, inst):
        return unix_ping(self.sock(inst), b"PING\r\n", b"+PONG")

    def client_cmd(self, inst):
        n = max(1000, round(80000 * self.ctx.scale))
        return ["sh", "-c", f"redis-benchmark -s {self.sock(inst)} -q -c 8 -P 16 -n {n} -d 1024 -t set,get && "
                f"redis-benchmark -s {self.sock(inst)} -q -c 8 -P 16 -n {n // 4} -d 16384 -t set,get"]


class Postgres(Server):
    """PostgreSQL on a unix socket in its own data directory (initdb), as the
    postgres user when the suite runs as root (the server refuses root)."""
    program = "postgres"
    packages = ("postgresql-15|postgresql",)
    user = "postgres"
    stop_signal = signal.SIGINT    # fast shutdown

    def missing(self):
        if not pg_bindir():
            return "PostgreSQL server not installed"
        if os.geteuid() == 0:
            try:
                measure.pwd.getpwnam(self.user)
            except KeyError:
                return "no postgres user to run the server as"
        return None

    def tool(self, name):
        return os.path.join(pg_bindir(), name)

    def prepare(self, inst):
        data = os.path.join(inst.dir, "data")
        if not os.path.exists(data):
            pre = (lambda: measure.drop_to(self.owner())) if self.owner() else None
            subprocess.run([self.tool("initdb"), "-D", data, "-A", "trust", "-U", "postgres", "--no-locale",
                            "-E", "UTF8", "--no-sync"], env=self.ctx.env("plain"), cwd=inst.dir,
                           stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, check=True, preexec_fn=pre)

    def server_cmd(self, inst):
        return [self.tool("postgres"), "-D", os.path.join(inst.dir, "data"), "-k", inst.dir,
                "-c", "listen_addresses=", "-c", "fsync=off", "-c", "synchronous_commit=off",
                "-c", "full_page_writes=off", "-c", "shared_buffers=256MB", "-c", "work_mem=256MB",
                "-c", "max_wal_size=4GB", "-c", "autovacuum=off", "-c", "logging_collector=off"]

    def ready(self, inst):
        return subprocess.run([self.tool("pg_isready"), "-q", "-h", inst.dir, "-U", "postgres"],
                              env=self.ctx.env("plain")).returncode == 0

    def psql(self, inst, *args, stdin=None):
        subprocess.run([self.tool("psql"), "-X", "-q", "-v", "ON_ERROR_STOP=1", "-h", inst.dir, "-U", "postgres",
                        *args], env=self.ctx.env("plain"), stdin=stdin, stdout=subprocess.DEVNULL,
                       stderr=subprocess.PIPE, check=True)


class PgSelect(Postgres):
    name, workload = "pg-select", "pgbench -S (4 clients)"

    def init_instance(self, inst):
        subprocess.run([self.tool("pgbench"), "-h", inst.dir, "-U", "postgres", "-i", "-q", "-s", "5", "postgres"],
                       env=self.ctx.env("plain"), stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, check=True)

    def client_cmd(self, inst):
        t = max(50, round(1600 * self.ctx.scale))
        return [self.tool("pgbench"), "-h", inst.dir, "-U", "postgres", "-n", "-S", "-c", "4", "-j", "1",
                "-t", str(t), "postgres"]


class PgSort(Postgres):
    name, workload = "pg-sort", "COPY in, ORDER BY text, COPY out"

    def setup(self):
        os.makedirs(self.dir, exist_ok=True)
        r = random.Random(15)
        rows = max(1000, round(100000 * self.ctx.scale))
        with open(os.path.join(self.dir, "rows.csv"), "w") as f:
            for i in range(rows):
                f.write(f"{i},{r.getrandbits(64):016x}-{'x' * r.randint(0, 200)},{r.random()}\n")
        with open(os.path.join(self.dir, "job.sql"), "w") as f:
            f.write(f"""CREATE TEMP TABLE t (a int, b text, c float8);
\\copy t FROM '{os.path.join(self.dir, "rows.csv")}' (FORMAT csv)
COPY (SELECT a, b, c FROM t ORDER BY b) TO STDOUT;
COPY (SELECT b || b, a FROM t ORDER BY c) TO STDOUT;
""")
        super().setup()

    def client_cmd(self, inst):
        return [self.tool("psql"), "-X", "-q", "-v", "ON_ERROR_STOP=1", "-h", inst.dir, "-U", "postgres",
                "-f", os.path.join(self.dir, "job.sql"), "postgres"]


NGINX_LUA = r'''
local paths = {"/f1k", "/f2k", "/f4k", "/f8k", "/f16k", "/f32k", "/f64k"}
local i = 0
request = function()
  i = i + 1
  return wrk.format("GET", paths[i % #paths + 1])
end
done = function(summary, latency, requests)
  io.write(string.format("requests %d errors %d\n", summary.requests,
    summary.errors.connect + summary.errors.read + summary.errors.write + summary.errors.status))
end
'''


class Nginx(Server):
    name, program, workload = "nginx", "nginx", "wrk, files of 1-64 KiB, per request"
    packages = ("nginx", "wrk")
    unit = "s/req"
    capture = True
    stop_signal = signal.SIGQUIT   # graceful: workers and master exit normally

    commands = ("nginx", "wrk")

    def setup(self):
        os.makedirs(os.path.join(self.dir, "www"), exist_ok=True)
        r = random.Random(15)
        for k in (1, 2, 4, 8, 16, 32, 64):
            with open(os.path.join(self.dir, "www", f"f{k}k"), "wb") as f:
                f.write(r.randbytes(k << 10))
        with open(os.path.join(self.dir, "paths.lua"), "w") as f:
            f.write(NGINX_LUA)
        super().setup()

    def writers(self):
        return ["--writers", "nobody"] if os.geteuid() == 0 else []

    def make_dir(self, path):
        super().make_dir(path)
        os.chmod(path, 0o755)   # the workers (nobody) reach the recorder's directory in it

    def prepare(self, inst):
        inst.port = free_port()
        user = "user nobody nogroup;" if os.geteuid() == 0 else ""
        with open(os.path.join(inst.dir, "nginx.conf"), "w") as f:
            f.write(f"""daemon off; master_process on; worker_processes 1; {user}
pid {inst.dir}/nginx.pid; error_log {inst.dir}/error.log;
events {{ worker_connections 256; }}
http {{
  access_log off; sendfile off; keepalive_requests 1000000;
  client_body_temp_path {inst.dir}/t1; proxy_temp_path {inst.dir}/t2; fastcgi_temp_path {inst.dir}/t3;
  uwsgi_temp_path {inst.dir}/t4; scgi_temp_path {inst.dir}/t5;
  server {{ listen 127.0.0.1:{inst.port}; root {self.dir}/www; }}
}}
""")

    def server_cmd(self, inst):
        return [first_cmd("nginx") or "/usr/sbin/nginx", "-p", inst.dir, "-c", os.path.join(inst.dir, "nginx.conf")]

    def ready(self, inst):
        try:
            with socket.create_connection(("127.0.0.1", inst.port), timeout=1):
                return True
        except OSError:
            return False

    def client_cmd(self, inst):
        return [first_cmd("wrk") or "/usr/bin/wrk", "-t1", "-c8", "-d1s", "-s", os.path.join(self.dir, "paths.lua"),
                f"http://127.0.0.1:{inst.port}/"]

    def units(self, out):
        m = re.search(rb"requests (\d+) errors (\d+)", out)
        if not m or int(m.group(1)) == 0:
            raise RuntimeError("wrk reported no requests")
        if int(m.group(2)):
            raise RuntimeError(f"wrk: {int(m.group(2))} errors")
        return int(m.group(1))


class Mariadb(Server):
    """MariaDB on a unix socket only (no TCP), InnoDB: rows of 1-64 KiB
    blobs read back, cut, copied into a temporary table and sorted."""
    name, program, workload = "mariadb", "mariadbd", "blobs 1-64 KiB: select, copy, sort"
    packages = ("mariadb-server", "mariadb-client")
    user = "mysql"

    def missing(self):
        if not first_cmd("mariadbd", "mysqld") and not os.path.exists("/usr/sbin/mariadbd"):
            return "mariadbd not installed"
        if not first_cmd("mariadb", "mysql"):
            return "mariadb client not installed"
        if os.geteuid() == 0:
            try:
                measure.pwd.getpwnam(self.user)
            except KeyError:
                return "no mysql user to run the server as"
        return None

    def sock(self, inst):
        return os.path.join(inst.dir, "mysqld.sock")

    def prepare(self, inst):
        data = os.path.join(inst.dir, "data")
        if not os.path.exists(data):
            pre = (lambda: measure.drop_to(self.owner())) if self.owner() else None
            subprocess.run([first_cmd("mariadb-install-db", "mysql_install_db"), "--no-defaults",
                            f"--datadir={data}", "--auth-root-authentication-method=normal",
                            "--skip-test-db"], env=self.ctx.env("plain"), cwd=inst.dir,
                           stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, check=True, preexec_fn=pre)

    def server_cmd(self, inst):
        d = inst.dir
        return [first_cmd("mariadbd", "mysqld") or "/usr/sbin/mariadbd", "--no-defaults", f"--datadir={d}/data",
                f"--socket={self.sock(inst)}", "--skip-networking", f"--pid-file={d}/mysqld.pid",
                f"--log-error={d}/error.log", f"--tmpdir={d}", "--innodb-buffer-pool-size=512M",
                "--innodb-log-file-size=256M", "--innodb-flush-log-at-trx-commit=0", "--skip-log-bin",
                "--max-allowed-packet=64M", "--performance-schema=OFF"]

    def ready(self, inst):
        return os.path.exists(self.sock(inst)) and subprocess.run(self.mysql(inst) + ["-e", "SELECT 1"], stdout=subprocess.DEVNULL,
                           stderr=subprocess.DEVNULL).returncode == 0

    def mysql(self, inst):
        return [first_cmd("mariadb", "mysql"), "--no-defaults", "-S", self.sock(inst), "-u", "root"]

    def init_instance(self, inst):
        rows = max(50, round(2000 * self.ctx.scale))
        sql = f"""CREATE DATABASE e2e; USE e2e; SET SESSION max_recursive_iterations = {rows + 1};
CREATE TABLE t (id INT PRIMARY KEY, b LONGBLOB) ENGINE=InnoDB;
INSERT INTO t WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c WHERE x < {rows})
  SELECT x, REPEAT(SHA2(x, 256), 16 + (x * 7919) % 1009) FROM c;
"""
        subprocess.run(self.mysql(inst), input=sql.encode(), stdout=subprocess.DEVNULL,
                       stderr=subprocess.PIPE, check=True)

    def client_cmd(self, inst):
        return ["sh", "-c", " ".join(self.mysql(inst)) + " e2e < " + os.path.join(self.dir, "job.sql")]

    def setup(self):
        os.makedirs(self.dir, exist_ok=True)
        with open(os.path.join(self.dir, "job.sql"), "w") as f:
            f.write("""CREATE TEMPORARY TABLE x ENGINE=InnoDB AS SELECT id, SUBSTRING(b, 1 + id % 100, 8000) AS s FROM t;
SELECT id, LENGTH(s) FROM x ORDER BY s LIMIT 10;
""" + "".join(f"SELECT SUM(LENGTH(CONCAT(b, SUBSTRING(b, {k} + id % 7)))) FROM t;\n" for k in range(1, 33)) + """SELECT id, b FROM t WHERE id % 16 = 0;
DROP TEMPORARY TABLE x;
""")
        super().setup()


# -- programs the tests run, with and without uarch, to compare what they give --

class Ls(Client):
    name, program, workload, check = "ls", "ls", "-laRn /usr/include", "preload-ls"

    def cmd(self):
        return ["/bin/ls", "-laRn", "--time-style=full-iso", "/usr/include"]


class PythonMix(Client):
    name, program, workload, check = "python-mix", "python3", "bytes, array, struct, zlib, json", "preload-python3"
    missing = PythonJson.missing

    def cmd(self):
        return [PY, os.path.join(JOBS, "mix.py")]


class NodeMix(Client):
    name, program, workload, check = "node-mix", "node", "Buffers, zlib, JSON", "preload-node"

    def missing(self):
        return None if first_cmd("node", "nodejs") else "no node or nodejs on PATH (Debian package nodejs)"

    def cmd(self):
        return [first_cmd("node", "nodejs"), os.path.join(JOBS, "mix.js")]


class GitSession(Client):
    name, program, workload, check = "git-session", "git", "commit, merge, gc, fsck, log, archive", "preload-git"
    commands = ("git",)

    def setup(self):
        super().setup()
        r = random.Random(7)
        alphabet = bytes((b"abcdefgh\n" * 29)[:256])
        for c in range(6):
            os.makedirs(os.path.join(self.dir, "content", f"c{c}"), exist_ok=True)
            for f in range(25):
                n = r.choice([0, 1, 100, 4096, 30000, 200000])
                with open(os.path.join(self.dir, "content", f"c{c}", f"f{f}.txt"), "wb") as fh:
                    fh.write(r.randbytes(n).translate(alphabet))

    def cmd(self):
        return ["sh", os.path.join(JOBS, "git-session.sh")]


class SqliteFile(Client):
    name, program, workload, check = "sqlite-file", "sqlite3", "a database file written, vacuumed, dumped", \
        "preload-sqlite3"
    commands = ("sqlite3",)

    def before_run(self):
        try:
            os.unlink(os.path.join(self.dir, "t.db"))
        except FileNotFoundError:
            pass

    def cmd(self):
        return ["sqlite3", "t.db"]

    def stdin(self):
        return os.path.join(JOBS, "sqlite-file.sql")

    def result(self):
        try:
            with open(os.path.join(self.dir, "t.db"), "rb") as f:
                return hashlib.sha256(f.read()).hexdigest().encode()
        except FileNotFoundError:
            return b"no t.db"

    def same_output(self):
        a, error = super().same_output()
        return a, error or (a[2] and "wrote to stderr without the preload library: " + a[2].decode(errors="replace"))


class Compress(Client):
    name, program, workload, check = "compress", "gzip, xz, zstd", "round trips of 1.6 MB", "preload-compress"
    # No commands: a missing compressor fails the check (the script stops).

    def setup(self):
        super().setup()
        r = random.Random(99)
        words = [bytes(r.choice(b"etaoinshrdlu") for _ in range(r.randint(1, 12))) for _ in range(3000)]
        text = b" ".join(r.choice(words) for _ in range(100000))
        with open(os.path.join(self.dir, "data"), "wb") as f:
            f.write(text + r.randbytes(1 << 18) + bytes(1 << 18) + text[:299983])

    def cmd(self):
        return ["sh", os.path.join(JOBS, "compress.sh")]


class CPythonTests(Client):
    """CPython's own tests of the types that copy, run with uarch only: their
    output holds timings."""
    name, program, workload, check = "cpython-tests", "python3", "test_bytes, test_memoryview, ...", "cpython-tests"
    tests = ["test_bytes", "test_memoryview", "test_struct", "test_array", "test_zlib", "test_json"]

    def missing(self):
        probe = subprocess.run([PY, "-c", "import test.support, test.test_bytes"], capture_output=True) \
            if os.access(PY, os.X_OK) else None
        if probe is None or probe.returncode:
            return f"{PY} lacks the test package (Debian libpython3.X-testsuite)"
        return None

    def cmd(self):
        return [PY, "-m", "test", "-j1", "--timeout=300"] + self.tests

    def same_output(self):
        self.ctx.uarch = dict(self.ctx.uarch, HOME=self.dir)
        r = self.output("uarch", timeout=900)
        text = r[1].decode(errors="replace")
        return r, (None if r[0] == 0 and "SUCCESS" in text else
                              f"failed with uarch (exit {r[0]}): {text[-2000:]}{r[2].decode(errors='replace')[-2000:]}")


# The suite's programs, in its tables' order; QUICK: --quick's.
ALL = [PythonJson, PythonBytes, Sqlite, Redis, PgSelect, PgSort, Nginx, GitLog, GitGc, Zstd, Gzip, Node, Mariadb]
QUICK = ["python-json", "sqlite", "zstd"]
# Programs only the tests run (each class's check names its test).
CHECKED = [Ls, PythonMix, NodeMix, GitSession, SqliteFile, Compress, CPythonTests]
