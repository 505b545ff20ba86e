#!/bin/sh
# A recorded run writes exactly what an unrecorded one does: gzip, zstd,
# sqlite3, git log -p, CPython and node (the programs whose profiles are
# committed) on generated inputs, output compared byte for byte.
# usage: prof_identical.sh UARCH_PROF RECORD_LIB
set -eu
prof=$(cd "$(dirname "$1")" && pwd)/$(basename "$1")
UARCH_RECORD_LIB=$(cd "$(dirname "$2")" && pwd)/$(basename "$2")
export UARCH_RECORD_LIB
for p in gzip sqlite3; do
  command -v $p >/dev/null || { echo "SKIP: $p not installed"; exit 77; }
done
d=$(mktemp -d)
trap 'rm -rf "$d"' EXIT
cd "$d"
seq 1 300000 | sed 's/$/ some text to compress/' > input.txt
cat > q.sql <<'SQL'
CREATE TABLE t(id INTEGER PRIMARY KEY, name TEXT, grp INTEGER);
WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c WHERE x < 50000)
INSERT INTO t SELECT x, printf('name-%08d', x), x % 13 FROM c;
CREATE INDEX t_grp ON t(grp);
SELECT grp, count(*), max(name) FROM t GROUP BY grp;
SELECT name FROM t WHERE grp = 5 ORDER BY name DESC LIMIT 3;
SQL
fail=0
gzip -6 -c input.txt > plain.gz
"$prof" -o gzip.uprof -- gzip -6 -c input.txt > rec.gz
cmp plain.gz rec.gz || { echo "FAIL: gzip output differs when recorded"; fail=1; }
sqlite3 plain.db < q.sql > plain.out
"$prof" -o sqlite.uprof -- sqlite3 rec.db < q.sql > rec.out
cmp plain.out rec.out || { echo "FAIL: sqlite3 output differs when recorded"; fail=1; }
cmp plain.db rec.db || { echo "FAIL: sqlite3 database differs when recorded"; fail=1; }
# The recording saw the programs' calls.
for f in gzip sqlite; do
  "$prof" report --json $f.uprof | python3 -c 'import json,sys; j=json.load(sys.stdin); sys.exit(0 if j["ops"]["memcpy"]["calls"] > 0 else 1)' \
    || { echo "FAIL: $f profile has no memcpy calls"; fail=1; }
done
checked="gzip sqlite3"
# same NAME CMD...: CMD's stdout with and without recording.
same() {
  name=$1; shift
  "$@" > plain.$name 2>/dev/null || { echo "FAIL: $name failed"; fail=1; return; }
  "$prof" -o $name.uprof -- "$@" > rec.$name 2>/dev/null || { echo "FAIL: $name failed when recorded"; fail=1; return; }
  cmp plain.$name rec.$name || { echo "FAIL: $name output differs when recorded"; fail=1; return; }
  checked="$checked $name"
}
if command -v zstd >/dev/null; then same zstd zstd -q -3 -c input.txt; else echo "skipped by name: zstd (not installed)"; fi
if command -v git >/dev/null; then
  git init -q repo
  for c in $(seq 1 20); do
    seq $c 3 2000 > repo/f.txt
    git -C repo add f.txt
    GIT_AUTHOR_DATE="1700000000 +0000" GIT_COMMITTER_DATE="1700000000 +0000" \
      git -C repo -c user.name=a -c user.email=a@example.org -c commit.gpgsign=false commit -q -m "change $c"
  done
  same git-log git -C repo log -p
else
  echo "skipped by name: git (not installed)"
fi
cat > py.py <<'PY'
import json, random
r = random.Random(15)
doc = [{"id": i, "name": "item-%d" % i, "tags": [r.random() for _ in range(i % 7)]} for i in range(20000)]
s = json.dumps(doc, sort_keys=True)
b = bytearray(s.encode()) * 4
print(len(s), hash(bytes(b[1:])) == hash(bytes(b)[1:]), json.loads(s)[12345]["name"], sum(b[::4097]))
PY
same python3 python3 py.py
if command -v node >/dev/null; then
  echo 'let s = JSON.stringify([...Array(20000).keys()].map(i => ({i, n: "n" + i}))); console.log(s.length, Buffer.concat([Buffer.from(s), Buffer.from(s.slice(3))]).toString("base64").length)' > n.js
  same node node n.js
else
  echo "skipped by name: node (not installed)"
fi
[ $fail = 0 ] && echo "recorded output identical: $checked"
exit $fail
