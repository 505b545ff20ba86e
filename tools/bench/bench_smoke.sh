#!/usr/bin/env bash
# uarch-bench mem end to end on a few cases: the table lists them in the
# order they were registered, the CSV has the same rows with positive times and ratios that
# agree with them, the summary's count of rows below 0.97x agrees with the
# table, every case runs the paired rounds asked for, and bad input is one
# line on stderr with exit code 2, before any benchmark runs. (With one
# round, a ratio is exactly the quotient of its row's times; with more, the
# median of the rounds' quotients.)
bench=$1
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
fail=0
"$bench" mem --quick --benchmark_repetitions=1 --benchmark_filter='memcpy/(fixed8|fixed100|uniform0-64)/' --csv "$tmp/out.csv" \
  --json "$tmp/out.json" >"$tmp/out.txt" 2>&1 \
  || { echo "FAIL run: $(tail -3 "$tmp/out.txt")"; exit 1; }
rows=$(grep -E '^memcpy +(fixed|uniform)' "$tmp/out.txt" | awk '{print $2 "/" $3}' | tr '\n' ' ')
want='uniform0-64/aligned fixed8/aligned fixed100/aligned '   # --quick: aligned only
if [ "$rows" != "$want" ]; then echo "FAIL table rows: [$rows] want [$want]"; fail=1; else echo "ok   table rows in order"; fi
if awk -F, 'NR == 1 { if ($0 != "op,case,align,libc_ns,uarch_ns,ratio") exit 1; next }
            { if (!($4 > 0 && $5 > 0 && $6 > 0)) exit 1
              r = $4 / $5; if (r / $6 > 1.005 || r / $6 < 0.995) exit 1; n++ }
            END { exit n == 3 ? 0 : 1 }' "$tmp/out.csv"; then
  echo "ok   csv: 3 rows, ratio = libc_ns / uarch_ns"
else
  echo "FAIL csv:"; cat "$tmp/out.csv"; fail=1
fi
# The JSON document holds the same rows (escaped strings, numbers as numbers),
# and the console shows the tables only, no Google Benchmark rows.
if python3 - "$tmp/out.json" "$tmp/out.csv" <<'PY'
import csv, json, sys
j = json.load(open(sys.argv[1]))
rows = list(csv.DictReader(open(sys.argv[2])))
t = j["tables"]["mem"]
assert len(t) == len(rows) == 3, (len(t), len(rows))
for a, b in zip(t, rows):
    assert a["case"] == b["case"] and isinstance(a["ratio"], float), (a, b)
    assert abs(a["ratio"] - float(b["ratio"])) < 1e-9
assert j["tables"]["geomean"][0]["op"] == "memcpy"
PY
then echo "ok   json: the same rows"; else echo "FAIL json"; fail=1; fi
if grep -qE '^(memcpy/|Benchmark|-----)' "$tmp/out.txt"; then echo "FAIL console shows Google Benchmark rows"; fail=1
else echo "ok   console: tables only"; fi
# The summary counts the rows below 0.97x, and those further below it than
# the A/A check's 90th percentile (memcpy against memmove, which run the
# same code), as the table shows them (a row within rounding of a bound may
# count either way).
"$bench" mem --benchmark_filter='mem(cpy|move)/fixed(1|2|4|8|16|32|64|128|256)/aligned' \
  --benchmark_repetitions=5 --benchmark_out="$tmp/gb.json" --benchmark_out_format=json \
  --json "$tmp/aa.json" >"$tmp/aa.txt" 2>&1 || { echo "FAIL A/A run: $(tail -3 "$tmp/aa.txt")"; fail=1; }
if python3 - "$tmp/gb.json" <<'PY'
import json, sys
b = json.load(open(sys.argv[1]))["benchmarks"]
assert len(b) == 18, len(b)
for x in b:
    assert x["rounds"] == 5 and x["libc_ns"] > 0 and x["uarch_ns"] > 0, x
