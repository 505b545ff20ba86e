#!/bin/sh
# uarch-bench mem --profile replays every committed profile: each op a
# profile recorded has its row in the table, whether the files follow one
# --profile (a shell glob) or each its own; a corrupt profile is refused in
# one line with exit status 2.
# usage: prof_replay.sh UARCH_BENCH PROFILE_DIR
set -eu
bench=$1 dir=$2
out=$("$bench" mem --profile "$dir"/*.uprof --benchmark_min_time=0.001 --benchmark_repetitions=1 2>&1) \
  || { echo "FAIL: --profile with every profile: $(echo "$out" | head -1)"; exit 1; }
fail=0
for f in "$dir"/*.uprof; do
  n=$(basename "$f" .uprof)
  echo "$out" | grep -Eq "^memcpy +$n +recorded +[0-9.]+ +[0-9.]+ +[0-9.]+$" || { echo "FAIL: no memcpy row for $n"; fail=1; }
done
echo "$out" | sed -n '/^op /,$p'
two=$("$bench" mem --profile "$dir/gzip.uprof" --profile "$dir/zstd.uprof" --benchmark_filter='/(libc|uarch)$' \
  --benchmark_min_time=0.001 --benchmark_repetitions=1 2>&1) || { echo "FAIL: --profile twice: $(echo "$two" | head -1)"; fail=1; }
for n in gzip zstd; do
  echo "$two" | grep -Eq "^memcpy +$n +recorded " || { echo "FAIL: --profile twice: no memcpy row for $n"; fail=1; }
done
d=$(mktemp -d)
trap 'rm -rf "$d"' EXIT
head -c 1000 "$dir/gzip.uprof" > "$d/bad.uprof"
set +e
err=$("$bench" mem --profile "$d/bad.uprof" 2>&1 >/dev/null); rc=$?
set -e
[ $rc = 2 ] && [ $(echo "$err" | wc -l) = 1 ] || { echo "FAIL: truncated profile: status $rc, stderr: $err"; fail=1; }
set +e
err=$("$bench" mem --profile --benchmark_filter=x 2>&1 >/dev/null); rc=$?
set -e
[ $rc = 2 ] && [ $(echo "$err" | wc -l) = 1 ] || { echo "FAIL: --profile without a file: status $rc, stderr: $err"; fail=1; }
exit $fail
