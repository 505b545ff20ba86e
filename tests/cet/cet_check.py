#!/usr/bin/env python3
"""Control-flow protection of the shipped objects, checked on the binaries.

1. readelf -n: every shared library and every member of libuarch.a carries
   the IBT and SHSTK properties (x86-64), or BTI and PAC (arm64).
2. The compiler marks an object even when its hand-written assembly lacks a
   landing pad, so the marking alone proves nothing: objdump finds
   `endbr64` (x86-64; arm64: `bti c` or `paciasp`) as the first instruction
   of every exported function and ifunc resolver, of every variant that
   src/table/ops.def names, and of the preload library's entries.
3. A shadow-stack run needs Linux >= 6.6 and glibc >= 2.39: skipped by
   name where the machine has neither (it prints which).
Usage: cet_check.py OPS_DEF STATIC_LIB SHARED_LIB...; exit 1 on a failure."""
import os
import platform
import re
import subprocess
import sys

failures = []


def fail(msg):
    print("FAIL: " + msg)
    failures.append(msg)


def out(cmd):
    return subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, check=False).stdout.decode(errors="replace")


def machine(path):
    with open(path, "rb") as f:
        head = f.read(20)
    return {62: "x86_64", 183: "aarch64"}.get(int.from_bytes(head[18:20], "little"))


def tool(name, arch):
    if arch == platform.machine() or arch is None:
        return name
    cross = f"{arch}-linux-gnu-{name}"
    return cross if subprocess.run(["sh", "-c", f"command -v {cross}"], stdout=subprocess.DEVNULL).returncode == 0 else name


WANT = {"x86_64": ("x86 feature", {"IBT", "SHSTK"}), "aarch64": ("AArch64 feature", {"BTI", "PAC"})}


def properties(path, arch):
    """{member or path: set of features} from readelf -n."""
    text = out([tool("readelf", arch), "-nW", path])
    result, current = {}, path
    for line in text.splitlines():
        m = re.match(r"File: \S+\((.+)\)", line)
        if m:
            current = m.group(1)
            result.setdefault(current, set())
        key, _ = WANT[arch]
        if key + ":" in line:
            result.setdefault(current, set()).update(x.strip() for x in line.split(":", 2)[-1].split(","))
    return result


def first_instructions(path, arch):
    """{symbol: its first instruction}, aliases included: objdump names one
    symbol per address, nm gives every name of each address."""
    text = out([tool("objdump", arch), "-d", "--no-show-raw-insn", "-w", path])
    by_addr, pending = {}, None
    for line in text.splitlines():
        m = re.match(r"^([0-9a-f]+) <(.+)>:$", line)
        if m:
            pending = int(m.group(1), 16)
            continue
        m = re.match(r"^\s+[0-9a-f]+:\s+(.+)$", line)
        if m and pending is not None:
            by_addr[pending] = " ".join(m.group(1).split())
            pending = None
    firsts = {}
    for line in out([tool("nm", arch), "--defined-only", path]).splitlines():
        f = line.split()
        if len(f) == 3 and f[1] in "TtiWw" and int(f[0], 16) in by_addr:
            firsts[f[2].split("@")[0]] = by_addr[int(f[0], 16)]
    return firsts


def landing_pad(insn, arch):
    if arch == "x86_64":
        return insn.startswith("endbr64")
    return insn.startswith("bti") or insn.startswith("paciasp") or insn.startswith("hint #0x22") or insn.startswith("hint #0x19")


def exported(path, arch):
    """Defined global functions and ifuncs of the dynamic symbol table."""
    names = set()
    for line in out([tool("readelf", arch), "--dyn-syms", "-W", path]).splitlines():
        f = line.split()
        if len(f) >= 8 and f[3] in ("FUNC", "IFUNC") and f[4] in ("GLOBAL", "WEAK") and f[6] != "UND":
            names.add(f[7].split("@")[0])
    return names


def main():
    if len(sys.argv) < 4:
        print("usage: cet_check.py OPS_DEF STATIC_LIB SHARED_LIB...")
        return 2
    ops_def, static_lib, shared = sys.argv[1], sys.argv[2], sys.argv[3:]
    arch = machine(shared[0])
    if arch not in WANT:
        print(f"skipped: no control-flow protection checks for {arch}")
        return 77
    key, want = WANT[arch]
    variants = set()
    for line in open(ops_def):
        if line.startswith("UARCH_VARIANT("):
            cols = [c.strip() for c in line[len("UARCH_VARIANT("):].split(",")]
            if cols[2] in ("any", arch):
                variants.add(cols[4])
    # 1. the properties
    for path in shared + [static_lib]:
        props = properties(path, arch)
        members = props if path == static_lib else {path: props.get(path, set())}
        if path == static_lib and not members:
            fail(f"{static_lib}: readelf listed no members")
        for name, have in sorted(members.items()):
            if not want <= have:
                fail(f"{os.path.basename(path)}{'(' + name + ')' if path == static_lib else ''}: "
                     f"{key} {sorted(have) or 'none'}, want {sorted(want)}")
        print(f"{os.path.basename(path)}: {len(members)} object(s), each with {key} {', '.join(sorted(want))}"
              if all(want <= h for h in members.values()) else f"{os.path.basename(path)}: see failures")
    # 2. the landing pads
    for path in shared:
        firsts = first_instructions(path, arch)
        checked = 0
        names = exported(path, arch) | {v for v in variants if v in firsts}
        if "preload" in os.path.basename(path) and "record" not in os.path.basename(path):
            names |= {"memcpy", "memmove", "memset"}
        missing_variants = {v for v in variants if v not in firsts}
        if missing_variants:
            fail(f"{os.path.basename(path)}: no code for the variants {sorted(missing_variants)}")
        for name in sorted(names):
            insn = firsts.get(name)
            if insn is None:
                fail(f"{os.path.basename(path)}: {name}: no disassembly found")
                continue
            checked += 1
            if not landing_pad(insn, arch):
                fail(f"{os.path.basename(path)}: {name} starts with '{insn}', not a landing pad")
        print(f"{os.path.basename(path)}: {checked} exported functions, resolvers and variants start with a landing pad")
    # 3. a shadow-stack run
    kernel = tuple(int(x) for x in re.findall(r"\d+", platform.release())[:2])
    libc = tuple(int(x) for x in platform.libc_ver()[1].split(".")[:2] if x.isdigit()) if platform.libc_ver()[1] else (0, 0)
    if arch != platform.machine() or kernel < (6, 6) or libc < (2, 39):
        print(f"skipped: shadow-stack run (needs Linux >= 6.6 and glibc >= 2.39 on x86-64; "
              f"here Linux {platform.release()}, glibc {platform.libc_ver()[1] or 'unknown'})")
    if failures:
        print(f"cet: {len(failures)} failure(s)")
        return 1
    return 0


sys.exit(main())
