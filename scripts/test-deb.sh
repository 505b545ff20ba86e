#!/usr/bin/env bash
# Builds the Debian packages from the working tree (tracked files and new
# ones git does not ignore) in a scratch directory, runs lintian on them
# (errors fail), unpacks them into a scratch root and checks what they
# hold there: SONAMEs, no stack protector in the libraries, uarch-info
# binding through libuarch.so.0 and through LD_PRELOAD=libuarch_preload.so.0,
# the paths uarch-run and uarch-prof name, and the manual pages.
# One line per check; exit 1 on a failure, 77 when the build cannot run here.
# Usage: scripts/test-deb.sh [SCRATCH_DIR]   (default: a new temporary one)
# Needs: dpkg-dev debhelper lintian help2man fakeroot and the build
# dependencies of debian/control (dpkg-checkbuilddeps -Pnocheck lists them).
set -uo pipefail

top=$(cd "$(dirname "$0")/.." && pwd)
skip() { echo "skipped: $*"; exit 77; }
for t in dpkg-buildpackage dpkg-checkbuilddeps dh lintian help2man; do
  command -v $t >/dev/null || skip "$t is not installed (packages dpkg-dev, debhelper, lintian, help2man)"
done

fail=0
check() {   # check DESCRIPTION COMMAND...: ok or FAIL, one line
  local desc=$1; shift
  if "$@"; then echo "ok   $desc"; else echo "FAIL $desc"; fail=1; fi
}

work=${1:-$(mktemp -d /tmp/uarch-deb.XXXXXX)}
mkdir -p "$work"
src=$work/uarch
rm -rf "$src" "$work"/*.deb "$work"/*.changes "$work"/*.buildinfo "$work/root"
mkdir -p "$src"
# The work in progress, not HEAD: tracked files as they are now and new
# files git does not ignore (deleted ones left out). A tree without git
# (a copy, as scripts/debian-root.sh makes): every file but build trees.
if git -C "$top" rev-parse --git-dir >/dev/null 2>&1; then
  (cd "$top" && git ls-files -co --exclude-standard -z |
    while IFS= read -r -d '' f; do [ -e "$f" ] && printf '%s\0' "$f"; done |
    tar --null -T - -cf -)
else
  (cd "$top" && tar --exclude='./build*' --exclude='./subprojects/packagecache' -cf - .)
fi | tar -xf - -C "$src" || { echo "FAIL copying the tree to $src"; exit 1; }

cd "$src"
missing=$(dpkg-checkbuilddeps -Pnocheck 2>&1) || skip "${missing#dpkg-checkbuilddeps: error: }"
arch=$(dpkg-architecture -qDEB_HOST_ARCH)
triplet=$(dpkg-architecture -qDEB_HOST_MULTIARCH)
grep -q "^Architecture:.*\b$arch\b" debian/control || skip "the packages are not built for $arch"

log=$work/build.log
DEB_BUILD_OPTIONS="nocheck ${DEB_BUILD_OPTIONS:-parallel=$(nproc)}" \
  dpkg-buildpackage -us -uc -b >"$log" 2>&1
rc=$?
check "dpkg-buildpackage -us -uc -b (log: $log)" test $rc -eq 0
[ $rc -eq 0 ] || { tail -30 "$log"; exit 1; }
changes=$(ls "$work"/uarch_*_"$arch".changes)
debs=$(ls "$work"/*.deb)
echo "     built: $(cd "$work" && echo *.deb)"

lint=$(lintian --fail-on error --tag-display-limit 0 "$changes" 2>&1)
rc=$?
printf '%s\n' "$lint" | grep -E '^[EW]:' | sed 's/^/     lintian: /'
check "lintian: no errors ($(printf '%s\n' "$lint" | grep -c '^W:') warnings)" test $rc -eq 0

root=$work/root
for d in $debs; do dpkg -x "$d" "$root"; done
lib=$root/usr/lib/$triplet
soname() { readelf -dW "$1" 2>/dev/null | sed -n 's/.*(SONAME).*\[\(.*\)\]/\1/p'; }
for l in libuarch.so.0 libuarch_preload.so.0 libuarch_record.so.0; do
  check "$l: SONAME $(soname "$lib/$l")" test "$(soname "$lib/$l")" = "$l"
done
check "libuarch-dev: libuarch.so -> libuarch.so.0, libuarch.a, uarch.pc, CMake files" \
  test "$(readlink "$lib/libuarch.so")" = libuarch.so.0 -a -f "$lib/libuarch.a" \
  -a -f "$lib/pkgconfig/uarch.pc" -a -f "$lib/cmake/uarch/uarchConfig.cmake" \
  -a -f "$root/usr/include/uarch.h"
check "no unversioned link to the preload or recorder library" \
  test ! -e "$lib/libuarch_preload.so" -a ! -e "$lib/libuarch_record.so"
# The libraries' code may run in an ifunc resolver before the canary exists.
for l in "$lib/libuarch.so.0" "$lib/libuarch_preload.so.0" "$lib/libuarch_record.so.0" "$lib/libuarch.a"; do
  refs=$(nm "$l" 2>/dev/null | grep -c '__stack_chk_fail')
  check "$(basename "$l"): no reference to __stack_chk_fail" test "$refs" -eq 0
done

bin=$root/usr/bin
for t in "$bin"/uarch-*; do
  n=$(basename "$t")
  check "$n: manual page" test -s "$root/usr/share/man/man1/$n.1.gz"
done

info=$(LD_LIBRARY_PATH=$lib "$bin/uarch-info" 2>&1)
entry=$(printf '%s\n' "$info" | sed -n 's/^ *entry *//p')
check "uarch-info: entry '$entry'" grep -q '^libuarch\.so, ' <<<"$entry"
info=$(LD_LIBRARY_PATH=$lib LD_PRELOAD=$lib/libuarch_preload.so.0 "$bin/uarch-info" 2>&1)
entry=$(printf '%s\n' "$info" | sed -n 's/^ *entry *//p')
# uarch-info names the binding uarch_preload_binding() reports.
check "LD_PRELOAD=libuarch_preload.so.0 uarch-info: entry '$entry'" \
  grep -Eq '^libuarch_preload\.so, (symbols|pointer) ' <<<"$entry"
