#!/usr/bin/env python3
"""End-to-end checks of uarch in its three link modes and in real programs.

Each check is one Meson test (see meson.build): `e2e.py CHECK --key=path ...`.
Exit 0: passed, 1: failed, 77: skipped (the reason is printed, by name).

The checks, by concern, in this directory: link_modes.py (the link modes,
tunables, set-id, CPUID at load, static --wrap), programs.py (real programs
under LD_PRELOAD), binding.py (how the preload library binds its names and
entries, and where the system refuses what that needs), elf.py (library
hygiene and the code generated), install.py (subproject, install,
pkg-config, CMake); what several share is in common.py, the driver and the
helpers of every test script in tests/checklib.py.
"""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
import checklib  # noqa: E402  (tests/checklib.py: fail, skip, run, the driver)
import binding  # noqa: E402
import elf  # noqa: E402
import install  # noqa: E402
import link_modes  # noqa: E402
import programs  # noqa: E402

MODULES = (link_modes, programs, binding, elf, install)
CHECKS = {name: check for m in MODULES for name, check in m.CHECKS.items()}

# Checks a cross build cannot make: they run this machine's programs with
# the cross build's library, or need the kernel to see the program itself.
HOST_ONLY = {name: why for m in MODULES for name, why in m.HOST_ONLY.items()}

ARGS = ("shared", "static", "preload-prog", "preload-lib", "lib", "static-lib", "secure-helper",
        "fortify", "names", "raw-cpuid", "info", "entry", "deny-execmem", "preload-lib-mprotect",
        "dynsym-relro", "record-lib")


def main():
    checklib.main(CHECKS, ARGS, HOST_ONLY)


if __name__ == "__main__":
    main()
