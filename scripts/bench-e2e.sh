#!/usr/bin/env bash
# End to end: the CPU time real programs spend without and with
# LD_PRELOAD=libuarch_preload.so, each on about 0.4 s of generated work
# (scripts/e2e/programs.py): CPython (JSON; byte slices), sqlite3,
# redis-server under redis-benchmark, PostgreSQL (pgbench -S; COPY and sort),
# nginx under wrk, git (log -p; gc), zstd, gzip, node, MariaDB. A server is
# measured, not its client: its process tree's CPU time (own cgroup), the
# server pinned to one CPU and the client to another.
#   scripts/bench-e2e.sh [BUILD_DIR] [--quick] [--pairs N] [--programs A,B]
#                        [--scale F] [--seed N] [--out DIR] [--no-install]
#                        [--no-trace] [--list]
# 30 pairs per program (one run without and one with, order drawn within
# the pair); prints per program the median ratio "time without / time with"
# (> 1: faster with uarch) with a bootstrap 95% interval, and the ratio
# uarch-bench mem --trace predicts where this build has --trace; writes
# e2e.csv, e2e-pairs.csv and e2e.png to BUILD_DIR/e2e (--out). Installs the
# Debian packages it needs when root (--no-install: skips those programs).
# --quick: 3 programs, 5 pairs, a quarter of the work: checks that it runs.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
exec /usr/bin/python3 "$root/scripts/e2e/suite.py" "$@"
