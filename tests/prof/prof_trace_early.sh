#!/usr/bin/env bash
# The recorder traces the main thread's calls even when a library's
# constructor copied before the recorder's constructor set the trace up.
# Usage: prof_trace_early.sh UARCH_PROF PROGRAM
set -uo pipefail
prof=$1 prog=$2
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
"$prof" -o "$out/run.uprof" --trace 10000 -- "$prog" >"$out/stdout" 2>"$out/stderr" ||
  { echo "FAIL: uarch-prof exited $?: $(tail -1 "$out/stderr")"; exit 1; }
grep -q "copied by a constructor" "$out/stdout" || { echo "FAIL: the program's output is missing"; exit 1; }
line=$(grep "trace: .* calls recorded" "$out/stderr")
echo "$line"
n=$(sed -n 's/.*trace: \([0-9]*\) of .*/\1/p' <<<"$line")
[ "${n:-0}" -ge 100 ] || { echo "FAIL: ${n:-no} calls traced, want at least the program's 100"; exit 1; }
echo "ok: the program's calls after an early constructor's copy are traced"
