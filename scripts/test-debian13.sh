#!/usr/bin/env bash
# The tests on Debian 13 (GCC 14, clang 19, glibc 2.41), in a fresh root
# made by scripts/debian-root.sh: the quickstart as a new user runs it, the
# core, mem, sandbox, e2e and zoo suites built by gcc, the core and mem suites
# built by clang, and the package build (scripts/test-deb.sh). Writes a
# meson-style test log, each test's name prefixed "debian13/", to
# OUT/meson-logs/testlog.json (default OUT: build-debian13), and one SKIP
# entry, with the reason printed, where no Debian root can be made here.
#   scripts/test-debian13.sh [OUT]
set -uo pipefail
cd "$(dirname "$0")/.."
out=$(mkdir -p "${1:-build-debian13}" && cd "${1:-build-debian13}" && pwd)
rm -rf "$out/meson-logs" "$out/inside"
mkdir -p "$out/meson-logs" "$out/inside"
log=$out/meson-logs/testlog.json

# Inside the root: each step one line in inside/steps.txt ("ok NAME" or
# "FAIL NAME"), each meson test log copied out.
inside='
set -u
o='"$out"'/inside
. scripts/lib.sh
record() { if [ "$1" = 0 ]; then echo "ok $2"; else echo "FAIL $2"; fi >>"$o/steps.txt"; }
step "quickstart.sh" "$o/quickstart.log" bash scripts/quickstart.sh; record $? "quickstart.sh (install, build, uarch-info, uarch-bench --quick)"
grep -q "^== uarch-info" "$o/quickstart.log" && grep -q "geometric mean ratio" "$o/quickstart.log"; record $? "quickstart.sh shows uarch-info and the benchmark summary"
step "deps.sh --test" "$o/deps.log" bash scripts/deps.sh --test; record $? "deps.sh --test installs the test packages"
if build_tree build -Dtests=true -Dfuzz=false; then
  record 0 "gcc $(gcc -dumpfullversion): build with tests"
  test_tree build --suite core --suite mem --suite sandbox --suite e2e --suite zoo --no-suite heavy >"$o/gcc-tests.log" 2>&1
  cp build/meson-logs/testlog.json "$o/gcc.json"
else
  record 1 "gcc $(gcc -dumpfullversion): build with tests"
fi
if CC=clang CXX=clang++ build_tree build-clang -Dtests=true -Dfuzz=false; then
  record 0 "clang $(clang -dumpversion): build with tests"
  test_tree build-clang --suite core --suite mem --no-suite heavy >"$o/clang-tests.log" 2>&1
  cp build-clang/meson-logs/testlog.json "$o/clang.json"
else
  record 1 "clang $(clang -dumpversion): build with tests"
fi
bash scripts/test-deb.sh /tmp/deb >"$o/deb.log" 2>&1
# The packages installed as a user installs them (this root is new), then
# used from /usr.
if ls /tmp/deb/*.deb >/dev/null 2>&1; then
  step "apt-get install the packages" "$o/install.log" apt-get install -y -q /tmp/deb/*.deb; record $? "apt-get install libuarch0 libuarch-dev uarch-tools"
  step "uarch-info" "$o/installed.log" uarch-info; record $? "installed uarch-info runs"
  out=$(uarch-run uarch-info 2>&1); echo "$out" >>"$o/installed.log"
  echo "$out" | grep -q "libuarch_preload.so, symbols"; record $? "installed uarch-run preloads libuarch_preload.so.0 (uarch-info: symbols)"
  m=$(dpkg-architecture -qDEB_HOST_MULTIARCH)
  out=$(LD_PRELOAD=/usr/lib/$m/libuarch_preload.so.0 python3 -c "print(bytes(range(256)) * 4096 == bytes(bytearray(bytes(range(256)) * 4096)))" 2>&1)
  [ "$out" = True ]; record $? "the installed preload library under python3 ($out)"
  out=$(uarch-run --compare --pairs 5 --json -- python3 -c "x = bytes(1 << 20)
for i in range(2000): y = x[i:]" 2>&1); echo "$out" >>"$o/installed.log"
  echo "$out" | python3 -c "import json, sys; r = json.load(sys.stdin); sys.exit(not (r[\"pairs\"] == 5 and r[\"ci_low\"] <= r[\"median_ratio\"] <= r[\"ci_high\"] and r[\"libc\"].startswith(\"glibc 2.4\")))"
  record $? "installed uarch-run --compare (python3 slices, glibc 2.41)"
fi
exit 0
'
rc=0
scripts/debian-root.sh --release 13 --bind "$out" -- bash -c "$inside" >"$out/root.log" 2>&1 || rc=$?
if [ $rc = 77 ]; then
  reason=$(grep 'debian-root.sh:' "$out/root.log" | tail -1)
  echo "== build-debian13: skipped: $reason"
  printf '{"name": "debian13: %s", "result": "SKIP"}\n' "${reason//\"/\'}" >"$log"
  exit 0
fi

python3 - "$out" "$rc" <<'PY'
import json, os, sys
out, rc = sys.argv[1], int(sys.argv[2])
inside = os.path.join(out, "inside")
rows = []
def add(name, result):
    rows.append({"name": "debian13/" + name, "result": result})
steps = os.path.join(inside, "steps.txt")
if os.path.exists(steps):
    for line in open(steps):
        ok, _, name = line.strip().partition(" ")
        add(name, "OK" if ok == "ok" else "FAIL")
else:
    add(f"the root ran nothing (exit {rc}; see {out}/root.log)", "FAIL")
for tree in ("gcc", "clang"):
    p = os.path.join(inside, tree + ".json")
    if os.path.exists(p):
        for line in open(p):
            r = json.loads(line)
            add(f"{tree}/{r.get('name')}", r.get("result"))
deb = os.path.join(inside, "deb.log")
if os.path.exists(deb):
    for line in open(deb):
        if line.startswith("ok "): add("deb/" + line[3:].strip(), "OK")
        elif line.startswith("FAIL"): add("deb/" + line[4:].strip(), "FAIL")
        elif line.startswith("skipped:"): add("deb: " + line.strip(), "SKIP")
with open(os.path.join(out, "meson-logs", "testlog.json"), "w") as f:
    f.writelines(json.dumps(r) + "\n" for r in rows)
bad = [r["name"] for r in rows if r["result"] not in ("OK", "SKIP", "EXPECTEDFAIL")]
n = sum(r["result"] == "OK" for r in rows)
print(f"== build-debian13: {n} passed, {len(bad)} failed (logs in {inside})")
for b in bad:
    print(f"   FAIL {b}")
PY
for f in quickstart gcc-tests clang-tests deb; do
  [ -f "$out/inside/$f.log" ] && grep -qE '^FAIL|failed|FAIL ' "$out/inside/$f.log" &&
    { echo "-- $f.log, last 30 lines:"; tail -30 "$out/inside/$f.log"; }
done
exit 0
