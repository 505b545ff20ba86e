#!/usr/bin/env bash
# Installs what building and testing uarch needs, from Debian 12 packages,
# when it is missing. Quiet when everything is there.
set -euo pipefail

packages=(
  meson ninja-build g++ pkg-config cmake
  libcpu-features-dev googletest libgtest-dev libbenchmark-dev
  clang libclang-rt-14-dev
  qemu-user g++-aarch64-linux-gnu
  libelf-dev libcapstone-dev
  gnuplot-nox hyperfine valgrind strace binutils file gdb zlib1g-dev
  python3 libpython3.11-testsuite git sqlite3 nodejs gzip xz-utils zstd libcap2-bin
  redis-server redis-tools
)
# Extra packages other scripts ask for: scripts/deps.sh EXTRA...
packages+=("$@")

missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || missing+=("$p")
done
[ ${#missing[@]} -eq 0 ] && exit 0

echo "uarch: installing ${missing[*]}"
sudo=""
if [ "$(id -u)" -ne 0 ]; then
  command -v sudo >/dev/null || { echo "uarch: need root (or sudo) to install: ${missing[*]}" >&2; exit 2; }
  sudo=sudo
fi
export DEBIAN_FRONTEND=noninteractive
$sudo apt-get update -qq
$sudo apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
