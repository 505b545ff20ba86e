#!/usr/bin/env bash
# docs/deploy.md's /etc/ld.so.preload steps, in a private mount namespace
# over a copy of /etc (ns.sh): install the line, check that new processes
# are bound, the 32-bit processes' ld.so messages and how $LIB and a
# 32-bit stand-in avoid them, roll back, a line naming a missing library,
# and the package's prerm (the block of docs/deploy.md) on its own.
#   ld_so_preload.sh PRELOAD_SO BOUND_EXE UARCH_INFO DEPLOY_MD
set -uo pipefail
. "$(dirname "$0")/ns.sh"
lib=$1 bound=$2 info=$3 doc=$4
fail=0
bad() { echo "FAIL: $*"; fail=1; }
f=/etc/ld.so.preload

# The library where the package puts it, /usr/lib/<triplet>/, but under
# $tmp: the line is "$tmp/$LIB/libuarch_preload.so.0", and ld.so expands
# $LIB to lib/<triplet> for this ABI (Debian).
triplet=$(cc -print-multiarch 2>/dev/null || gcc -print-multiarch 2>/dev/null)
[ -n "$triplet" ] || { echo "skipped: no multiarch triplet (cc -print-multiarch)"; exit 77; }
mkdir -p "$tmp/lib/$triplet"
cp "$lib" "$tmp/lib/$triplet/libuarch_preload.so.0"
line="$tmp/\$LIB/libuarch_preload.so.0"

# The guide's two edits: a new file renamed over the old, so that a
# process starting meanwhile reads the old list or the new, never half.
add_line() {
	{ [ -f $f ] && grep -vxF "$1" $f; echo "$1"; } > $f.new && mv $f.new $f
}
drop_line() {
	grep -vF libuarch_preload.so.0 $f > $f.new || true
	if [ -s $f.new ]; then mv $f.new $f; else rm -f $f.new $f; fi
}
# stderr_of CMD...: what CMD printed on stderr.
stderr_of() { "$@" 2>&1 >/dev/null; }

rm -f $f
[ "$("$bound")" = "not preloaded" ] || bad "bound before any line: $("$bound")"

echo "== install: $line"
add_line "$line"
b=$("$bound" 2>"$tmp/err")
echo "a new process: uarch_preload_binding() = $b"
case $b in symbols|pointer) ;; *) bad "a new process is not bound: $b" ;; esac
[ -s "$tmp/err" ] && bad "a bound process printed: $(cat "$tmp/err")"
grep -q "/lib/$triplet/libuarch_preload.so.0" /proc/self/maps ||
	bad "\$LIB did not expand to lib/$triplet (grep's own /proc/self/maps)"
# uarch-info of a sanitizer build: its runtime is not first here.
entry=$(ASAN_OPTIONS=${ASAN_OPTIONS:+$ASAN_OPTIONS:}verify_asan_link_order=0 "$info" | grep '^  entry')
echo "uarch-info:$entry"
grep -q "libuarch_preload.so, $b" <<<"$entry" || bad "uarch-info does not show the preload binding: $entry"
sleep 300 &
old=$!
sleep 0.2
grep -q libuarch_preload /proc/$old/maps || bad "a process started with the line in place has no libuarch_preload mapped"
n=$(grep -l libuarch_preload /proc/[0-9]*/maps 2>/dev/null | wc -l)
echo "processes with libuarch_preload mapped: $n (grep -l libuarch_preload /proc/[0-9]*/maps)"

# 32-bit processes: the 32-bit C library runs as a program (it prints its
# version), so no 32-bit compiler is needed.
libc32=""
for c in /usr/lib32/libc.so.6 /usr/lib/i386-linux-gnu/libc.so.6; do
	[ -x "$c" ] && "$c" >/dev/null 2>&1 && { libc32=$c; break; }
done
if [ -z "$libc32" ]; then
	echo "note: no runnable 32-bit C library (libc6-i386): 32-bit case not run"
else
	echo "== 32-bit process ($libc32)"
	abs="$tmp/lib/$triplet/libuarch_preload.so.0"
	drop_line; add_line "$abs"
	e=$(stderr_of "$libc32")
	want="ERROR: ld.so: object '$abs' from /etc/ld.so.preload cannot be preloaded (wrong ELF class: ELFCLASS64): ignored."
	echo "absolute path: $e"
	[ "$e" = "$want" ] || bad "32-bit, absolute 64-bit path: expected '$want'"
	drop_line; add_line "$line"
	e=$(stderr_of "$libc32")
	want="ERROR: ld.so: object '$line' from /etc/ld.so.preload cannot be preloaded (cannot open shared object file): ignored."
	echo "\$LIB, nothing for 32-bit: $e"
	[ "$e" = "$want" ] || bad "32-bit, \$LIB path and no 32-bit file: expected '$want'"
	# A 32-bit library that does nothing where $LIB points for 32-bit
	# processes (lib32 for libc6-i386, lib/i386-linux-gnu for libc6:i386).
	if printf '' | as --32 -o "$tmp/empty32.o" - 2>/dev/null &&
		ld -m elf_i386 -shared -z noexecstack -soname libuarch_preload.so.0 \
			-o "$tmp/stub32.so" "$tmp/empty32.o" 2>/dev/null; then
		for d in lib32 lib/i386-linux-gnu; do
			mkdir -p "$tmp/$d" && cp "$tmp/stub32.so" "$tmp/$d/libuarch_preload.so.0"
		done
		e=$(stderr_of "$libc32")
		echo "\$LIB with a 32-bit stand-in: '${e}'"
		[ -z "$e" ] || bad "32-bit, \$LIB path with a 32-bit stand-in: ld.so printed: $e"
		"$libc32" | grep -q 'GNU C Library' || bad "the 32-bit program did not run with the stand-in"
		[ "$("$bound")" = "$b" ] || bad "64-bit processes lost the binding with the 32-bit stand-in"
	else
		echo "note: no 'as --32'/'ld -m elf_i386': the 32-bit stand-in case not run"
	fi
