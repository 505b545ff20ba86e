#!/usr/bin/env bash
# scripts/deps.sh chooses the names that differ between Debian releases
# from what `apt-cache policy` offers: here a fake apt-cache answers from
# canned files, one a release (debian12.policy, debian13.policy), and the
# lists printed by `deps.sh --list` are checked against each.
#   deps_choice.sh DEPS_SH CANNED_DIR
set -uo pipefail
deps=$1 canned=$2
fail=0
bad() { echo "FAIL: $*"; fail=1; }

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
mkdir "$tmp/bin"
# apt-cache policy NAME...: each NAME's stanza of $CANNED, nothing for a
# name the release lacks (as apt-cache does).
cat > "$tmp/bin/apt-cache" <<'EOF'
#!/bin/sh
[ "$1" = policy ] || { echo "fake apt-cache: only 'policy'" >&2; exit 100; }
shift
for n; do awk -v n="$n" '/^#/ { next } /^[^ ]/ { on = ($0 == n ":") } on' "$CANNED"; done
EOF
# --list must neither install nor update anything.
for t in apt-get dpkg-query sudo; do
  printf '#!/bin/sh\necho "fake %s called: $*" >&2\nexit 1\n' "$t" > "$tmp/bin/$t"
done
chmod +x "$tmp/bin"/*

# list CANNED_FILE ARG...: deps.sh --list ARG... against CANNED_FILE,
# its stderr in $tmp/err.
list() {
  local c=$1
  shift
  CANNED=$c PATH="$tmp/bin:$PATH" bash "$deps" --list "$@" 2>"$tmp/err"
}
has() { grep -qx -- "$2" <<<"$1"; }

# offered_all CANNED_FILE NAME...: every NAME has a candidate there.
offered_all() {
  local c=$1 n
  shift
  for n; do
    CANNED=$c "$tmp/bin/apt-cache" policy "$n" | grep -q '^  Candidate: [^(]' ||
      bad "$(basename "$c"): deps.sh asks for $n, which that release does not offer"
  done
}

for release in debian12 debian13; do
  c=$canned/$release.policy
  case $release in
    debian12) want="libclang-rt-14-dev libpython3.11-testsuite" not="libclang-rt-19-dev libpython3.13-testsuite" ;;
    debian13) want="libclang-rt-19-dev libpython3.13-testsuite" not="libclang-rt-14-dev libclang-rt-18-dev libpython3.11-testsuite" ;;
  esac
  out=$(list "$c" --test --bench) || bad "$release: deps.sh --list --test --bench failed: $(cat "$tmp/err")"
  [ -s "$tmp/err" ] && bad "$release: deps.sh printed: $(cat "$tmp/err")"
  for p in $want; do has "$out" "$p" || bad "$release: $p not chosen"; done
  for p in $not; do has "$out" "$p" && bad "$release: $p chosen"; done
  offered_all "$c" $out
  echo "$release: $(wc -l <<<"$out") packages for --test --bench, runtimes: $(grep -E '^lib(clang-rt|python3)' <<<"$out" | tr '\n' ' ')"

  # The main job's list: build tools and what uarch and its tools link
  # and draw with; nothing only the tests or the benchmarks use.
  main=$(list "$c") || bad "$release: deps.sh --list failed: $(cat "$tmp/err")"
  for p in meson ninja-build g++ pkg-config libbenchmark-dev gnuplot-nox libcpu-features-dev; do
    has "$main" "$p" || bad "$release: the main list lacks $p"
  done
  for p in googletest clang valgrind qemu-user nodejs redis-server hyperfine; do
    has "$main" "$p" && bad "$release: the main list has $p"
  done
  has "$(list "$c" --bench)" redis-server || bad "$release: --bench lacks redis-server"
  has "$(list "$c" --test)" redis-server && bad "$release: --test has redis-server"
  has "$(list "$c" extra-name)" extra-name || bad "$release: deps.sh EXTRA... lost its extra name"
  echo "$release: $(wc -l <<<"$main") packages for the main job"
done

# A Debian 12 machine upgraded to 13 that kept clang 14 as `clang`: the
# runtime follows the installed clang, not the newer candidate.
awk '/^clang:$/ { c = 1 } c && /Installed:/ { sub(/\(none\)/, "1:14.0-55.7~deb12u1"); c = 0 } { print }' \
  "$canned/debian13.policy" > "$tmp/upgraded.policy"
printf 'libclang-rt-14-dev:\n  Installed: 1:14.0.6-12\n  Candidate: 1:14.0.6-12\n' >> "$tmp/upgraded.policy"
out=$(list "$tmp/upgraded.policy" --test)
has "$out" libclang-rt-14-dev || bad "upgraded: clang 14 installed, libclang-rt-14-dev not chosen"
has "$out" libclang-rt-19-dev && bad "upgraded: clang 14 installed, libclang-rt-19-dev chosen"

# A python3 whose test suite the release lacks: left out, said by name, not fatal.
sed 's/3\.13\.5-1/3.14.0-1/' "$canned/debian13.policy" > "$tmp/py314.policy"
out=$(list "$tmp/py314.policy" --test) || bad "py314: deps.sh --list --test failed"
grep -q testsuite <<<"$out" && bad "py314: a test suite package chosen: $(grep testsuite <<<"$out")"
grep -q 'no libpython3.14-testsuite here: the e2e test cpython-tests will be skipped' "$tmp/err" ||
  bad "py314: no note naming libpython3.14-testsuite: $(cat "$tmp/err")"

[ $fail = 0 ] && echo "deps.sh chooses per release: ok"
exit $fail
