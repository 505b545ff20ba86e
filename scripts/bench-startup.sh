#!/bin/sh
# Process start-up cost of LD_PRELOAD=libuarch_preload.so: /bin/true started
# with and without the library (and with LD_BIND_NOW=1), measured with
# hyperfine (Debian package hyperfine), no shell in between; prints the
# medians and the difference. Goal: under 0.2 ms.
# Usage: scripts/bench-startup.sh [path/to/libuarch_preload.so] [runs]
set -eu
cd "$(dirname "$0")/.."
lib=$(realpath "${1:-build/libuarch_preload.so}")
runs=${2:-1000}
prog=${UARCH_BENCH_PROG:-/bin/true}
command -v hyperfine >/dev/null || { echo "bench-startup.sh: needs hyperfine (apt-get install hyperfine)" >&2; exit 2; }
[ -f "$lib" ] || { echo "bench-startup.sh: no $lib (build first: ninja -C build)" >&2; exit 2; }
out=$(mktemp)
trap 'rm -f "$out"' EXIT
# env -i in every command: the same exec chain and an empty environment,
# so the only difference is the library.
hyperfine -N --style basic --warmup 100 --runs "$runs" --export-json "$out" \
	-n without "env -i $prog" \
	-n preload "env -i LD_PRELOAD=$lib $prog" \
	-n preload+bind-now "env -i LD_PRELOAD=$lib LD_BIND_NOW=1 $prog" >/dev/null
python3 - "$out" "$prog" <<'PY'
import json, sys
r = {x["command"]: x for x in json.load(open(sys.argv[1]))["results"]}
base = r["without"]
def ms(x): return x * 1000
print(f"process start-up of {sys.argv[2]} ({len(base['times'])} runs each, medians):")
for name in ("without", "preload", "preload+bind-now"):
    x = r[name]
    print(f"  {name:17s} {ms(x['median']):7.3f} ms  (mean {ms(x['mean']):.3f} +- {ms(x['stddev']):.3f})")
for name in ("preload", "preload+bind-now"):
    d = ms(r[name]["median"] - base["median"])
    cpu = ms(r[name]["user"] + r[name]["system"] - base["user"] - base["system"])
    print(f"  cost of {name:17s} {d:+.3f} ms wall (median), {cpu:+.3f} ms CPU (user+sys, mean)"
          f"{'  goal < 0.2 ms: met' if d < 0.2 else '  goal < 0.2 ms: NOT met'}")
PY
