#!/usr/bin/env bash
# Runs every test: the native build (ifunc binding; with the 'heavy' suite:
# valgrind, emulated x86 CPUs, real programs under the preload library), the
# function-pointer binding, a clang build, arm64 under qemu, and the hardening builds
# (sanitizers; stack protector, fortify, bind-now, static-pie), the Debian
# packages, and all of it again on Debian 13 in a fresh root. Ends with
# "N passed, N failed, N skipped"; a failing step names itself with its
# last 30 lines.
set -uo pipefail
cd "$(dirname "$0")/.."
root=$PWD
test_started=$SECONDS

bash scripts/deps.sh --test || { echo "uarch: step 'install packages (scripts/deps.sh --test)' failed"; echo "0 passed, 1 failed"; exit 1; }

builds=()
setup_failures=0

. scripts/lib.sh

# setup_and_test DIR "MESON OPTIONS" [meson test args...]
setup_and_test() {
  local dir=$1 opts=$2
  shift 2
  builds+=("$dir")
  build_tree "$dir" $opts || { setup_failures=$((setup_failures + 1)); return; }
  echo "== $dir: meson test $*"
  test_tree "$dir" "$@" || true
}

setup_and_test build "-Dbinding=auto -Dtests=true"
# The other binding: every suite that goes through the exported entry points.
# The libFuzzer targets (tunables parser, ELF reader) run in the first tree
# only: what they explore does not depend on the binding or the build flags.
setup_and_test build-fnptr "-Dbinding=fnptr -Dfuzz=false" --suite core --suite mem --suite e2e --suite idle --suite sync --no-suite heavy
# The library built by clang (its builtins differ from gcc's: clang 14
# refused __atomic_* on an enum that gcc 12 took). Not the e2e suite: its
# fortify programs need gcc's _chk calls (clang's headers fortify no mempcpy).
CC=clang CXX=clang++ setup_and_test build-clang "-Dbinding=auto -Dfuzz=false" --suite core --suite mem --suite idle --suite sync --no-suite heavy

if [ -x scripts/test-aarch64.sh ]; then
  builds+=(build-aarch64)
  bash scripts/test-aarch64.sh || true
  [ -f build-aarch64/meson-logs/testlog.json ] || setup_failures=$((setup_failures + 1))
fi
if [ -x scripts/test-hardening.sh ]; then
  # It prints the build dirs it used, one per line, prefixed "builddir: ".
  while IFS= read -r line; do
    case $line in
      builddir:\ *) builds+=("${line#builddir: }") ;;
      *) echo "$line" ;;
    esac
  done < <(bash scripts/test-hardening.sh)
fi

# The Debian packages: built from a copy of this tree, lintian, unpacked
# into a scratch root and run from there (a meson-style log of its own).
if [ -x scripts/test-deb.sh ]; then
  builds+=(build-deb)
  echo "== build-deb: scripts/test-deb.sh"
  mkdir -p build-deb/meson-logs
  bash scripts/test-deb.sh "$root/build-deb/work" 2>&1 | tee build-deb.log | grep -v '^ok '
  # Its checks, one line each, as entries of a test log like meson's.
  python3 - build-deb.log build-deb/meson-logs/testlog.json <<'PY'
import json, sys
rows = []
for line in open(sys.argv[1]):
    if line.startswith("ok "):
        rows.append({"name": line[3:].strip(), "result": "OK"})
    elif line.startswith("FAIL"):
        rows.append({"name": line[4:].strip(), "result": "FAIL"})
    elif line.startswith("skipped:"):
        rows.append({"name": "test-deb", "result": "SKIP"})
if not rows:
    rows.append({"name": "test-deb: no check ran", "result": "FAIL"})
with open(sys.argv[2], "w") as f:
    f.writelines(json.dumps(r) + "\n" for r in rows)
PY
fi

# Debian 13 (GCC 14, clang 19, glibc 2.41) in a fresh root: the quickstart,
# the core, mem, sandbox and e2e suites, and the packages. Skipped by name,
# with the reason, only where no Debian root can be made here.
if [ -x scripts/test-debian13.sh ]; then
  builds+=(build-debian13)
  echo "== build-debian13: scripts/test-debian13.sh (a fresh Debian 13 root)"
  started=$SECONDS
  bash scripts/test-debian13.sh build-debian13
  echo "== build-debian13: $((SECONDS - started)) s"
fi

echo "== test.sh: $((SECONDS - test_started)) s in all"
python3 - "$setup_failures" "${builds[@]}" <<'PY'
import json, os, sys
failures = int(sys.argv[1])
passed = failed = skipped = 0
for d in sys.argv[2:]:
    log = os.path.join(d, "meson-logs", "testlog.json")
    if not os.path.exists(log):
        print(f"{d}: no test log (its build failed)")
        failed += 1
        continue
    p = f = s = 0
    for line in open(log):
        r = json.loads(line).get("result")
        if r in ("OK", "EXPECTEDFAIL"): p += 1
        elif r == "SKIP": s += 1
        else: f += 1
    print(f"{d}: {p} passed, {f} failed, {s} skipped")
    passed += p; failed += f; skipped += s
failed += failures
print(f"{passed} passed, {failed} failed, {skipped} skipped")
sys.exit(1 if failed else 0)
PY
