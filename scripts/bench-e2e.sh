#!/usr/bin/env bash
# End to end: the CPU time real programs spend without and with
# LD_PRELOAD=libuarch_preload.so, each on about 0.4 s of generated work
# (scripts/e2e/programs.py): CPython (JSON; byte slices), sqlite3,
# redis-server under redis-benchmark, PostgreSQL (pgbench -S; COPY and sort),
# nginx under wrk, git (log -p; gc), zstd, gzip, node, MariaDB. A server is
# measured, not its client: its process tree's CPU time (own cgroup), the
# server pinned to one CPU and the client to another.
#   scripts/bench-e2e.sh [BUILD_DIR] [--quick] [--pairs N] [--programs A,B]
#                        [--precision P [--max-pairs N]] [--scale F] [--seed N]
#                        [--out DIR] [--no-install] [--no-trace] [--control] [--list]
#   scripts/bench-e2e.sh --debian 12|13 [--out DIR] [the options above]
# 30 pairs per program (one run without and one with, order drawn within
# the pair; a server started again every 5 pairs); prints per program the
# median ratio "time without / time with" (> 1: faster with uarch) with a
# bootstrap 95% interval (a server's: of its blocks of 5), and the ratio
# uarch-bench mem --trace predicts where this build has --trace.
# --precision 0.02: after those pairs, 10 more at a time until the interval
# is within +-2% of the median, or --max-pairs (default 150) ran. Writes
# e2e.csv (the C library's version in every row), e2e-pairs.csv, e2e.png and
# the replayed traces (traces/NAME.utrace; a server's also NAME.base.utrace,
# the run taken off) to BUILD_DIR/e2e (--out). Installs the Debian packages
# it needs when root (--no-install: skips those programs).
# --debian N: inside a Debian N root (scripts/debian-root.sh, kept in
# /var/cache/uarch/roots/bench-debianN with the programs installed), against
# that release's programs and C library, with uarch built there; results
# in --out (default build/e2e-debianN).
# --quick: 3 programs, 5 pairs, a quarter of the work: checks that it runs.
# --control: an empty library preloaded in place of uarch (built with cc),
# into e2e-control.csv: how far this machine moves a ratio by itself.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)

release="" out="" rest=()
while [ $# -gt 0 ]; do
  case $1 in
    --debian) [ $# -ge 2 ] || { echo "bench-e2e: --debian needs 12 or 13" >&2; exit 2; }
              release=$2; shift 2 ;;
    --debian=*) release=${1#--debian=}; shift ;;
    --out) [ $# -ge 2 ] || { echo "bench-e2e: --out needs a directory" >&2; exit 2; }
           out=$2; shift 2 ;;
    *) rest+=("$1"); shift ;;
  esac
done
if [ -z "$release" ]; then
  exec /usr/bin/python3 "$root/scripts/e2e/suite.py" ${out:+--out "$out"} "${rest[@]}"
fi
case $release in 12|13) ;; *) echo "bench-e2e: --debian $release: not 12 or 13" >&2; exit 2 ;; esac
value=""   # the last word was an option that takes a value (the next word)
for a in "${rest[@]}"; do
  case $value$a in
    --pairs|--programs|--precision|--max-pairs|--scale|--seed|--record-profiles) value=@ ;;
    -*|@*) value="" ;;
    *) echo "bench-e2e: give no BUILD_DIR with --debian (uarch is built inside the root)" >&2; exit 2 ;;
  esac
done
out=$(mkdir -p "${out:-$root/build/e2e-debian$release}" && cd "${out:-$root/build/e2e-debian$release}" && pwd)
build=build-debian$release
inside='bash scripts/deps.sh >/dev/null && . scripts/lib.sh && build_tree '$build' -Dtests=false &&
  exec scripts/bench-e2e.sh '$build' --out "$0" "$@"'
exec "$root/scripts/debian-root.sh" --release "$release" --keep "/var/cache/uarch/roots/bench-debian$release" \
  --bind "$out" -- bash -c "$inside" "$out" "${rest[@]}"