fi

echo "== roll back"
drop_line
[ -e $f ] && bad "$f still there with no other entry"
[ "$("$bound")" = "not preloaded" ] || bad "a new process is still bound after the rollback"
grep -q libuarch_preload /proc/$old/maps || bad "the running process lost the library (it keeps it until it restarts)"
echo "after rollback: new process $("$bound"); the one started before still maps it: $(grep -c libuarch_preload /proc/$old/maps) mappings"
kill $old; wait $old 2>/dev/null

echo "== the line names a missing library"
add_line "$line"
# A set-user-ID program (mount, run by nobody: secure execution) reads the
# file too: silent while the library is there, the error once it is gone.
setuid=""
nobody=$(id -u nobody 2>/dev/null) && [ -u /usr/bin/mount ] && command -v setpriv >/dev/null &&
	setuid="setpriv --reuid=$nobody --regid=$nobody --clear-groups /usr/bin/mount --version"
if [ -n "$setuid" ]; then
	e=$(stderr_of $setuid)
	[ -z "$e" ] || bad "set-user-ID mount with the library in place printed: $e"
else
	echo "note: no set-user-ID /usr/bin/mount, user nobody or setpriv: set-user-ID case not run"
fi
mv "$tmp/lib/$triplet/libuarch_preload.so.0" "$tmp/gone.so"
e=$(stderr_of /bin/true)
want="ERROR: ld.so: object '$line' from /etc/ld.so.preload cannot be preloaded (cannot open shared object file): ignored."
echo "/bin/true: $e"
[ "$e" = "$want" ] || bad "missing library: expected '$want'"
if [ -n "$setuid" ]; then
	e=$(stderr_of $setuid)
	echo "setpriv, then set-user-ID mount: $e"
	[ "$e" = "$want"$'\n'"$want" ] || bad "set-user-ID mount, missing library: expected '$want' from setpriv and from mount"
fi
[ "$("$bound" 2>/dev/null)" = "not preloaded" ] || bad "bound with the library missing"
drop_line
e=$(stderr_of /bin/true)
[ -z "$e" ] || bad "after removing the line: $e"
mv "$tmp/gone.so" "$tmp/lib/$triplet/libuarch_preload.so.0"

echo "== prerm (docs/deploy.md) on remove and upgrade"
prerm=$(awk '/^<!-- prerm -->/ { on = 1; next } on && /^```/ { if (in_) exit; in_ = 1; next } in_' "$doc")
[ -n "$prerm" ] || bad "no prerm block after '<!-- prerm -->' in $doc"
printf '# kept\n/usr/lib/libfoo.so %s\n/usr/$LIB/libuarch_preload.so.0:/usr/lib/libbar.so # also kept\n' "$line" > $f
before=$(cat $f)
sh -ec "$prerm" prerm upgrade 0.2-1 || bad "prerm upgrade failed"
[ "$(cat $f)" = "$before" ] || bad "prerm upgrade changed $f"
sh -ec "$prerm" prerm remove || bad "prerm remove failed"
want=$(printf '# kept\n/usr/lib/libfoo.so\n/usr/lib/libbar.so # also kept')
[ "$(cat $f)" = "$want" ] || bad "prerm remove left: $(cat $f)"
[ "$(stat -c %a $f)" = 644 ] || bad "prerm remove left $f mode $(stat -c %a $f)"
echo "$line" > $f
sh -ec "$prerm" prerm remove || bad "prerm remove failed"
[ -e $f ] && bad "prerm remove left $f with no entry: $(cat $f)"
# The package's removal in dpkg's order: prerm, then the files go.
echo "$line" > $f
sh -ec "$prerm" prerm remove && rm "$tmp/lib/$triplet/libuarch_preload.so.0"
e=$(stderr_of /bin/true)
[ -z "$e" ] || bad "after prerm and the library's removal: $e"
echo "prerm: remove drops only the libuarch_preload.so.0 entries (and $f when nothing is left); upgrade keeps them"

[ $fail = 0 ] && echo "ld.so.preload steps: ok"
exit $fail
