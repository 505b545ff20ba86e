#!/usr/bin/env bash
# The recorder's files: a symbolic link planted at the name it would take
# (its pid's profile, and the trace beside the profile it falls back to)
# is never followed: the link's target keeps its bytes, the recorder
# writes under the next free name, and what it creates is mode 0600 (a
# trace holds addresses).
#   record_files.sh RECORD_SO PROGRAM
set -u
record=$(cd "$(dirname "$1")" && pwd)/$(basename "$1")
prog=$2
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
fail=0
echo "precious" >"$dir/target"
# $$ of the shell is the pid of the program it execs.
UARCH_PROF_OUT=$dir/p UARCH_PROF_TRACE=1000 LD_PRELOAD=$record \
  sh -c 'ln -s "$1/target" "$1/p$$.uprof"; ln -s "$1/target" "$1/p$$-1.utrace"; exec "$2"' sh "$dir" "$prog" ||
  { echo "FAIL: $prog exited $?"; exit 1; }
[ "$(cat "$dir/target")" = precious ] || { echo "FAIL: a planted link's target was overwritten"; fail=1; }
made=$(find "$dir" -type f -name 'p*' | sort)
[ -n "$made" ] || { echo "FAIL: the recorder wrote no file"; fail=1; }
for f in $made; do
  m=$(stat -c %a "$f")
  echo "$(basename "$f"): mode $m"
  [ "$m" = 600 ] || { echo "FAIL: $(basename "$f") is mode $m, not 600"; fail=1; }
done
ls -l "$dir" | sed 's/^/  /'
exit $fail
