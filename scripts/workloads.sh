# The real programs that uarch-prof records (scripts/record-profiles.sh).
# Source it, then: workloads_prepare DIR; workload_cmd NAME (prints a shell
# command to run in DIR, its output on stdout). All inputs are generated,
# the same bytes every time.

workload_names="python-json python-bytes python-buffers sqlite git-log git-gc gzip zstd node"

workloads_prepare() {
  local w=$1
  mkdir -p "$w"
  # 16 MiB of compressible, varied text: numbers, words and repeats.
  [ -f "$w/input.txt" ] || python3 - "$w/input.txt" <<'PY'
import random, sys
r = random.Random(15)
words = [''.join(r.choice('abcdefghijklmnopqrstuvwxyz') for _ in range(r.randint(2, 10))) for _ in range(2000)]
out, size = [], 0
while size < 16 << 20:
    line = ' '.join(r.choice(words) for _ in range(r.randint(3, 14))) + f' {r.randint(0, 10**6)}\n'
    out.append(line); size += len(line)
open(sys.argv[1], 'w').write(''.join(out))
PY
  # sqlite: build a 200k-row table with an index, then query it.
  cat > "$w/sqlite.sql" <<'SQL'
PRAGMA journal_mode=OFF;
PRAGMA synchronous=OFF;
DROP TABLE IF EXISTS t;
CREATE TABLE t(id INTEGER PRIMARY KEY, name TEXT, grp INTEGER, payload BLOB);
WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c WHERE x < 200000)
INSERT INTO t SELECT x, printf('name-%08d-%s', x, substr('abcdefghijklmnopqrstuvwxyz', x % 26 + 1)),
                     x % 97, zeroblob(x % 300) FROM c;
CREATE INDEX t_grp ON t(grp, name);
SELECT grp, count(*), sum(length(payload)), max(name) FROM t GROUP BY grp ORDER BY grp LIMIT 20;
SELECT count(*) FROM t WHERE name LIKE 'name-0001%';
SELECT name FROM t WHERE grp = 42 ORDER BY name DESC LIMIT 5;
SQL
  # git: 300 commits touching 40 files, deterministic dates and names.
  if [ ! -d "$w/repo/.git" ]; then
    git init -q "$w/repo"
    python3 - "$w/repo" <<'PY'
import os, random, subprocess, sys
repo = sys.argv[1]
r = random.Random(15)
env = dict(os.environ, GIT_AUTHOR_NAME='a', GIT_AUTHOR_EMAIL='a@example.org', GIT_COMMITTER_NAME='a',
           GIT_COMMITTER_EMAIL='a@example.org')
files = {f'src/f{i:02d}.txt': [f'line {j} of file {i}\n' for j in range(200)] for i in range(40)}
os.makedirs(os.path.join(repo, 'src'), exist_ok=True)
for c in range(300):
    for name in r.sample(sorted(files), 4):
        lines = files[name]
        for _ in range(r.randint(1, 8)):
            lines[r.randrange(len(lines))] = f'commit {c} changed {r.random():.6f}\n'
        open(os.path.join(repo, name), 'w').write(''.join(lines))
    env['GIT_AUTHOR_DATE'] = env['GIT_COMMITTER_DATE'] = f'{1700000000 + c * 60} +0000'
    subprocess.run(['git', '-C', repo, 'add', '-A'], check=True, env=env)
    subprocess.run(['git', '-C', repo, '-c', 'commit.gpgsign=false', 'commit', '-q', '-m', f'change {c}'], check=True, env=env)
PY
  fi
  # A buffer pipeline: 32 MiB messages copied between stages (bytes,
  # bytearray, slices, concatenation), each into a fresh object.
  cat > "$w/buffers.py" <<'PY'
b = bytes(range(256)) * (1 << 17)
for _ in range(60):
    x = bytearray(b)
    y = bytes(x[1:])
    b = y + b[:1]
print(len(b), b[:4].hex(), b[-4:].hex())
PY
  cat > "$w/node.js" <<'JS'
// JSON, Buffers and strings: what a small service does with its messages.
const items = [];
for (let i = 0; i < 20000; i++) items.push({id: i, name: 'item-' + i, tags: ['a', 'b', String(i % 7)], v: i * 1.5});
let total = 0;
for (let r = 0; r < 10; r++) {
  const s = JSON.stringify(items);
  total += JSON.parse(s).length;
  const bufs = [];
  for (let i = 0; i < 2000; i++) bufs.push(Buffer.from(s.slice(i * 50, i * 50 + 50 + (i % 300))));
  const all = Buffer.concat(bufs);
  total += all.length + all.toString('base64').length;
}
console.log(total);
JS
}

# The command for NAME, run in the prepared directory. CPython is the
# system's (/usr/bin/python3, Debian's), not whatever python3 PATH finds first.
workload_cmd() {
  case $1 in
    python-json) echo "/usr/bin/python3 -m test -q test_json" ;;
    python-bytes) echo "/usr/bin/python3 -m test -q test_bytes" ;;
    python-buffers) echo "/usr/bin/python3 buffers.py" ;;
    sqlite) echo "sqlite3 db.sqlite .read\ sqlite.sql" ;;
    git-log) echo "git -C repo log -p" ;;
    git-gc) echo "git -C repo gc -q" ;;
    gzip) echo "gzip -6 -c input.txt" ;;
    zstd) echo "zstd -q -3 -c input.txt" ;;
    node) echo "node node.js" ;;
    *) return 1 ;;
  esac
}
