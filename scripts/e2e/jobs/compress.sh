# preload-compress (tests/e2e): gzip, xz and zstd compress the file data
# (written by the registry's entry) and give it back; the compressed bytes'
# digests must not change with uarch, and every round trip is exact.
set -e
for c in "gzip -9" "xz -1 -T1" "zstd -12 -q"; do
	$c -c data > packed
	$c -d -c packed > back
	cmp back data
	echo "${c%% *}: $(wc -c < data) -> $(wc -c < packed) bytes, round trip exact, $(sha256sum < packed)"
done
