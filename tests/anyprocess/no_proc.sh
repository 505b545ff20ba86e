#!/usr/bin/env bash
# A program linked -z now against libuarch.so, in a mount namespace with
# /proc hidden: its resolvers run before any constructor and must still
# read the environment and the auxiliary vector (from the initial stack,
# no /proc): UARCH_TUNABLES=memcpy=baseline binds baseline, and the process
# is not taken for a set-id one (which would ignore the tunables).
#   no_proc.sh TUNABLES_SEEN
set -u
prog=$1
. "$(dirname "$0")/../deploy/ns.sh"
mount -t tmpfs -o size=1M none /proc || { echo "skipped: cannot mount over /proc here"; exit 77; }
[ ! -e /proc/self/auxv ] || { echo "FAIL: /proc/self/auxv is still there"; exit 1; }
got=$(UARCH_TUNABLES=memcpy=baseline "$prog") || { echo "FAIL: $prog exited $?"; exit 1; }
[ "$got" = baseline ] || { echo "FAIL: without /proc, UARCH_TUNABLES=memcpy=baseline bound '$got'"; exit 1; }
echo "without /proc: UARCH_TUNABLES=memcpy=baseline bound $got"
