#!/usr/bin/env bash
# uarch-info on bad input: exactly one line on stderr and exit code 2;
# and its report of rejected tunables.
info=$1 data=$2
fail=0
. "$(dirname "$0")/../one_line_error.sh"
check() { local desc=$1; shift; expect_error "$desc" "$info" "$@"; }   # check DESCRIPTION ARGS...
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
: > "$tmp/empty"
check "unknown option" --bogus
check "missing value" --cpuid-dump
check "missing dump" --cpuid-dump "$tmp/nope"
check "empty dump" --cpuid-dump "$tmp/empty"
check "directory as dump" --cpuid-dump "$tmp"
check "bad midr" --midr 0xzz
check "dump and midr" --cpuid-dump "$data/cpuid/GenuineIntel00006F6_Conroe_CPUID.txt" --midr 0x1
check "table of nothing" --table "$tmp"

# Rejected tunables are listed with their reasons; the program runs on.
out=$(UARCH_TUNABLES='memcpy=nosuch:rep_movsb_threshold=12x:garbage:memset=baseline' "$info" --json) || { echo "FAIL json run"; fail=1; }
for want in '"entry": "memcpy=nosuch", "reason": "unknown variant"' \
            '"entry": "rep_movsb_threshold=12x", "reason": "bad value"' \
            '"entry": "garbage", "reason": "no '"'"'='"'"' in entry"' \
            '"applied": ["memset=baseline"]' '"memset": "baseline"'; do
  if printf '%s' "$out" | grep -qF "$want"; then echo "ok   json has $want"; else echo "FAIL json lacks $want"; fail=1; fi
done

# The library's bindings (uarch_impl) are the policy's answer, with and
# without tunables.
for t in '' 'memcpy=baseline:memset=gpr:smp_mb=mfence'; do
  UARCH_TUNABLES=$t "$info" --json | python3 -c '
import json, sys
r = json.load(sys.stdin)
sys.exit(0 if r["impl"] == r["policy"] else 1)' && echo "ok   impl == policy ($t)" || { echo "FAIL impl != policy ($t)"; fail=1; }
done
exit $fail
