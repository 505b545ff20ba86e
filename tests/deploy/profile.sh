#!/usr/bin/env bash
# docs/deploy.md's system profile rules, in a private mount namespace over
# a copy of /etc (ns.sh), with the profile at the path this build reads:
# a newer profile read by this library (unknown key and variant rejected
# alone, the rest applied), a profile the process may not open (as an
# AppArmor denial: built-in values, nothing printed), and the postrm block
# of docs/deploy.md on remove and purge.
#   profile.sh UARCH_INFO PRELOAD_SO BOUND_EXE DEPLOY_MD
set -uo pipefail
. "$(dirname "$0")/ns.sh"
info=$1 lib=$2 bound=$3 doc=$4
fail=0
bad() { echo "FAIL: $*"; fail=1; }

plain=$("$info")
path=$(sed -n 's/^profile  *\(\/.*\): [a-z].*/\1/p' <<<"$plain")
[ -n "$path" ] || { echo "FAIL: uarch-info names no profile path"; exit 1; }
# Make the profile's directory writable here: under /etc it is the copy;
# elsewhere an empty tmpfs over its nearest existing parent, in this
# namespace only (never over / or /usr).
dir=$(dirname "$path")
case $dir in
/etc | /etc/*) ;;
*)
	top=$dir
	while [ ! -d "$top" ]; do top=$(dirname "$top"); done
	case $top in / | /usr) echo "skipped: the profile path $path is right under $top"; exit 77 ;; esac
	mount -t tmpfs -o mode=755 tmpfs "$top" || { echo "skipped: cannot mount a tmpfs on $top"; exit 77; }
	;;
esac
mkdir -p "$dir"
memcpy_default=$(sed -n 's/^  memcpy  *//p' <<<"$plain")

echo "== a profile with a key and a variant this library does not know ($path)"
printf '# uarch-tune of a newer release\nnt_threshold=32M\nfuture_key=7\nmemcpy=avx1024\nrep_stosb_threshold=2K\n' > "$path"
chmod 644 "$path"
out=$("$info")
grep -E '^(profile|tunables|  (applied|rejected))' <<<"$out"
grep -q "^profile  *$path: applied" <<<"$out" || bad "profile not applied"
grep -Eq '^  applied +nt_threshold=32M +\(profile\)' <<<"$out" || bad "nt_threshold=32M not applied"
grep -Eq '^  applied +rep_stosb_threshold=2K +\(profile\)' <<<"$out" || bad "rep_stosb_threshold=2K not applied"
grep -Eq '^  rejected +future_key=7: unknown key' <<<"$out" || bad "future_key=7 not rejected as an unknown key"
grep -Eq '^  rejected +memcpy=avx1024: unknown variant' <<<"$out" || bad "memcpy=avx1024 not rejected as an unknown variant"
[ "$(sed -n 's/^  memcpy  *//p' <<<"$out")" = "$memcpy_default" ] || bad "memcpy is not the policy's $memcpy_default"
e=$(LD_PRELOAD=$lib "$bound" 2>&1 >/dev/null)
[ -z "$e" ] || bad "a preloaded process printed: $e"

echo "== a process that may not open the profile (as under an AppArmor denial)"
chmod 600 "$path"
nobody=$(id -u nobody 2>/dev/null)
if [ -z "$nobody" ] || ! command -v setpriv >/dev/null; then
	echo "note: no user nobody or no setpriv: case not run"
else
	as_nobody() { setpriv --reuid="$nobody" --regid="$nobody" --clear-groups "$@"; }
	out=$(as_nobody "$info" 2>"$tmp/err")
	grep -E '^(profile|tunables)' <<<"$out"
	grep -q "^profile  *$path: unreadable" <<<"$out" || bad "status is not 'unreadable'"
	grep -q '^tunables  (none)' <<<"$out" || bad "entries applied from a profile that could not be read"
	[ "$(sed -n 's/^  memcpy  *//p' <<<"$out")" = "$memcpy_default" ] || bad "memcpy is not the policy's"
	b=$(as_nobody env LD_PRELOAD="$lib" "$bound" 2>"$tmp/err")
	echo "preloaded, profile refused: uarch_preload_binding() = $b, stderr: '$(cat "$tmp/err")'"
	case $b in symbols|pointer) ;; *) bad "not bound with the profile refused: $b" ;; esac
	[ -s "$tmp/err" ] && bad "the library printed with the profile refused: $(cat "$tmp/err")"
fi

echo "== postrm (docs/deploy.md) on remove and purge"
postrm=$(awk '/^<!-- postrm -->/ { on = 1; next } on && /^```/ { if (in_) exit; in_ = 1; next } in_' "$doc")
[ -n "$postrm" ] || bad "no postrm block after '<!-- postrm -->' in $doc"
mkdir -p /etc/uarch
echo nt_threshold=32M > /etc/uarch/tunables
touch /etc/uarch/tunables.tmp.4242
sh -ec "$postrm" postrm remove || bad "postrm remove failed"
[ -f /etc/uarch/tunables ] || bad "postrm remove deleted the profile"
sh -ec "$postrm" postrm purge || bad "postrm purge failed"
[ -e /etc/uarch ] && bad "postrm purge left: $(ls -A /etc/uarch)"
mkdir -p /etc/uarch && touch /etc/uarch/tunables /etc/uarch/README.local
sh -ec "$postrm" postrm purge || bad "postrm purge failed with another file in /etc/uarch"
[ -e /etc/uarch/tunables ] && bad "postrm purge kept the profile"
[ -e /etc/uarch/README.local ] || bad "postrm purge removed a file it did not write"
echo "postrm: remove keeps /etc/uarch/tunables, purge removes it (and /etc/uarch when empty)"

[ $fail = 0 ] && echo "system profile rules: ok"
exit $fail
