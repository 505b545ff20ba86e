#!/usr/bin/env bash
# End to end: the wall time of the real programs of scripts/workloads.sh
# without and with LD_PRELOAD=libuarch_preload.so (hyperfine, in rounds that
# alternate the two, all runs pooled), and redis-server throughput under
# redis-benchmark on 127.0.0.1 (server preloaded or not, alternating).
#   scripts/bench-e2e.sh [BUILD_DIR]     env: ROUNDS (5), RUNS (per round, 3),
#                                        WORKLOADS (names), REDIS_REQUESTS (200000)
# Prints one table; "ratio" = time without / time with (> 1: faster with uarch),
# pooled over all runs and, "paired", within each round (its median and
# quartiles over the rounds: drift in the machine's load between rounds
# cancels; ROUNDS=15 RUNS=1 pairs run by run).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=$(cd "${1:-$root/build}" && pwd)
. "$root/scripts/workloads.sh"
lib=$build/libuarch_preload.so
[ -f "$lib" ] || { echo "bench-e2e: $lib not built" >&2; exit 2; }
command -v hyperfine >/dev/null || { echo "bench-e2e: hyperfine not installed (scripts/deps.sh)" >&2; exit 2; }
rounds=${ROUNDS:-5} runs=${RUNS:-3}
work=${UARCH_WORK:-/tmp/uarch-workloads}
workloads_prepare "$work"
res=$(mktemp -d)
trap 'rm -rf "$res"' EXIT

cpu=$(sed -n 's/^model name[^:]*: //p' /proc/cpuinfo | head -1)
echo "bench-e2e on $cpu, $(nproc) CPUs, load average $(cut -d' ' -f1-3 /proc/loadavg); $rounds rounds x $runs runs"
for n in ${WORKLOADS:-$workload_names}; do
  cmd=$(workload_cmd "$n")
  for r in $(seq "$rounds"); do
    # Alternate which side runs first from round to round.
    if [ $((r % 2)) = 1 ]; then order="plain uarch"; else order="uarch plain"; fi
    args=()
    for side in $order; do
      if [ $side = plain ]; then args+=(-n plain "$cmd > /dev/null")
      else args+=(-n uarch "LD_PRELOAD=$lib $cmd > /dev/null"); fi
    done
    (cd "$work" && hyperfine -w 1 -r "$runs" --export-json "$res/$n.$r.json" "${args[@]}" >/dev/null 2>&1) ||
      echo "bench-e2e: $n failed in round $r" >&2
  done
done

redis_rows=""
if command -v redis-server >/dev/null && command -v redis-benchmark >/dev/null && [ "${REDIS:-1}" = 1 ]; then
  port=6399
  for r in $(seq "$rounds"); do
    if [ $((r % 2)) = 1 ]; then order="plain uarch"; else order="uarch plain"; fi
    for side in $order; do
      pre=""; [ $side = uarch ] && pre=$lib
      LD_PRELOAD=$pre redis-server --port $port --bind 127.0.0.1 --save '' --appendonly no \
        --daemonize no --logfile /dev/null > /dev/null 2>&1 &
      spid=$!
      for _ in $(seq 50); do redis-cli -p $port ping >/dev/null 2>&1 && break; sleep 0.1; done
      for d in 16 1024 16384; do
        redis-benchmark -h 127.0.0.1 -p $port -q -n "${REDIS_REQUESTS:-200000}" -c 8 -P 16 -d $d -t set,get --csv 2>/dev/null |
          sed -n 's/^"\([A-Z]*\)","\([0-9.]*\)".*/\1 \2/p' | while read -r t rps; do echo "$side $t-$d $rps $r"; done >> "$res/redis.txt"
      done
      kill "$spid"; wait "$spid" 2>/dev/null || true
    done
  done
fi

python3 - "$res" ${WORKLOADS:-$workload_names} <<'PY'
import glob, json, statistics, sys
res, names = sys.argv[1], sys.argv[2:]
def spread(xs):
    q = statistics.quantiles(xs, n=4) if len(xs) >= 4 else [min(xs), 0, max(xs)]
    return (q[2] - q[0]) / statistics.median(xs) * 100
# wall: every run's wall time; cpu: each round's mean user + system time
# (hyperfine reports CPU time per round, not per run), which other load on
# a shared machine disturbs less than wall time.
def paired(rs):
    if not rs:
        return "-"
    q = statistics.quantiles(rs, n=4) if len(rs) >= 4 else [min(rs), 0, max(rs)]
    return f"{statistics.median(rs):.3f} ({q[0]:.3f}-{q[2]:.3f})"
print(f"{'program':<22} {'runs':>5} {'plain s':>9} {'+-IQR%':>7} {'uarch s':>9} {'+-IQR%':>7} {'ratio':>7} {'cpu ratio':>10}  paired (quartiles)")
for n in names:
    t = {"plain": [], "uarch": []}
    c = {"plain": [], "uarch": []}
    rr = []   # per round: mean time without / mean time with
    for f in glob.glob(f"{res}/{n}.*.json"):
        m = {}
        for r in json.load(open(f))["results"]:
            t[r["command"]] += r["times"]
            c[r["command"]].append(r["user"] + r["system"])
            m[r["command"]] = statistics.mean(r["times"])
        if len(m) == 2:
            rr.append(m["plain"] / m["uarch"])
    if not t["plain"] or not t["uarch"]:
        print(f"{n:<22} failed"); continue
    mp, mu = statistics.median(t["plain"]), statistics.median(t["uarch"])
    cr = statistics.median(c["plain"]) / statistics.median(c["uarch"])
    print(f"{n:<22} {len(t['plain']):>5} {mp:>9.4f} {spread(t['plain']):>6.1f}% {mu:>9.4f} {spread(t['uarch']):>6.1f}% {mp / mu:>7.3f} {cr:>10.3f}  {paired(rr)}")
print("ratio = median wall time without / with (> 1: faster with uarch); cpu ratio: the same for user+system time;")
print("paired: the ratio within each round, median (quartiles) over the rounds")
try:
    rows = [l.split() for l in open(f"{res}/redis.txt")]   # side test requests/s round
except OSError:
    rows = []
if rows:
    print(f"\n{'redis (requests/s)':<22} {'runs':>5} {'plain':>11} {'+-IQR%':>7} {'uarch':>11} {'+-IQR%':>7} {'ratio':>7}  paired (quartiles)")
    for test in sorted({r[1] for r in rows}, key=lambda s: (int(s.split('-')[1]), s)):
        p = [float(r[2]) for r in rows if r[1] == test and r[0] == "plain"]
        u = [float(r[2]) for r in rows if r[1] == test and r[0] == "uarch"]
        if p and u:
            mp, mu = statistics.median(p), statistics.median(u)
            byround = {}
            for r in rows:
                if r[1] == test:
                    byround.setdefault(r[3], {})[r[0]] = float(r[2])
            rr = [x["uarch"] / x["plain"] for x in byround.values() if len(x) == 2]
            print(f"{test:<22} {len(p):>5} {mp:>11.0f} {spread(p):>6.1f}% {mu:>11.0f} {spread(u):>6.1f}% {mu / mp:>7.3f}  {paired(rr)}")
    print("redis ratio = requests/s with / without (> 1: faster with uarch); SET/GET-N: N-byte values, 8 clients, pipeline 16")
PY
