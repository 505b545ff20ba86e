"""What the Python test scripts share (tests/e2e/e2e.py and its modules,
tests/e2e/profile.py, tests/hardening/hardening.py): failures and skips,
the environment their programs start with, running a program (through
exe_wrapper, so a cross build's programs run under its emulator), and the
driver of a script of checks, `SCRIPT CHECK --key=value ...`.

Exit 0: passed, 1: failed, 77: skipped (the reason is printed, by name).
"""
import argparse
import os
import subprocess
import sys

import exe_wrapper  # tests/exe_wrapper.py: qemu in cross builds

SKIP = 77
# The parsed command line: main() fills this object in place, so a module
# that did `from checklib import args` sees the values.
args = argparse.Namespace()
failures = []

# What a test sets itself: the tunables and the dynamic loader's variables
# of the shell that runs the tests must not reach the programs.
STRIPPED = ("UARCH_TUNABLES", "LD_PRELOAD", "LD_BIND_NOW", "LD_DEBUG", "LD_LIBRARY_PATH")


def fail(msg):
    print("FAIL: " + msg)
    failures.append(msg)


def skip(msg):
    print("SKIP: " + msg)
    sys.exit(SKIP)


def base_env(keep=(), **extra):
    """os.environ without STRIPPED (but for the names in keep), and extra's
    values that are not None."""
    env = {k: v for k, v in os.environ.items() if k not in STRIPPED or k in keep}
    env.update({k: v for k, v in extra.items() if v is not None})
    return env


def run(cmd, env=None, timeout=300, **kw):
    cmd, env = exe_wrapper.wrap(cmd, env if env is not None else base_env())
    r = subprocess.run(cmd, env=env, stdout=subprocess.PIPE,
                       stderr=subprocess.PIPE, timeout=timeout, **kw)
    return r


def show(r, what):
    print(f"--- {what}: exit {r.returncode}")
    out = r.stdout.decode(errors="replace")
    err = r.stderr.decode(errors="replace")
    if out:
        print(out[-3000:].rstrip())
    if err:
        print("stderr: " + err[-3000:].rstrip())


def main(checks, arg_keys, host_only=None):
    """Runs the check the command line names: checks maps its name to a
    function, arg_keys are the --key=value options, host_only maps a check
    a cross build cannot make to the reason (skipped there)."""
    p = argparse.ArgumentParser()
    p.add_argument("check", choices=sorted(checks))
    for k in arg_keys:
        p.add_argument("--" + k)
    p.parse_args(namespace=args)
    if host_only and getattr(args, "lib", None) and exe_wrapper.foreign(args.lib) and args.check in host_only:
        skip(f"{args.check}: {host_only[args.check]} (a cross build: its programs run under "
             f"{' '.join(exe_wrapper.wrapper(args.lib)) or 'an emulator'})")
    checks[args.check]()
    if failures:
        print(f"{args.check}: {len(failures)} failure(s)")
        sys.exit(1)
    print(f"{args.check}: passed")
