#!/bin/bash
# uarch-tune --quick, as a test: it writes a profile (under the build
# directory, never the system's) that uarch-info --profile then reports as
# applied, value by value; or, when this machine is too noisy to decide, it
# declines with one line on stderr, exit status 2 and no file. Bad
# arguments: one line, exit status 2.
# usage: tune_quick.sh UARCH_TUNE UARCH_INFO OUTDIR
tune=$1 info=$2 dir=$3
fail=0
. "$(dirname "$0")/../../tests/one_line_error.sh"

expect_error "unknown argument" "$tune" --bogus
expect_error "--output without a value" "$tune" --output
expect_error "--noise-limit not a number" "$tune" --noise-limit x
expect_error "--install and --output" "$tune" --install --output "$dir/x"
# A plot that cannot be drawn is refused before measuring: nothing on stdout.
expect_error "--plot without gnuplot on PATH" env PATH=/nonexistent "$tune" --quick --plot "$dir/x.png"
[ -z "$(env PATH=/nonexistent "$tune" --quick --plot "$dir/x.png" 2>/dev/null)" ] ||
  { echo "FAIL --plot without gnuplot measured first"; fail=1; }
expect_error "--plot to an unwritable path" "$tune" --quick --plot "$dir/no/such/dir/x.png"
# A profile that cannot be written is refused before measuring, too.
expect_error "--output to an unwritable path" "$tune" --quick --output "$dir/no/such/dir/x"
[ -z "$("$tune" --quick --output "$dir/no/such/dir/x" 2>/dev/null)" ] ||
  { echo "FAIL a bad --output measured first"; fail=1; }
mkdir -p "$dir"
expect_error "--output a directory" "$tune" --quick --output "$dir"
expect_error "--output a name too long for its temporary file" "$tune" --quick --output "$dir/$(printf 'x%.0s' $(seq 250))"
expect_error "--output empty" "$tune" --quick --output ""
expect_error "--plot empty" "$tune" --quick --plot ""

mkdir -p "$dir"
out=$dir/tune-quick.profile
rm -f "$out"
# A busy 2-CPU build machine: allow 25% spread of repeated medians (the
# decision needs only the margins between candidates, 1.2-2x here).
"$tune" --quick --noise-limit 25 --output "$out" >"$dir/tune-quick.stdout" 2>"$dir/tune-quick.stderr"
rc=$?
cat "$dir/tune-quick.stdout"
err=$(cat "$dir/tune-quick.stderr")
if [ $rc -eq 2 ]; then
  if [ "$(printf '%s\n' "$err" | wc -l)" -ne 1 ] || ! printf '%s' "$err" | grep -q "too noisy"; then
    echo "FAIL declined without the one noise line: [$err]"; fail=1
  elif [ -e "$out" ]; then
    echo "FAIL declined but wrote $out"; fail=1
  else
    echo "ok   declined as too noisy: $err"
  fi
  exit $fail
fi
if [ $rc -ne 0 ] || [ -n "$err" ]; then
  echo "FAIL uarch-tune --quick: exit $rc, stderr [$err]"; exit 1
fi
grep -q '^rep_movsb_threshold=' "$out" || { echo "FAIL no profile line in $out"; cat "$out"; exit 1; }
[ "$(stat -c %a "$out")" = 644 ] || { echo "FAIL $out is not mode 644"; fail=1; }
ls "$dir" | grep -q 'tune-quick.profile.tmp' && { echo "FAIL a temporary file was left"; fail=1; }
shown=$("$info" --profile "$out")
echo "$shown"
printf '%s\n' "$shown" | grep -q "^profile .*$out: applied" || { echo "FAIL uarch-info does not report the profile applied"; fail=1; }
# Every entry of the profile shows as applied, from the profile.
for entry in $(grep -v '^#' "$out" | tr ':' ' '); do
  printf '%s\n' "$shown" | grep -q "applied   $entry   (profile)" || { echo "FAIL $entry not reported applied from the profile"; fail=1; }
