# Shared by the test scripts (source it): build one tree, test one tree.

# build_tree DIR [MESON OPTION...]: meson setup (or --reconfigure) and ninja,
# logs in DIR.setup.log and DIR.build.log. Clears DIR's previous test log
# first, so a failed build leaves none to be counted. On failure prints why
# and returns 1.
build_tree() {
  local dir=$1
  shift
  rm -f "$dir/meson-logs/testlog.json"
  if [ -f "$dir/build.ninja" ]; then
    meson setup --reconfigure "$dir" "$@" >"$dir.setup.log" 2>&1
  else
    meson setup "$dir" "$@" >"$dir.setup.log" 2>&1
  fi || { echo "== $dir: meson setup failed (see $dir.setup.log)"; tail -20 "$dir.setup.log"; return 1; }
  ninja -C "$dir" -j "${UARCH_JOBS:-$(nproc 2>/dev/null || echo 2)}" >"$dir.build.log" 2>&1 ||
    { echo "== $dir: build failed (see $dir.build.log)"; grep -E 'error|FAILED' "$dir.build.log" | head -20; return 1; }
}

# test_tree DIR [MESON TEST ARG...]: meson test without the lines of tests
# that passed; returns meson test's exit status.
test_tree() {
  local dir=$1
  shift
  meson test -C "$dir" --no-rebuild --print-errorlogs --num-processes "${UARCH_JOBS:-$(nproc 2>/dev/null || echo 2)}" "$@" |
    grep -vE '^ *[0-9]+/[0-9]+ .* OK +[0-9.]+s$'
  return "${PIPESTATUS[0]}"
}
