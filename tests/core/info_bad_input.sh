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
check "negative midr" --midr -1
check "midr after a blank" --midr " 41"
check "midr above 32 bits" --midr 0x100000000
check "empty midr" --midr ""
check "empty dump name" --cpuid-dump ""
check "empty table dir" --table ""
check "table with json" --table "$data" --json
check "profile with a dump" --cpuid-dump "$data/cpuid/GenuineIntel00006F6_Conroe_CPUID.txt" --profile "$tmp/empty"
expect_error "stdout on a full disk" bash -c '"$0" >/dev/full' "$info"
expect_error "json to a full disk" bash -c '"$0" --json >/dev/full' "$info"
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

# --tunables on this machine's report is UARCH_TUNABLES, in its place.
a=$(UARCH_TUNABLES=memset=generic "$info" --json --tunables 'memcpy=generic') || { echo "FAIL --tunables run"; fail=1; }
b=$(UARCH_TUNABLES='memcpy=generic' "$info" --json)
if [ "$a" = "$b" ] && printf '%s' "$a" | grep -qF '"memcpy": "generic"'; then echo "ok   --tunables as UARCH_TUNABLES"
else echo "FAIL --tunables differs from UARCH_TUNABLES"; fail=1; fi

# Only the option's own value is dropped when the report runs again.
a=$("$info" --profile --tunables --tunables memcpy=generic)
if printf '%s' "$a" | grep -q '^profile  *--tunables: absent' && printf '%s' "$a" | grep -qE '^  memcpy +generic'; then
  echo "ok   --tunables dropped alone"; else echo "FAIL --tunables took another option's value: $a"; fail=1; fi
# Where the report cannot run again (no /proc: a tmpfs over it, in a user
# and mount namespace), it shows the policy with the option's tunables.
lib=$(dirname "$(readlink -f "$info")")/../..
no_proc() { LD_LIBRARY_PATH=$lib unshare -r -m sh -c 'mount -t tmpfs none /proc && exec "$@"' sh "$(readlink -f "$info")" "$@"; }
if ! unshare -r -m true 2>/dev/null; then
  echo "skip --tunables without /proc: no user namespaces here"
elif ! no_proc --help >/dev/null 2>&1; then
  echo "skip --tunables without /proc: uarch-info does not run without /proc here (a sanitizer runtime)"
else
  a=$(no_proc --json --tunables memcpy=generic | python3 -c 'import json, sys; r = json.load(sys.stdin); print(r["impl"]["memcpy"], r["policy"]["memcpy"])')
  if [ "$a" = "generic generic" ]; then echo "ok   --tunables without /proc: the policy's"
  else echo "FAIL --tunables without /proc: [$a]"; fail=1; fi
fi

# The library's bindings (uarch_impl) are the policy's answer, with and
# without tunables.
for t in '' 'memcpy=baseline:memset=gpr:smp_mb=mfence'; do
  UARCH_TUNABLES=$t "$info" --json | python3 -c '
import json, sys
r = json.load(sys.stdin)
sys.exit(0 if r["impl"] == r["policy"] else 1)' && echo "ok   impl == policy ($t)" || { echo "FAIL impl != policy ($t)"; fail=1; }
done
# Per-program sections: --as NAME shows what NAME gets and which section
# applied; a bad section line is refused and listed like a bad entry.
check "--as with a path" --as /usr/bin/x
check "--as with a dump" --cpuid-dump "$data/cpuid/GenuineIntel00006F6_Conroe_CPUID.txt" --as x
check "--as without a name" --as
printf 'memset=generic\n[mariadbd]\nmemcpy=generic\n[two words]\nmemmove=generic\n' > "$tmp/sections"
a=$("$info" --profile "$tmp/sections" --as mariadbd --json | python3 -c '
import json, sys
r = json.load(sys.stdin)
print(r["profile"]["section"], r["policy"]["memcpy"], r["policy"]["memset"], r["policy"]["memmove"] != "generic")')
if [ "$a" = "mariadbd generic generic True" ]; then echo "ok   --as mariadbd: its section and the global entries"
else echo "FAIL --as mariadbd: [$a]"; fail=1; fi
a=$("$info" --profile "$tmp/sections" --as redis-server)
if printf '%s' "$a" | grep -qE '^  memset +generic' && ! printf '%s' "$a" | grep -qE '^  memcpy +generic' &&
   printf '%s' "$a" | grep -q '^profile .*: applied$' && printf '%s' "$a" | grep -q 'rejected  \[two words\]'; then
  echo "ok   --as redis-server: the global entries alone; the bad section line rejected"
else echo "FAIL --as redis-server:"; printf '%s\n' "$a"; fail=1; fi
exit $fail
