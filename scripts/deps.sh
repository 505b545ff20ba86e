#!/usr/bin/env bash
# Installs the Debian packages a job needs, when they are missing. Quiet
# when everything is there.
#   scripts/deps.sh               build uarch and its tools, run uarch-info,
#                                 uarch-bench and the plots (scripts/quickstart.sh)
#   scripts/deps.sh --test        and what scripts/test.sh runs: GoogleTest,
#                                 clang and its sanitizer/fuzzer runtime, arm64
#                                 cross tools and qemu, valgrind, gdb, the
#                                 programs the e2e tests run under LD_PRELOAD,
#                                 and debootstrap (the Debian 13 root)
#   scripts/deps.sh --bench       and what the benchmark scripts drive: hyperfine
#                                 (bench-startup.sh), redis (bench-e2e.sh,
#                                 record-profiles.sh)
#   scripts/deps.sh [...] NAME... and these packages too
#   scripts/deps.sh --list [...]  prints the packages chosen, one a line;
#                                 installs nothing
# Names that differ between Debian releases (clang's runtime, the CPython
# test suite) are chosen from what `apt-cache policy` offers here.
set -euo pipefail

test=0 bench=0 list=0 extra=()
for a in "$@"; do
  case $a in
    --test) test=1 ;;
    --bench) bench=1 ;;
    --list) list=1 ;;
    -*) echo "deps.sh: unknown option '$a' (--test, --bench, --list)" >&2; exit 2 ;;
    *) extra+=("$a") ;;
  esac
done

# offered NAME: apt has a version of NAME to install (or installed).
offered() { apt-cache policy "$1" 2>/dev/null | grep '^ *Candidate: [^(]' >/dev/null; }

# pick NAME...: prints the first NAME that apt offers; status 1 if none.
pick() {
  local n
  for n; do offered "$n" && { echo "$n"; return 0; }; done
  return 1
}

# version_of NAME: NAME's installed version, else the one apt would
# install, without its epoch ("1:14.0-55.7~deb12u1" -> "14.0-55.7~deb12u1").
version_of() {
  apt-cache policy "$1" 2>/dev/null | awk '
    $1 == "Installed:" && $2 != "(none)" { i = $2 }
    $1 == "Candidate:" && $2 != "(none)" && c == "" { c = $2 }
    END { v = i != "" ? i : c; sub(/^[0-9]+:/, "", v); print v }'
}

sudo=""
as_root() {
  if [ "$(id -u)" -ne 0 ] && [ -z "$sudo" ]; then
    command -v sudo >/dev/null || { echo "uarch: need root (or sudo) to $1" >&2; exit 2; }
    sudo=sudo
  fi
}
export DEBIAN_FRONTEND=noninteractive
# The choices below ask apt: a machine that never ran apt-get update
# (a fresh container) knows no package it has not installed.
if [ $list = 0 ] && ! compgen -G '/var/lib/apt/lists/*_Packages*' >/dev/null; then
  as_root "read the package lists (apt-get update)"
  $sudo apt-get update -qq
  updated=1
fi

# Building; what the tools link (Google Benchmark: uarch-bench; libelf and
# capstone: uarch-audit) and draw their plots with (gnuplot).
packages=(meson ninja-build g++ pkg-config libbenchmark-dev libelf-dev libcapstone-dev gnuplot-nox)
# uarch-info's brand string and cache data (Meson finds cpu_features through
# its CMake package). Not every Debian architecture has it.
if offered libcpu-features-dev; then packages+=(libcpu-features-dev cmake); fi

if [ $test = 1 ]; then
  packages+=(googletest libgtest-dev cmake clang valgrind gdb qemu-user zlib1g-dev libcap2-bin
             python3 git sqlite3 nodejs gzip xz-utils zstd abigail-tools
             debhelper dpkg-dev build-essential lintian help2man fakeroot debootstrap)
  [ "$(uname -m)" = aarch64 ] || packages+=(g++-aarch64-linux-gnu)
  # libFuzzer and the sanitizer runtimes of the clang that `clang` runs:
  # libclang-rt-14-dev on Debian 12, libclang-rt-19-dev on Debian 13.
  clang_major=$(version_of clang); clang_major=${clang_major%%[.-]*}
  if rt=$(pick "libclang-rt-$clang_major-dev" libclang-rt-dev); then
    packages+=("$rt")
  else
    echo "uarch: no libclang-rt-$clang_major-dev here: the fuzz targets will not link" >&2
  fi
  # CPython's own tests, run under the preload library (e2e test
  # cpython-tests, which is skipped without them).
  py=$(version_of python3 | sed -n 's/^\([0-9]*\.[0-9]*\).*/\1/p')
  if suite=$(pick "libpython$py-testsuite"); then
    packages+=("$suite")
  else
    echo "uarch: no libpython$py-testsuite here: the e2e test cpython-tests will be skipped" >&2
  fi
fi
# redis-server's package starts a system daemon; the scripts start their own.
services=()
if [ $bench = 1 ]; then
  packages+=(hyperfine redis-server redis-tools)
  services+=(redis-server)
fi
packages+=("${extra[@]}")

if [ $list = 1 ]; then
  printf '%s\n' "${packages[@]}" | awk '!seen[$0]++'
  exit 0
fi

missing=()
for p in $(printf '%s\n' "${packages[@]}" | awk '!seen[$0]++'); do
  [ "$(dpkg-query -W -f='${Status}' "$p" 2>/dev/null)" = "install ok installed" ] || missing+=("$p")
done
[ ${#missing[@]} -eq 0 ] && exit 0

echo "uarch: installing ${missing[*]}"
as_root "install: ${missing[*]}"
[ "${updated:-0}" = 1 ] || $sudo apt-get update -qq
$sudo apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
for s in "${services[@]}"; do
  case " ${missing[*]} " in *" $s "*) ;; *) continue ;; esac
  if [ -d /run/systemd/system ]; then
    $sudo systemctl disable --now "$s" >/dev/null 2>&1 || true
  else
    $sudo service "$s" stop >/dev/null 2>&1 || true
    $sudo update-rc.d "$s" disable >/dev/null 2>&1 || true
  fi
  echo "uarch: stopped and disabled the $s service its package started (the scripts start their own)"
done
