#!/bin/sh
# A recorded run writes exactly what an unrecorded one does: gzip and
# sqlite3 on generated inputs, output compared byte for byte.
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
[ $fail = 0 ] && echo "gzip and sqlite3: recorded output identical"
exit $fail
