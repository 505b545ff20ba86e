#!/usr/bin/env bash
# ring-bench on bad input: exactly one line on stderr and exit code 2.
# Usage: bad_input.sh [EMULATOR...] RING-BENCH
bench=("$@")
fail=0
. "$(dirname "$0")/../../tests/one_line_error.sh"
expect_error "unknown argument" "${bench[@]}" --bogus
expect_error "missing value" "${bench[@]}" --size
expect_error "bad mode" "${bench[@]}" --mode sideways
expect_error "bad combos" "${bench[@]}" --combos some
expect_error "bad pause list" "${bench[@]}" --pause-us 5,x
expect_error "empty pause list" "${bench[@]}" --pause-us ''
expect_error "bad cpus" "${bench[@]}" --cpus 1
expect_error "zero rounds" "${bench[@]}" --rounds 0
exit $fail
