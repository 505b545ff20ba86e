#!/usr/bin/env python3
"""Code pointers that stay writable: RELATIVE relocations whose value lies
in an executable segment, at an address outside PT_GNU_RELRO. Each would be
a function pointer an attacker who can write memory could aim anywhere, for
the life of every process that loads the library. Fails naming them.
usage: relro_check.py LIBRARY..."""
import re
import subprocess
import sys


def readelf(*args):
    return subprocess.run(["readelf", "-W", *args], check=True, capture_output=True, text=True).stdout


def segments(lib):
    exe, relro = [], []
    for line in readelf("-l", lib).splitlines():
        f = line.split()
        if len(f) >= 8 and f[0] in ("LOAD", "GNU_RELRO"):
            vaddr, memsz = int(f[2], 16), int(f[5], 16)
            if f[0] == "GNU_RELRO":
                relro.append((vaddr, vaddr + memsz))
            elif "E" in line.split()[6:-1]:
                exe.append((vaddr, vaddr + memsz))
    return exe, relro


def main(libs):
    bad = 0
    for lib in libs:
        exe, relro = segments(lib)
        inside = lambda a, ranges: any(lo <= a < hi for lo, hi in ranges)
        writable = []
        for line in readelf("-r", lib).splitlines():
            m = re.match(r"\s*([0-9a-f]+)\s+\S+\s+R_(?:X86_64|AARCH64)_RELATIVE\s+([0-9a-f]+)", line)
            if m:
                at, value = int(m.group(1), 16), int(m.group(2), 16)
                if inside(value, exe) and not inside(at, relro):
                    writable.append(f"{at:#x} -> {value:#x}")
        print(f"{lib}: {len(writable)} code pointers outside RELRO {' '.join(writable)}")
        bad += len(writable)
    if bad:
        print(f"FAIL: {bad} writable code pointers")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
