"""Real programs (ls, python3, node, git, sqlite3, the compressors,
CPython's own tests) under LD_BIND_NOW=1 LD_PRELOAD=libuarch_preload.so
give what they give without it. The programs, their inputs and what each
compares are entries of the end-to-end registry, scripts/e2e/programs.py
(CHECKED); a check here runs one."""
import importlib.util
import os
import sys
import tempfile

from checklib import args, base_env, fail, skip
from common import preload_env

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(ROOT, "tools", "run", "py"))
_spec = importlib.util.spec_from_file_location("e2e_registry", os.path.join(ROOT, "scripts", "e2e", "programs.py"))
registry = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(registry)
from workload import Context  # noqa: E402  (tools/run/py: the registry's base classes)


def context(work, scale=1):
    ctx = Context(args.preload_lib, scale, work)
    ctx.plain, ctx.uarch = base_env(), preload_env()
    return ctx


def compared(w, lines=8):
    """w set up and run without and with uarch: the error, or None."""
    w.setup()
    out, error = w.same_output()
    print(f"--- {w.name} ({w.program}, {w.workload}): exit {out[0]}, {len(out[1])} bytes of output"
          f"{', result ' + out[3].decode() if out[3] else ''}")
    print("\n".join(out[1].decode(errors="replace").strip().splitlines()[-lines:]))
    return error and f"{w.program} ({w.workload}): {error}"


def same_with_and_without(entry):
    with tempfile.TemporaryDirectory(prefix=f"uarch-{entry.name}-") as t:
        w = entry(context(t))
        why = w.missing()
        if why:
            skip(f"{w.program}: {why}")
        error = compared(w)
    if error:
        fail(error)


def suite_clients():
    """The end-to-end suite's own commands (not its servers, whose clients
    print timings) at a twentieth of their work."""
    ran, errors = [], []
    with tempfile.TemporaryDirectory(prefix="uarch-suite-") as t:
        for entry in (e for e in registry.ALL if not e.server):
            w = entry(context(t, scale=0.05))
            why = w.missing()
            if why:
                print(f"skip {w.name}: {why}")
                continue
            error = compared(w, lines=2)
            ran.append(w.name)
            errors += [error] if error else []
    print(f"{len(ran)} of the suite's commands compared: {', '.join(ran)}")
    if not ran:
        skip("none of the suite's commands is installed")
    if errors:
        fail("; ".join(errors))


CHECKS = {e.check: (lambda e=e: same_with_and_without(e)) for e in registry.CHECKED}
CHECKS["preload-suite-clients"] = suite_clients

# Checks a cross build cannot make, and why (e2e.py skips them there).
HOST_ONLY = {name: "this machine's programs cannot load the cross build's preload library" for name in CHECKS}
