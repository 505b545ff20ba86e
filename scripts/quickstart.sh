#!/usr/bin/env bash
# The main job: install what is missing, build, show what uarch sees and
# binds on this CPU, and a short side-by-side benchmark against the C library.
# A step that fails is named, with its last 30 lines.
set -euo pipefail
cd "$(dirname "$0")/.."
trap 'rc=$?; echo "quickstart.sh: failed (exit $rc) at line $LINENO: $BASH_COMMAND" >&2; exit $rc' ERR
. scripts/lib.sh

step "install packages (scripts/deps.sh)" build.deps.log bash scripts/deps.sh
# A new tree without the test suites: they need the packages of
# `scripts/deps.sh --test`. A tree that has them keeps them.
if [ -f build/build.ninja ]; then
  build_tree build
else
  build_tree build -Dtests=false
fi

echo "== uarch-info"
build/tools/info/uarch-info

bench=build/tools/bench/uarch-bench
if [ -x "$bench" ]; then
  echo; echo "== uarch-bench mem --quick (ratio = C library time / uarch time; > 1: uarch faster)"
  "$bench" mem --quick
  echo; echo "== uarch-bench sync --quick"
  "$bench" sync --quick
  echo; echo "== uarch-bench idle --quick"
  "$bench" idle --quick
fi
if [ -x build/examples/ring/ring-bench ]; then
  echo; echo "== ring-bench --quick"
  build/examples/ring/ring-bench --quick
fi
