#!/usr/bin/env python3
"""Runs `uarch-info --json` (through the exe wrapper, e.g. qemu-aarch64 with
QEMU_CPU set by the test) and checks what it reports for the emulated CPU.

    info_check.py --core CORE --memcpy IMPL -- [wrapper...] uarch-info
"""
import argparse
import json
import subprocess
import sys

ap = argparse.ArgumentParser()
ap.add_argument("--core", required=True)
ap.add_argument("--memcpy", required=True)
ap.add_argument("cmd", nargs="+")
a = ap.parse_args()

out = subprocess.run(a.cmd + ["--json"], capture_output=True, text=True, timeout=60)
if out.returncode != 0:
    print(out.stdout, out.stderr)
    sys.exit(f"uarch-info --json exited with {out.returncode}")
info = json.loads(out.stdout)
print(f"core={info.get('core')} midr={info.get('midr')} impl={info.get('impl')}")
fails = []
checks = 4 + (a.memcpy == "ampereone")
if info.get("arch") != "aarch64":
    fails.append(f"arch {info.get('arch')!r}, want 'aarch64'")
if info.get("core") != a.core:
    fails.append(f"core {info.get('core')!r}, want {a.core!r}")
for key in ("impl", "policy"):
    got = info.get(key, {}).get("memcpy")
    if got != a.memcpy:
        fails.append(f"{key}.memcpy {got!r}, want {a.memcpy!r}")
if a.memcpy == "ampereone" and info.get("thresholds", {}).get("prefetch_distance") != 2048:
    fails.append("thresholds.prefetch_distance is not the seed's 2048")
for f in fails:
    print("FAIL", f)
print(f"{checks - len(fails)} of {checks} checks passed")
sys.exit(1 if fails else 0)