bound=$(LD_DEBUG=bindings LD_PRELOAD=$lib/libuarch_preload.so.0 /bin/ls / 2>&1 >/dev/null |
  sed -n "s/.*binding file \/bin\/ls \[0\] to \([^ ]*\) \[0\]: normal symbol \`memcpy'.*/\1/p" | head -1)
check "LD_PRELOAD=libuarch_preload.so.0 ls: memcpy bound to ${bound:-nothing}" \
  test "$bound" = "$lib/libuarch_preload.so.0"

want=/usr/lib/$triplet/libuarch_preload.so.0
named=$(sed -n "s/^lib='\(.*\)'$/\1/p" "$bin/uarch-run")
check "uarch-run preloads $named (in libuarch0)" test "$named" = "$want" -a -f "$root$want"
# The script as installed, pointed at the scratch root's library.
sed "s|^lib=.*|lib='$root$want'|" "$bin/uarch-run" >"$work/uarch-run"
got=$(LD_PRELOAD=$lib/libuarch.so.0 sh "$work/uarch-run" sh -c 'printf %s "$LD_PRELOAD"')
check "uarch-run appends to LD_PRELOAD: $got" test "$got" = "$lib/libuarch.so.0:$root$want"
entry=$(LD_LIBRARY_PATH=$lib sh "$work/uarch-run" "$bin/uarch-info" 2>&1 | sed -n 's/^ *entry *//p')
check "uarch-run uarch-info: entry '$entry'" grep -Eq '^libuarch_preload\.so, (symbols|pointer) ' <<<"$entry"
# --compare from the packaged files: its Python files in uarch-tools.
pydir=$(sed -n "s/^pydir='\(.*\)'$/\1/p" "$bin/uarch-run")
check "uarch-run's measuring ($pydir/compare.py) is in uarch-tools" test -f "$root$pydir/compare.py"
sed "s|^lib=.*|lib='$root$want'|; s|^pydir=.*|pydir='$root$pydir'|" "$bin/uarch-run" >"$work/uarch-run"
out=$(LD_LIBRARY_PATH=$lib UARCH_RUN_INFO=$bin/uarch-info sh "$work/uarch-run" --compare --pairs 5 --json -- \
  sh -c 'i=0; while [ $i -lt 20000 ]; do i=$((i+1)); done' 2>&1)
check "uarch-run --compare from the package: a median and its interval" python3 -c '
import json, sys
r = json.loads(sys.argv[1])
sys.exit(not (r["pairs"] == 5 and r["ci_low"] <= r["median_ratio"] <= r["ci_high"]))' "$out"

rec=$(strings "$bin/uarch-prof" | grep -m1 '^/usr/.*/libuarch_record\.so')
check "uarch-prof loads $rec (in uarch-tools)" test -f "$root$rec"
out=$work/prof.uprof
UARCH_RECORD_LIB=$lib/libuarch_record.so.0 "$bin/uarch-prof" -o "$out" -- /bin/ls / >/dev/null 2>&1
rc=$?
check "uarch-prof -- ls with the packaged recorder: exit $rc, profile written" test $rc -eq 0 -a -s "$out"

exit $fail