print("ok   18 cases, 5 paired rounds each")
PY
then :; else echo "FAIL rounds"; fail=1; fi
if python3 - "$tmp/aa.txt" "$tmp/aa.json" <<'PY'
import json, re, sys
text = open(sys.argv[1]).read()
notes = json.load(open(sys.argv[2]))["notes"]["geomean"]   # the same lines, in the JSON document
assert [n for n in notes if n in text.splitlines()] == notes and len(notes) == 2, notes
ratios = [float(m.group(1)) for m in re.finditer(r"^mem(?:cpy|move) +fixed\d+ +aligned +[\d.]+ +[\d.]+ +([\d.]+)$", text, re.M)]
assert len(ratios) == 18, f"{len(ratios)} rows"
p90 = float(re.search(r"90th percentile ([\d.]+)%, over 9 cases", text).group(1)) / 100
m = re.search(r"^rows below 0.97: (\d+) of (\d+); below it by more than the A/A 90th percentile \(([\d.]+)%\): (\d+)", text, re.M)
assert m, "no summary line"
below, total, p90_shown, beyond = int(m.group(1)), int(m.group(2)), float(m.group(3)) / 100, int(m.group(4))
assert total == 18 and abs(p90_shown - p90) < 1e-9, (total, p90_shown, p90)
def between(count, lo, hi):
    assert lo <= count <= hi, (count, lo, hi)
between(below, sum(r < 0.9695 for r in ratios), sum(r < 0.9705 for r in ratios))
between(beyond, sum(r * (1 + p90 + 0.0006) < 0.9695 for r in ratios), sum(r * (1 + p90 - 0.0006) < 0.9705 for r in ratios))
print(f"ok   summary: {below} of 18 rows below 0.97, {beyond} beyond the A/A 90th percentile ({p90:.1%})")
PY
then :; else echo "FAIL the below-0.97 summary disagrees with the table:"; grep -E '^(rows|noise)' "$tmp/aa.txt"; fail=1; fi
# The cold-destination cases (--quick: 16 KiB, memcpy and memset): their
# own align column, positive times, each call to its own slot of the pool.
"$bench" mem --quick --benchmark_repetitions=1 --benchmark_filter=cold --csv "$tmp/cold.csv" >"$tmp/cold.txt" 2>&1 \
  || { echo "FAIL cold run: $(tail -3 "$tmp/cold.txt")"; fail=1; }
if python3 - "$tmp/cold.csv" <<'PY'
import csv, sys
rows = list(csv.DictReader(open(sys.argv[1])))
assert [(r["op"], r["case"], r["align"]) for r in rows] == [("memcpy", "cold16K", "cold dst"), ("memset", "cold16K", "cold dst")], rows
assert all(float(r["libc_ns"]) > 0 and float(r["uarch_ns"]) > 0 for r in rows), rows
print("ok   cold-destination rows: memcpy and memset, 16 KiB")
PY
then :; else echo "FAIL cold rows:"; cat "$tmp/cold.txt"; fail=1; fi
# --preload LIB: three sides (libuarch.so, LIB, the C library), each ratio
# column the quotient of its two times, and the line that counts the rows
# where libuarch.so beats the C library and LIB does not keep 0.97x of it.
if [ -n "${2:-}" ]; then
  "$bench" mem --quick --benchmark_repetitions=1 --preload "$2" --benchmark_filter='mem(cpy|set)/fixed' --csv "$tmp/pre.csv" >"$tmp/pre.txt" 2>&1 \
    || { echo "FAIL --preload run: $(tail -3 "$tmp/pre.txt")"; fail=1; }
  if python3 - "$tmp/pre.csv" "$tmp/pre.txt" <<'PY'
import csv, re, sys
rows = list(csv.DictReader(open(sys.argv[1])))
assert list(rows[0]) == ["op", "case", "align", "shared_ns", "preload_ns", "ratio", "libc_ns", "libc_shared", "libc_preload"], list(rows[0])
assert len(rows) == 6, len(rows)
close = lambda a, b: abs(a / b - 1) < 0.005
for r in rows:
    # one round: ratio is the quotient of the times; libc_shared and
    # libc_preload come from pairs of their own (other samples)
    s, p, c = float(r["shared_ns"]), float(r["preload_ns"]), float(r["libc_ns"])
    q, cs, cp = float(r["ratio"]), float(r["libc_shared"]), float(r["libc_preload"])
    assert min(s, p, c, cs, cp) > 0 and max(cs, cp) < 1e6, r
    assert close(q, s / p), r
