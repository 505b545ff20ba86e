#!/usr/bin/env bash
# libuarch.so's ABI against the committed baseline (abi/libuarch.so.0.abi):
# a removed or changed symbol or type fails; an addition passes, and the
# baseline is then regenerated with --update. First checks that the
# comparison itself catches a removed function (two small libraries).
# Usage: abi_check.sh LIBRARY BASELINE [--update]. Exit 77 when
# abigail-tools is missing (scripts/deps.sh --test installs it).
set -uo pipefail
lib=$1 baseline=$2
command -v abidw >/dev/null && command -v abidiff >/dev/null ||
  { echo "skipped: abidw/abidiff not found (Debian's abigail-tools)"; exit 77; }
if [ "${3:-}" = --update ]; then
  abidw --no-corpus-path --no-comp-dir-path --out-file "$baseline" "$lib" && echo "wrote $baseline"
  exit
fi
readelf -V --wide "$lib" | grep -q 'Name: UARCH_0' || { echo "FAIL: $lib has no version node UARCH_0"; exit 1; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
# The check's own check: a library that lost a function must fail it.
printf 'int uarch_a(int x) { return x; }\nint uarch_b(int x) { return x + 1; }\n' >"$tmp/v1.c"
printf 'int uarch_a(int x) { return x; }\n' >"$tmp/v2.c"
for v in v1 v2; do
  cc -g -shared -fPIC -o "$tmp/$v.so" "$tmp/$v.c" || { echo "FAIL: cannot build the self-check libraries"; exit 1; }
done
abidiff --no-added-syms "$tmp/v1.so" "$tmp/v2.so" >/dev/null
[ $? -ne 0 ] || { echo "FAIL: abidiff did not report a removed function"; exit 1; }
echo "ok: abidiff reports a removed function"
abidiff --no-added-syms "$baseline" "$lib" >"$tmp/report"
rc=$?
if [ $rc -ne 0 ]; then
  cat "$tmp/report"
  echo "FAIL: libuarch.so's ABI differs from $baseline (abidiff exit $rc); after an addition, regenerate it with: $0 $lib $baseline --update"
  exit 1
fi
echo "ok: $(readelf --dyn-syms --wide "$lib" | grep -c '@@UARCH_0') symbols at UARCH_0, nothing removed or changed against $(basename "$baseline")"
