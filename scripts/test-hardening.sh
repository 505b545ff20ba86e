#!/usr/bin/env bash
# The extra build configurations of the test suite, each in its own build
# directory (results in <dir>/meson-logs/testlog.json):
#   build-asan      every suite with AddressSanitizer + UndefinedBehaviorSanitizer:
#                   the tests and tools are instrumented, the libraries never
#                   are (meson.build: lib_override), so resolvers stay freestanding
#                   and host processes need no sanitizer runtime.
#   build-hardened  every suite compiled with -fstack-protector-all
#                   -D_FORTIFY_SOURCE=3 and linked -z now, run under
#                   LD_BIND_NOW=1; its hardening suite adds static-pie programs.
# The 'heavy' and 'zoo' tests (emulated CPUs, valgrind, packaging, CPython and other
# programs under LD_PRELOAD) do not depend on these flags; they run once, in
# the plain build (scripts/test.sh), not here.
# Prints "builddir: DIR" for each build it tested (scripts/test.sh counts
# their results). Usage: scripts/test-hardening.sh [asan|hardened]...
# Exit status: 0 when every test passed in every build.
set -uo pipefail
cd "$(dirname "$0")/.."
status=0
. scripts/lib.sh

# build_and_test DIR [ENV=VALUE...] -- [MESON OPTION...]
build_and_test() {
	local dir=$1 envs=()
	shift
	while [ $# -gt 0 ] && [ "$1" != -- ]; do envs+=("$1"); shift; done
	[ $# -gt 0 ] && shift
	echo "builddir: $dir"
	build_tree "$dir" "$@" || return 1
	echo "== $dir: ${envs[*]} meson test --no-suite heavy --no-suite zoo"
	(export "${envs[@]}"; test_tree "$dir" --no-suite heavy --no-suite zoo)
}

[ $# -gt 0 ] || set -- asan hardened
for what in "$@"; do
	case $what in
	asan)
		# -O1: half the compile time of -O2 under ASan, asserts on (plain).
		# UBSan only reports by default: make every finding fail its test.
		# (Not strict_string_checks: it flags libelf's strtol on ar header
		# fields that are not NUL-terminated, a read that stays in bounds.)
		build_and_test build-asan \
			"ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:detect_stack_use_after_return=1}" \
			"UBSAN_OPTIONS=${UBSAN_OPTIONS:-halt_on_error=1:print_stacktrace=1}" \
			-- -Dbuildtype=plain -Doptimization=1 -Ddebug=true \
			-Db_sanitize=address,undefined -Db_lundef=false -Dbenchmarks=disabled -Dfuzz=false || status=1
		;;
	hardened)
		flags='-fstack-protector-all -D_FORTIFY_SOURCE=3'
		build_and_test build-hardened LD_BIND_NOW=1 \
			-- -Dbuildtype=release -Dbenchmarks=disabled -Dfuzz=false "-Dc_args=$flags" "-Dcpp_args=$flags" \
			-Dc_link_args=-Wl,-z,now -Dcpp_link_args=-Wl,-z,now || status=1
		;;
	*)
		echo "test-hardening.sh: unknown configuration '$what' (asan, hardened)" >&2
		exit 2
		;;
	esac
done
exit $status
