# Sourced by the deploy tests: re-runs the calling script in a private
# mount namespace whose /etc is a copy, so that what the test writes to
# /etc (ld.so.preload, uarch/tunables) never reaches the machine's own.
# Exits 77 ("skipped: ...") where that is not permitted. Sets $tmp (removed
# at exit) and $etc_copy.
if [ "${UARCH_DEPLOY_NS:-}" != 1 ]; then
	command -v unshare >/dev/null || { echo "skipped: no unshare (util-linux)"; exit 77; }
	why=$(unshare -m true 2>&1) || { echo "skipped: unshare -m not permitted here: $why"; exit 77; }
	UARCH_DEPLOY_NS=1 exec unshare -m bash "$0" "$@"
fi
mount --make-rprivate / || { echo "skipped: mount --make-rprivate / refused"; exit 77; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
etc_copy=$tmp/etc
cp -a /etc "$etc_copy" 2>/dev/null || { echo "skipped: cannot copy /etc"; exit 77; }
mount --bind "$etc_copy" /etc || { echo "skipped: cannot bind-mount a copy of /etc"; exit 77; }
# Everything below writes /etc: make sure it is the copy.
[ "$(stat -c %d:%i /etc)" = "$(stat -c %d:%i "$etc_copy")" ] || { echo "FAIL: /etc is not the copy"; exit 1; }
