#!/usr/bin/env bash
# Runs scripts/bench-e2e.sh --quick against BUILD_DIR and checks what it
# prints, not speed: a line per program with its median ratio and a
# [low, high] interval, low <= median <= high, and e2e.csv with the same rows;
# then --control with --precision out of reach: e2e-control.csv, its
# header line, and the pairs run to --max-pairs.
# Exit 0: passed, 1: failed, 77: skipped (why, by name).
#   scripts/e2e/smoke.sh BUILD_DIR
set -uo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
build=${1:?usage: smoke.sh BUILD_DIR}
compgen -G "$build/libuarch_preload.so*" >/dev/null || { echo "skipped: $build/libuarch_preload.so not built"; exit 77; }
for c in /usr/bin/python3 sqlite3 zstd; do
  command -v "$c" >/dev/null || { echo "skipped: $c not installed"; exit 77; }
done
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
"$root/scripts/bench-e2e.sh" "$build" --quick --no-install --no-trace --out "$out" > "$out/stdout" 2> "$out/stderr"
rc=$?
cat "$out/stdout"
[ $rc = 0 ] || { echo "FAIL: bench-e2e.sh --quick exited $rc: $(tail -1 "$out/stderr")"; exit 1; }
/usr/bin/python3 - "$out" <<'PY'
import csv, re, sys
out = sys.argv[1]
text = open(f"{out}/stdout").read()
want = {"python3": "python-json", "sqlite3": "sqlite", "zstd": "zstd"}
bad = []
for program in want:
    m = re.search(rf"^{re.escape(program)} .* (\d+) +\S+ s +\S+ s +(\d+\.\d+)  \[(\d+\.\d+), (\d+\.\d+)\]", text, re.M)
    if not m:
        bad.append(f"no line with a median and [low, high] for {program}")
        continue
    pairs, med, lo, hi = int(m.group(1)), *map(float, m.group(2, 3, 4))
    if pairs != 5 or not (0 < lo <= med <= hi):
        bad.append(f"{program}: {pairs} pairs, median {med} in [{lo}, {hi}]")
rows = {r["name"]: r for r in csv.DictReader(open(f"{out}/e2e.csv"))}
for program, name in want.items():
    r = rows.get(name)
    if not r or r["status"] != "ok" or not r["cpu"] or r["program"] != program:
        bad.append(f"e2e.csv: no ok row for {name}")
    elif not float(r["ci_low"]) <= float(r["median_ratio"]) <= float(r["ci_high"]):
        bad.append(f"e2e.csv: {name} median outside its interval")
for b in bad:
    print("FAIL: " + b)
print(f"{len(want) - len(bad) if len(bad) <= len(want) else 0} of {len(want)} programs with a median and interval")
sys.exit(1 if bad else 0)
PY
[ $? = 0 ] || exit 1
"$root/scripts/bench-e2e.sh" "$build" --quick --control --programs zstd --precision 0.000001 --max-pairs 15 \
  --no-install --out "$out/control" > "$out/control.stdout" 2> "$out/control.stderr" \
  || { echo "FAIL: bench-e2e.sh --control exited $?: $(tail -1 "$out/control.stderr")"; exit 1; }
/usr/bin/python3 - "$out/control" <<'PY'
import csv, os, sys
out = sys.argv[1]
bad = []
if "control: an empty library preloaded in place of uarch" not in open(out + ".stdout").read():
    bad.append("--control: no line saying what was preloaded")
if os.path.exists(f"{out}/e2e.csv"):
    bad.append("--control wrote e2e.csv, where uarch's rows go")
rows = list(csv.DictReader(open(f"{out}/e2e-control.csv"))) if os.path.exists(f"{out}/e2e-control.csv") else []
if [(r["name"], r["status"], r["pairs"]) for r in rows] != [("zstd", "ok", "15")]:
    bad.append(f"e2e-control.csv: {[(r['name'], r['status'], r['pairs']) for r in rows]}, not zstd ok with "
               "the 15 pairs --max-pairs allows")
for b in bad:
    print("FAIL: " + b)
print(f"--control, --precision: {'failed' if bad else 'ok'}")
sys.exit(1 if bad else 0)
PY
