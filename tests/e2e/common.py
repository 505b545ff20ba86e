"""What several of the end-to-end checks (e2e.py's modules) use: the C
library's names the preload library serves, the environment of a run
under it, the bindings a program prints, and the libraries' architecture
and symbols."""
import functools
import os

import exe_wrapper  # tests/exe_wrapper.py: qemu in cross builds
from checklib import args, base_env, run
from ops_table import libc_names  # (src/table/libc_names.def, read)

PRELOAD_NAMES = [n for n, _, _ in libc_names()]   # src/table/libc_names.def


def preload_env(lib=None, **extra):
    return base_env(LD_BIND_NOW="1", LD_PRELOAD=lib or args.preload_lib, **extra)


def bindings(stdout):
    """op -> variant from the 'op=variant' lines of impl_print & co."""
    out = {}
    for line in stdout.decode(errors="replace").splitlines():
        if line.startswith("#") or "=" not in line:
            continue
        k, v = line.split("=", 1)
        out[k.strip()] = v.strip()
    return out


# ELF e_machine -> the architecture's name in the variants' symbols.
ARCH_NAMES = {62: "x86_64", 183: "aarch64"}


def lib_arch():
    return ARCH_NAMES.get(exe_wrapper.machine(args.preload_lib))


@functools.lru_cache(maxsize=None)
def local_symbols(lib):
    """offset -> names, from the library's full symbol table (read once)."""
    out = {}
    for line in run([exe_wrapper.tool("nm", lib), lib]).stdout.decode().splitlines():
        parts = line.split()
        if len(parts) == 3:
            out.setdefault(int(parts[0], 16), []).append(parts[2])
    return out


def find_info():
    p = args.info or os.path.join(os.environ.get("UARCH_BUILD_ROOT", ""), "tools", "info", "uarch-info")
    return p if p and os.path.isfile(p) and os.access(p, os.X_OK) else None