m = re.search(r"^fixed-size rows where libuarch.so is >= 1.00x the C library: (\d+); through the preload library below 0.97x it: (\d+)", open(sys.argv[2]).read(), re.M)
assert m, "no preload-against-libc line"
# The tool counts libc_shared >= 1 before rounding; the csv has 3 decimals,
# so a row printed 1.000 or 0.999... may fall either side.
sure = sum(float(r["libc_shared"]) >= 1.0005 for r in rows)
maybe = sum(float(r["libc_shared"]) >= 0.9995 for r in rows)
assert sure <= int(m.group(1)) <= maybe, (m.group(1), sure, maybe)
print(f"ok   --preload: 3 sides, ratios agree, {m.group(1)} rows where libuarch.so wins, {m.group(2)} lost through the preload library")
PY
  then :; else echo "FAIL --preload table:"; cat "$tmp/pre.txt"; fail=1; fi
fi
. "$(dirname "$0")/../../tests/one_line_error.sh"
check() { local desc=$1; shift; expect_error "$desc" "$bench" "$@"; }   # check DESCRIPTION ARGS...
check "no benchmark"
check "unknown benchmark" bogus
check "unwritable csv" mem --csv "$tmp/no/such/dir/out.csv"
check "unwritable json" mem --json "$tmp/no/such/dir/out.json"
check "unknown flag" mem --bogus
check "rounds not a count" mem --benchmark_repetitions=0
check "rounds not a number" mem --benchmark_repetitions=x
check "min_time, which rounds replace" mem --benchmark_min_time=0.1
expect_error "tables to a full disk" bash -c '"$0" mem --quick --benchmark_repetitions=1 --benchmark_filter=memcpy/fixed8/ >/dev/full' "$bench"
check "plot from sync" sync --plot "$tmp/x.png"
check "plot from idle" idle --plot "$tmp/x.png"
check "filter not a regular expression" mem --benchmark_filter='['
check "filter matching no case" mem --benchmark_filter=NOMATCH
check "filter matching no replay" mem --profile "$(dirname "$0")/../../tests/data/profiles/gzip.uprof" --benchmark_filter=NOMATCH
check "filter matching no sync case" sync --benchmark_filter=NOMATCH
check "plot from the replays" mem --profile "$(dirname "$0")/../../tests/data/profiles/gzip.uprof" --plot "$tmp/x.png"
# A plot that cannot be drawn is refused before the run, which prints nothing.
expect_error "plot without gnuplot on PATH" env PATH=/nonexistent "$bench" mem --quick --plot "$tmp/x.png"
if [ -n "$(env PATH=/nonexistent "$bench" mem --quick --plot "$tmp/x.png" 2>/dev/null)" ]; then
  echo "FAIL a plot without gnuplot ran the benchmarks first"; fail=1
fi
check "unwritable plot" mem --quick --plot "$tmp/no/such/dir/x.png"
check "unwritable idle csv" idle --csv "$tmp/no/such/dir/out.csv"
# ... and a rejected command line loses nothing: an existing CSV is kept.
echo keep > "$tmp/keep.csv"
check "unknown flag, with --csv" mem --bogus --csv "$tmp/keep.csv"
if [ "$(cat "$tmp/keep.csv")" != keep ]; then echo "FAIL rejected run truncated its --csv file"; fail=1; else echo "ok   --csv file kept"; fi
# ... nor does an output that fails after the others were checked.
check "unwritable json beside a csv" mem --csv "$tmp/keep.csv" --json "$tmp/no/such/dir/x.json"
if [ "$(cat "$tmp/keep.csv")" != keep ]; then echo "FAIL a refused --json truncated the --csv file"; fail=1; else echo "ok   --csv file kept beside a bad --json"; fi
# A quote in the plot's name is part of the name, never gnuplot's or the
# shell's command.
if command -v gnuplot >/dev/null; then
  b=$(readlink -f "$bench"); (cd "$tmp" && "$b" mem --quick --benchmark_repetitions=1 --benchmark_filter='memcpy/fixed8/' --plot "p';system 'touch INJ';'.png" >/dev/null 2>&1)
  if [ -e "$tmp/INJ" ] || [ ! -s "$tmp/p';system 'touch INJ';'.png" ]; then
    echo "FAIL a quote in --plot's file name ran a command or drew no plot"; fail=1
  else echo "ok   a quote in --plot's file name is a name"; fi
fi
exit $fail
