#!/usr/bin/env bash
# Records the committed profiles under tests/data/profiles/ with uarch-prof:
# the programs of scripts/workloads.sh on generated inputs.
#   scripts/record-profiles.sh [BUILD_DIR] [NAME...]
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=$(cd "${1:-$root/build}" && pwd); shift || true
. "$root/scripts/workloads.sh"
prof=$build/tools/prof/uarch-prof
[ -x "$prof" ] || { echo "record-profiles: $prof not built" >&2; exit 2; }
out=$root/tests/data/profiles
work=${UARCH_WORK:-/tmp/uarch-workloads}
mkdir -p "$out"
workloads_prepare "$work"
names=${*:-$workload_names}
for n in $names; do
  cmd=$(workload_cmd "$n") || { echo "record-profiles: unknown workload $n" >&2; exit 2; }
  [ "$n" = sqlite ] && rm -f "$work/db.sqlite"
  echo "== $n: $cmd" >&2
  (cd "$work" && eval "\"$prof\" -o \"$out/$n.uprof\" -- $cmd") > /dev/null
done
