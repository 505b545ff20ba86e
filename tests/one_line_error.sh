# Sourced by the tool tests: expect_error DESCRIPTION PROGRAM [ARG...] runs
# PROGRAM and expects what every tool owes bad input: exit status 2 and
# exactly one line on stderr. Prints ok/FAIL; sets fail=1 on a failure.
expect_error() {
  local desc=$1; shift
  local err rc
  err=$(timeout 20 "$@" 2>&1 >/dev/null); rc=$?
  if [ $rc -ne 2 ] || [ "$(printf '%s\n' "$err" | wc -l)" -ne 1 ] || [ -z "$err" ]; then
    echo "FAIL $desc: rc=$rc stderr=[$err]"; fail=1
  else
    echo "ok   $desc: $err"
  fi
}
