#!/usr/bin/env bash
# scripts/lib.sh's build_tree on a project with a syntax error: it names
# the failing step, prints the compiler's error among the last 30 lines,
# and returns non-zero (quickstart.sh and test.sh stop there, saying so).
#   failing_step.sh SOURCE_ROOT
set -u
root=$1
. "$root/scripts/lib.sh"
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
mkdir "$dir/src"
printf "project('broken', 'c')\nexecutable('broken', 'broken.c')\n" >"$dir/src/meson.build"
printf 'int main(void) { return 0 }\n' >"$dir/src/broken.c"
cd "$dir/src"
out=$(build_tree "$dir/build" 2>&1); rc=$?
printf '%s\n' "$out" | sed 's/^/  | /'
fail=0
[ $rc -ne 0 ] || { echo "FAIL: build_tree returned 0 for a broken build"; fail=1; }
printf '%s\n' "$out" | grep -q "step '$dir/build: ninja' failed" || { echo "FAIL: the failing step is not named"; fail=1; }
printf '%s\n' "$out" | grep -q "broken.c:1:.*error" || { echo "FAIL: the compiler's error is not shown"; fail=1; }
[ $fail = 0 ] && echo "a broken build names its step and shows the compiler's error"
exit $fail
