#!/usr/bin/env bash
# Builds the arm64 tree with Debian's cross compiler and runs every suite
# under qemu-aarch64 (qemu-user): meson's exe_wrapper in
# cross/aarch64-linux-gnu.ini starts each test program in the emulator.
#   scripts/test-aarch64.sh [meson test args...]   e.g. --suite arm64
# Needs g++-aarch64-linux-gnu and qemu-user (scripts/deps.sh installs them).
# Exit status: meson test's.
set -uo pipefail
cd "$(dirname "$0")/.."

dir=build-aarch64
cross=cross/aarch64-linux-gnu.ini
for tool in aarch64-linux-gnu-g++ qemu-aarch64; do
  command -v "$tool" >/dev/null || { echo "== $dir: $tool not found (apt-get install g++-aarch64-linux-gnu qemu-user)"; exit 1; }
done

. scripts/lib.sh
build_tree "$dir" --cross-file "$cross" || exit 1
echo "== $dir: meson test (arm64 under $(qemu-aarch64 --version | head -1))"
test_tree "$dir" "$@"
