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

# redis-server under redis-benchmark on 127.0.0.1 (16 B and 1 KiB values),
# stopped by SHUTDOWN so that it exits normally and writes its profile.
if [ -z "${*:-}" ] && command -v redis-server >/dev/null && command -v redis-benchmark >/dev/null; then
  port=6401
  echo "== redis-server under redis-benchmark" >&2
  "$prof" -o "$out/redis-server.uprof" -- redis-server --port $port --bind 127.0.0.1 --save '' \
    --appendonly no --logfile /dev/null &
  for _ in $(seq 50); do redis-cli -p $port ping >/dev/null 2>&1 && break; sleep 0.1; done
  redis-benchmark -p $port -q -n 50000 -c 8 -P 16 -d 16 -t set,get >/dev/null 2>&1
  redis-benchmark -p $port -q -n 20000 -c 8 -P 16 -d 1024 -t set,get >/dev/null 2>&1
  redis-cli -p $port shutdown nosave >/dev/null 2>&1 || true
  wait
fi
