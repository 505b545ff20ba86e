#!/bin/sh
# run_fuzz.sh FUZZER SECONDS ARTIFACT_DIR SEED...
# Fuzzes for SECONDS from a fresh corpus seeded with the SEED files.
# FUZZER "none" (no clang++ with libFuzzer at configure time): skip (77).
set -eu
fuzzer=$1 seconds=$2 artifacts=$3
shift 3
if [ "$fuzzer" = none ]; then
	echo "skipped: clang++ with -fsanitize=fuzzer (libclang-rt-14-dev) not found"
	exit 77
fi
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
mkdir "$work/corpus" "$work/seeds"
for seed in "$@"; do
	[ -f "$seed" ] && cp "$seed" "$work/seeds/"
done
mkdir -p "$artifacts"
"$fuzzer" -max_total_time="$seconds" -rss_limit_mb=1024 -timeout=10 \
	-artifact_prefix="$artifacts/" "$work/corpus" "$work/seeds"
