"""Running the build's programs from a test script in a cross build (arm64
under qemu-user, cross/aarch64-linux-gnu.ini).

wrap() puts an emulator in front of a command whose program is an ELF file
for another machine than this one, and gives the dynamic loader's variables
(LD_PRELOAD, LD_BIND_NOW, LD_DEBUG) to the emulated program alone, as qemu
-E options: left in the environment they would act on qemu itself. In a
native build everything passes through unchanged.

The emulator: MESON_EXE_WRAPPER, the cross file's exe_wrapper (Meson sets
it for tests whose program is a cross binary; the meson.build of a script
run by the build machine's Python sets it itself).
"""
import os
import shlex
import shutil
import sys

ENV_WRAPPER = shlex.split(os.environ.get("MESON_EXE_WRAPPER", ""))
GUEST_ONLY = ("LD_PRELOAD", "LD_BIND_NOW", "LD_DEBUG")
# ELF e_machine -> the prefix of Debian's binutils for it.
TOOL_PREFIX = {183: "aarch64-linux-gnu-", 62: "x86_64-linux-gnu-"}


def machine(path):
    """The ELF e_machine of path, or None when it is not an ELF file."""
    try:
        with open(path, "rb") as f:
            h = f.read(20)
    except OSError:
        return None
    if len(h) < 20 or h[:4] != b"\x7fELF":
        return None
    return int.from_bytes(h[18:20], "little" if h[5] == 1 else "big")


HOST = machine(sys.executable) or machine("/bin/sh")


def foreign(path):
    """True when path is an ELF program this machine cannot run itself."""
    m = machine(str(path))
    return m is not None and m != HOST


def wrapper(path):
    """The emulator command for the program path ([] when none is needed)."""
    return ENV_WRAPPER if foreign(path) else []


def wrap(cmd, env):
    """(cmd, env) that runs cmd; env's keys and values may be str or bytes."""
    w = wrapper(cmd[0]) if cmd else []
    if not w:
        return cmd, env
    out, opts = {}, []
    for k, v in env.items():
        ks = k.decode() if isinstance(k, bytes) else k
        if ks in GUEST_ONLY:
            opts += ["-E", ks + "=" + (v.decode() if isinstance(v, bytes) else v)]
        else:
            out[k] = v
    return w + opts + list(cmd), out


def tool(name, path):
    """A binutils program (objdump, ...) that understands the ELF file path."""
    if foreign(path):
        t = shutil.which(TOOL_PREFIX.get(machine(path), "") + name)
        if t:
            return t
    return name
