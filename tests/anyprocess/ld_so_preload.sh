#!/usr/bin/env bash
# Each library through /etc/ld.so.preload (in a private mount namespace
# over a copy of /etc, as tests/deploy): programs whose libraries' ifunc
# resolvers copy, fill and measure strings before the preloaded library is
# relocated still run and answer 42.
#   ld_so_preload.sh LIBRARY PROGRAM...
set -u
. "$(dirname "$0")/../deploy/ns.sh"
lib=$1
shift
echo "$lib" >/etc/ld.so.preload
for p in "$@"; do
  got=$("$p" 2>&1); rc=$?
  [ $rc = 0 ] && [ "$got" = 42 ] || { echo "FAIL: $p under /etc/ld.so.preload=$lib: exit $rc, '$got'"; exit 1; }
  echo "ok: $(basename "$p") under /etc/ld.so.preload=$(basename "$lib")"
done
