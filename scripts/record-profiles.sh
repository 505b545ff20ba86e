#!/usr/bin/env bash
# Records a profile of each real program of the end-to-end suite (the
# registry, scripts/e2e/programs.py: the same generated inputs, a server
# started, loaded and its client run once) with uarch-prof, into
# tests/data/profiles/NAME.uprof. Installs the programs' packages when root.
#   scripts/record-profiles.sh [BUILD_DIR] [NAME,...]
# The ten committed profiles were recorded at d70b0dc by that commit's
# scripts/workloads.sh (CPython's test_json and test_bytes, a buffer
# pipeline, sqlite3, git, gzip, zstd, node, redis-server); the replays
# and figures that cite them are of those files.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${1:-$root/build}
exec /usr/bin/python3 "$root/scripts/e2e/suite.py" "$build" ${2:+--programs "$2"} \
  --record-profiles "$root/tests/data/profiles"
