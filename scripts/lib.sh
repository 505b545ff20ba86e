# Shared by the scripts (source it): run a step and say why it failed,
# build one tree, test one tree.

# step NAME LOG COMMAND...: runs COMMAND with its output in LOG; when it
# fails, names the step, prints LOG's last 30 lines and returns its status.
step() {
  local name=$1 log=$2 rc=0
  shift 2
  "$@" >"$log" 2>&1 || rc=$?
  if [ $rc -ne 0 ]; then
    echo "uarch: step '$name' failed (exit $rc: $*); its last 30 lines (all in $log):" >&2
    tail -n 30 "$log" >&2
  fi
  return $rc
}

# build_tree DIR [MESON OPTION...]: meson setup (or --reconfigure) and ninja,
# logs in DIR.setup.log and DIR.build.log. Clears DIR's previous test log
# first, so a failed build leaves none to be counted. On failure names the
# step, prints its last 30 lines and returns 1.
build_tree() {
  local dir=$1
  shift
  rm -f "$dir/meson-logs/testlog.json"
  local reconf=()
  [ -f "$dir/build.ninja" ] && reconf=(--reconfigure)
  step "$dir: meson setup" "$dir.setup.log" meson setup "${reconf[@]}" "$dir" "$@" 2>&1 || return 1
  step "$dir: ninja" "$dir.build.log" ninja -C "$dir" -j "${UARCH_JOBS:-$(nproc 2>/dev/null || echo 2)}" 2>&1 || return 1
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
