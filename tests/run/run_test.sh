#!/usr/bin/env bash
# uarch-run: appends the preload library to LD_PRELOAD (what was there stays
# first), the program finds uarch bound, --tunables reaches it, arguments
# and exit statuses pass through unchanged, bad usage exits 2 with one line.
# Usage: run_test.sh UARCH_RUN PROBE OTHER_LIB PRELOAD_LIB
set -u
run=$1 probe=$2 other=$3 lib=$4
here=$(dirname "$0")
fail=0
. "$here/../one_line_error.sh"

check() {   # check DESCRIPTION CONDITION...
	local desc=$1; shift
	if "$@"; then echo "ok   $desc"; else echo "FAIL $desc"; fail=1; fi
}
has() { printf '%s\n' "$out" | grep -qxF -- "$1"; }

unset LD_PRELOAD UARCH_TUNABLES
out=$("$run" "$probe" 0 'two words' '' 2>&1)
echo "$out" | sed 's/^/  | /'
b=$(printf '%s\n' "$out" | sed -n 's/^binding //p')
check "binding is found (uarch_preload_binding: $b)" test "$b" = symbols -o "$b" = pointer
check "memcpy is served by the preload library" has "memcpy from $(basename "$lib")"
check "arguments pass through unchanged" has "args [0] [two words] []"

out=$(LD_PRELOAD=$other "$run" "$probe" 0 2>&1)
objs=$(printf '%s\n' "$out" | sed -n 's/^object //p' | tr '\n' ' ')
check "appended to an existing LD_PRELOAD: $objs" test "$objs" = "$(basename "$other") $(basename "$lib") "
env_now=$(LD_PRELOAD=$other "$run" sh -c 'printf %s "$LD_PRELOAD"')
check "LD_PRELOAD=$env_now" test "$env_now" = "$other:$lib"

out=$("$run" --tunables memcpy=generic "$probe" 2>&1)
check "--tunables memcpy=generic: memcpy bound to generic" has "memcpy generic"
out=$("$run" --tunables=memcpy=generic -- "$probe" 2>&1)
check "--tunables=memcpy=generic --: memcpy bound to generic" has "memcpy generic"
t=$("$run" --tunables memcpy=generic sh -c 'printf %s "$UARCH_TUNABLES"')
check "UARCH_TUNABLES=$t" test "$t" = memcpy=generic

for want in 0 3 255; do
	"$run" "$probe" $want >/dev/null 2>&1; rc=$?
	check "exit status $want passes through (got $rc)" test $rc -eq $want
done
"$run" sh -c 'kill -TERM $$'; rc=$?
check "death by SIGTERM passes through (got $rc)" test $rc -eq 143

"$run" --help >/dev/null; rc=$?
check "--help exits 0" test $rc -eq 0
expect_error "no program" "$run"
expect_error "unknown option" "$run" --bogus "$probe"
expect_error "--tunables without a value" "$run" --tunables
expect_error "--tunables and no program" "$run" --tunables memcpy=generic
err=$("$run" ./no-such-program 2>&1); rc=$?
check "a missing program exits 127 with one line (got $rc: $err)" test $rc -eq 127 -a "$(printf '%s\n' "$err" | wc -l)" -eq 1

exit $fail
