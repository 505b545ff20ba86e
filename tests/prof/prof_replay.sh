#!/bin/sh
# uarch-bench mem --profile replays every committed profile: each op a
# profile recorded has its row in the table, whether the files follow one
# --profile (a shell glob) or each its own; each replay runs the rounds
# asked for on every side (paired rounds); a corrupt profile is refused in
# one line with exit status 2.
# usage: prof_replay.sh UARCH_BENCH PROFILE_DIR
set -eu
bench=$1 dir=$2
out=$("$bench" mem --profile "$dir"/*.uprof --benchmark_repetitions=1 2>&1) \
  || { echo "FAIL: --profile with every profile: $(echo "$out" | head -1)"; exit 1; }
fail=0
for f in "$dir"/*.uprof; do
  n=$(basename "$f" .uprof)
  echo "$out" | grep -Eq "^memcpy +$n +recorded +[0-9.]+ +[0-9.]+ +[0-9.]+$" || { echo "FAIL: no memcpy row for $n"; fail=1; }
done
echo "$out" | sed -n '/^op /,$p'
d=$(mktemp -d)
trap 'rm -rf "$d"' EXIT
two=$("$bench" mem --profile "$dir/gzip.uprof" --profile "$dir/zstd.uprof" --benchmark_filter=/memcpy \
  --benchmark_repetitions=3 --benchmark_out="$d/gb.json" --benchmark_out_format=json 2>&1) \
  || { echo "FAIL: --profile twice: $(echo "$two" | head -1)"; fail=1; }
for n in gzip zstd; do
  echo "$two" | grep -Eq "^memcpy +$n +recorded " || { echo "FAIL: --profile twice: no memcpy row for $n"; fail=1; }
  # the filter left memset out; the 3 rounds ran, each on libc, uarch and every variant
  echo "$two" | grep -Eq "^memset +$n " && { echo "FAIL: --benchmark_filter: a memset row for $n"; fail=1; }
  sed -n "/\"name\": \"profile\/$n\/memcpy[\/\"]/,/}/p" "$d/gb.json" > "$d/$n.json"
  grep -Eq '"rounds": 3(\.0+)?(e\+00)?,?$' "$d/$n.json" || { echo "FAIL: $n memcpy: not 3 rounds: $(grep rounds "$d/$n.json")"; fail=1; }
  for side in libc uarch $(echo "$two" | awk -v n=$n '$1 == "memcpy" && $2 == n && $3 != "recorded" { print $3 }'); do
    grep -q "\"${side}_ns\"" "$d/$n.json" || { echo "FAIL: $n memcpy: no time for $side"; fail=1; }
  done
done
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