done
printf '%s\n' "$shown" | grep -q "rep movsb .*(profile)" || { echo "FAIL the rep movsb window is not from the profile"; fail=1; }
[ $fail = 0 ] && echo "ok   profile written and reported"

# --cold: the same tables, each call's destination out of the cache. A
# check that it gets there: the loop's copy of 16 KiB takes at least 1.3x
# as long as into the reused buffer above (2-vCPU Zen 5 guest: 6x).
cold=$dir/tune-cold.profile
rm -f "$cold"
"$tune" --quick --cold --noise-limit 25 --output "$cold" >"$dir/tune-cold.stdout" 2>"$dir/tune-cold.stderr"
rc=$?
err=$(cat "$dir/tune-cold.stderr")
grep -q '^--cold: each call.s destination out of the cache' "$dir/tune-cold.stdout" ||
  { echo "FAIL --cold does not say where the destinations are"; fail=1; }
hot16=$(awk '$1 == "memcpy" && $3 == 16384 { print $4; exit }' "$dir/tune-quick.stdout")
cold16=$(awk '$1 == "memcpy" && $3 == 16384 { print $4; exit }' "$dir/tune-cold.stdout")
if [ -z "$hot16" ] && grep -q 'no ERMS' "$dir/tune-quick.stdout"; then
  echo "skip --cold against the reused buffer: no ERMS, so no rep tables to compare"
elif awk -v h="$hot16" -v c="$cold16" 'BEGIN { exit !(h > 0 && c >= 1.3 * h) }'; then
  echo "ok   --cold: the loop's 16 KiB copy $cold16 ns against $hot16 ns into a reused buffer"
else
  echo "FAIL --cold: the loop's 16 KiB copy $cold16 ns, into a reused buffer $hot16 ns"; fail=1
fi
if [ $rc -eq 2 ]; then
  printf '%s' "$err" | grep -q "too noisy" && [ ! -e "$cold" ] && echo "ok   --cold declined as too noisy: $err" ||
    { echo "FAIL --cold declined without the noise line or left a file: [$err]"; fail=1; }
elif [ $rc -ne 0 ] || [ -n "$err" ]; then
  echo "FAIL uarch-tune --quick --cold: exit $rc, stderr [$err]"; fail=1
elif ! head -1 "$cold" | grep -q '^# uarch-tune --quick --cold on ' || ! grep -q '^rep_movsb_threshold=' "$cold"; then
  echo "FAIL --cold profile:"; cat "$cold"; fail=1
else
  echo "ok   --cold profile: $(tail -1 "$cold")"
fi
# --section: one program's entries, set and removed, every other line kept
sec="$dir/sections"
printf 'nt_threshold=16M\n[redis-server]\nmemset=generic\n' > "$sec"
expect_error "--section with a path" "$tune" --section a/b --entries memcpy=generic --output "$sec"
expect_error "--section without a profile to write" "$tune" --section x --entries memcpy=generic
expect_error "--entries without --section" "$tune" --entries memcpy=generic --output "$sec"
expect_error "--section with --quick" "$tune" --quick --section x --entries memcpy=generic --output "$sec"
"$tune" --section mariadbd --entries 'memcpy=generic:memmove=generic' --output "$sec" >/dev/null || { echo "FAIL --section write"; fail=1; }
a=$("$info" --profile "$sec" --as mariadbd --json | python3 -c '
import json, sys
r = json.load(sys.stdin)
print(r["profile"]["section"], r["policy"]["memcpy"], r["policy"]["memmove"], r["thresholds"]["nt_threshold"])')
[ "$a" = "mariadbd generic generic 16777216" ] && echo "ok   --section mariadbd: [$a]" || { echo "FAIL --section mariadbd: [$a]"; cat "$sec"; fail=1; }
"$tune" --section mariadbd --entries '' --output "$sec" >/dev/null
[ "$(cat "$sec")" = "$(printf 'nt_threshold=16M\n[redis-server]\nmemset=generic')" ] &&
  echo "ok   --section mariadbd --entries '': removed, the rest kept" || { echo "FAIL removing a section:"; cat "$sec"; fail=1; }
exit $fail
