#!/usr/bin/env bash
# Runs a command inside a Debian root of another release: a fresh copy of a
# cached minbase root made by debootstrap, with this working tree at /src.
#   scripts/debian-root.sh [--release 12|13] [--keep DIR] [--bind DIR] -- COMMAND...
#   scripts/debian-root.sh --release 13 -- scripts/test.sh
# The cached root (one per release, under $UARCH_ROOT_CACHE, default
# /var/cache/uarch/roots) is made once and never changed: every run works
# in a copy of it, so each run starts from a new machine's packages. The
# copy goes away afterwards unless --keep DIR names where to keep it
# (a later --keep DIR with the same DIR reuses it with the packages
# installed; /src is copied afresh every run, so builds in it are not kept). /proc, /sys, /dev and /dev/pts are mounted in a mount
# namespace of the run's own, so they are unmounted whatever happens.
# The tree copied in: tracked files as they are now and new files git does
# not ignore. --bind DIR mounts DIR (an absolute path) at the same path
# inside, read-write (results to bring out). The command runs as root with
# a clean environment (CI and UARCH_* kept); its status is the script's.
# Exit 77 with the reason when no root can be had here (debootstrap
# missing, no Debian archive reachable, not root); 2 for bad arguments.
set -euo pipefail

top=$(cd "$(dirname "$0")/.." && pwd)
die() { echo "debian-root.sh: $*" >&2; exit 2; }
refuse() { echo "debian-root.sh: cannot make a Debian root here: $*" >&2; exit 77; }

release=13 keep="" binds=()
while [ $# -gt 0 ]; do
  case $1 in
    --release) [ $# -ge 2 ] || die "--release needs 12 or 13"; release=$2; shift 2 ;;
    --keep) [ $# -ge 2 ] || die "--keep needs a directory"; keep=$2; shift 2 ;;
    --bind) [ $# -ge 2 ] && [ "${2#/}" != "$2" ] || die "--bind needs an absolute directory"
            binds+=("$2"); shift 2 ;;
    --) shift; break ;;
    *) die "unknown argument '$1' (usage: debian-root.sh [--release 12|13] [--keep DIR] [--bind DIR] -- COMMAND...)" ;;
  esac
done
[ $# -gt 0 ] || die "no command given (usage: debian-root.sh [--release 12|13] [--keep DIR] -- COMMAND...)"
case $release in
  12) suite=bookworm ;;
  13) suite=trixie ;;
  *) die "release '$release' is not 12 or 13" ;;
esac

[ "$(id -u)" = 0 ] || refuse "it needs root (debootstrap, chroot and mounts)"
command -v debootstrap >/dev/null || refuse "debootstrap is not installed (apt-get install debootstrap)"
command -v unshare >/dev/null || refuse "unshare is not installed (package util-linux)"
[ -e "/usr/share/debootstrap/scripts/$suite" ] || refuse "this debootstrap does not know $suite"

# The archive this machine's apt uses (deb822 or one-line sources).
mirror=$(sed -n 's/^URIs: *\([^ ]*\).*/\1/p' /etc/apt/sources.list.d/*.sources 2>/dev/null |
         grep -v security | head -1)
[ -n "$mirror" ] || mirror=$(awk '$1 == "deb" && $0 !~ /security/ { for (i = 2; i <= NF; i++) if ($i ~ /^[a-z]+:\/\//) { print $i; exit } }' \
                             /etc/apt/sources.list /etc/apt/sources.list.d/*.list 2>/dev/null | head -1)
[ -n "$mirror" ] || refuse "no Debian archive is configured in /etc/apt/sources.list*"

cache=${UARCH_ROOT_CACHE:-/var/cache/uarch/roots}
base=$cache/debian-$release
if [ ! -f "$base/.complete" ]; then
  mkdir -p "$cache"
  rm -rf "$base.new"
  echo "debian-root.sh: making a Debian $release ($suite) root in $base (debootstrap, about a minute)" >&2
  if ! debootstrap --variant=minbase "$suite" "$base.new" "$mirror" >"$cache/debootstrap-$release.log" 2>&1; then
    tail -5 "$cache/debootstrap-$release.log" >&2
    rm -rf "$base.new"
    refuse "debootstrap $suite from $mirror failed (log: $cache/debootstrap-$release.log)"
  fi
  # Security updates too, as a new machine has them.
  printf 'deb %s %s main\ndeb %s %s-updates main\n' "$mirror" "$suite" "$mirror" "$suite" >"$base.new/etc/apt/sources.list"
  # Nothing started by a package's maintainer scripts: no init runs here.
  printf '#!/bin/sh\nexit 101\n' >"$base.new/usr/sbin/policy-rc.d"
  chmod 755 "$base.new/usr/sbin/policy-rc.d"
  touch "$base.new/.complete"
  rm -rf "$base"
  mv "$base.new" "$base"
fi

if [ -n "$keep" ]; then
  dir=$keep
  [ -f "$dir/.complete" ] || { rm -rf "$dir"; mkdir -p "$(dirname "$dir")"; cp -a "$base" "$dir"; }
else
  dir=$(mktemp -d "${TMPDIR:-/tmp}/uarch-debian$release.XXXXXX")
  rmdir "$dir"
  cp -a "$base" "$dir"
  trap 'rm -rf "$dir"' EXIT
fi
cp /etc/resolv.conf "$dir/etc/resolv.conf" 2>/dev/null || true

# The working tree, as test-deb.sh copies it.
rm -rf "$dir/src"
mkdir -p "$dir/src"
(cd "$top" && git ls-files -co --exclude-standard -z |
  while IFS= read -r -d '' f; do [ -e "$f" ] && printf '%s\0' "$f"; done |
  tar --null -T - -cf -) | tar -xf - -C "$dir/src"
# shared/ beside the tree (test data), where there is one.
if [ -d "$top/../shared" ]; then
  rm -rf "$dir/shared"; cp -a "$top/../shared" "$dir/shared"; chmod -R u+w "$dir/shared"
fi
for b in "${binds[@]}"; do mkdir -p "$b" "$dir$b"; done

# Inside a mount namespace of its own: every mount below ends with it.
env_keep=()
for v in CI UARCH_JOBS UARCH_TUNABLES TERM; do
  [ -n "${!v:-}" ] && env_keep+=("$v=${!v}")
done
set +e
unshare --mount --propagation private -- /bin/sh -ec '
  dir=$1; shift
  # The root a mount point of its own: tests that make their mounts
  # private (mount --make-rprivate /) work inside it.
  mount --bind "$dir" "$dir"
  mount -t proc proc "$dir/proc"
  mount --rbind /sys "$dir/sys"
  mount --rbind /dev "$dir/dev"
  mount -t tmpfs -o size=25% tmpfs "$dir/dev/shm"
  n=$1; shift
  while [ "$n" -gt 0 ]; do mount --bind "$1" "$dir$1"; shift; n=$((n - 1)); done
  exec chroot "$dir" "$@"
' sh "$dir" "${#binds[@]}" "${binds[@]}" \
  /usr/bin/env -i HOME=/root PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin \
  LANG=C.UTF-8 DEBIAN_FRONTEND=noninteractive "${env_keep[@]}" \
  /bin/bash -c 'cd /src && exec "$@"' bash "$@"
rc=$?
exit $rc
