"""Library hygiene and the code the compiler made: each library exports
what it is for and nothing else, needs no C++ runtime, has no text
relocations and a non-executable stack; the hand-written lists of the
preload names agree with the table; the x86-64 entries are frameless and
each variant lies within one 4 KiB page; uarch-info reports the CPU's
features and the library's bindings."""
import functools
import json
import os
import re

import exe_wrapper  # tests/exe_wrapper.py: qemu in cross builds
from checklib import args, fail, run, show, skip
from common import PRELOAD_NAMES, bindings, find_info, lib_arch
from ops_table import OPS, impl_names, variant_symbol  # (src/table/ops.def, read)

PRELOAD_QUERY = ["uarch_preload_impl", "uarch_preload_op", "uarch_preload_binding", "uarch_preload_entries"]
API_NAMES = ["uarch_memcpy", "uarch_memmove", "uarch_memset", "uarch_prefetch_range",
             "uarch_idle_wait", "uarch_idle_wake", "uarch_idle_wait_shared", "uarch_idle_wake_shared", "uarch_impl", "uarch_op", "uarch_smp_mb", "uarch_smp_rmb",
             "uarch_smp_wmb", "uarch_cpu_relax", "uarch_prefetch", "uarch_prefetchw"]


@functools.lru_cache(maxsize=None)
def sized_symbols(lib):
    """name -> (offset, size), for the symbols of lib's full table that
    have a size (read once)."""
    out = {}
    for line in run([exe_wrapper.tool("nm", lib), "-S", lib]).stdout.decode().splitlines():
        parts = line.split()
        if len(parts) == 4:
            out[parts[3]] = (int(parts[0], 16), int(parts[1], 16))
    return out


# ---- library hygiene ----------------------------------------------------------

def dynsyms(lib, *flags):
    r = run(["nm", "-D"] + list(flags) + [lib])
    out = []
    for line in r.stdout.decode().splitlines():
        parts = line.split()
        if parts:
            out.append(parts[-1])
    return out


def check_hygiene():
    # What each library is for, and nothing else: the API under UARCH_0 in
    # libuarch.so; the C library's names, unversioned, and a query of their
    # binding in the preload library. An unversioned uarch_* there would
    # satisfy a program's uarch_memcpy@UARCH_0 in place of libuarch.so's.
    for lib, expect in ((args.lib, set(API_NAMES)), (args.preload_lib, set(PRELOAD_NAMES + PRELOAD_QUERY))):
        name = os.path.basename(lib)
        d = run(["readelf", "-dW", lib]).stdout.decode()
        needed = re.findall(r"\(NEEDED\)\s+Shared library: \[([^\]]+)\]", d)
        print(f"{name}: NEEDED {needed}")
        for n in needed:
            if n.startswith(("libstdc++", "libgcc_s", "libasan", "libubsan", "libm.")):
                fail(f"{name} needs {n} at run time")
        if "TEXTREL" in d:
            fail(f"{name} has text relocations")
        phdrs = run(["readelf", "-lW", lib]).stdout.decode()
        m = re.search(r"GNU_STACK.*\s(RWE|RW)\s", phdrs)
        if not m or m.group(1) != "RW":
            fail(f"{name}: stack is not marked non-executable")
        # The version node's own symbol (UARCH_0) is no export.
        defined = [s for s in dynsyms(lib, "--defined-only") if s.split("@")[0] != "UARCH_0"]
        plain = set(s.split("@")[0] for s in defined)
        print(f"{name}: {len(defined)} exported symbols: {' '.join(sorted(defined))}")
        if lib == args.lib:
            unversioned = [s for s in defined if not s.endswith("@@UARCH_0")]
            if unversioned:
                fail(f"{name}: exports outside the version node UARCH_0: {unversioned}")
        else:
            versioned = [s for s in defined if "@" in s]
            if versioned:
                fail(f"{name}: C library names are versioned ({versioned}); they would not interpose")
        if plain - expect:
            fail(f"{name} exports {sorted(plain - expect)}")
        if expect - plain:
            fail(f"{name} lacks {sorted(expect - plain)}")
        undef = dynsyms(lib, "--undefined-only")
        print(f"{name}: undefined: {' '.join(undef) or '(none)'}")
        bad = [s for s in undef if s.split("@")[0] in PRELOAD_NAMES]
        if bad:
            fail(f"{name} calls {bad} from the outside (recursion, and unbound inside resolvers)")
    # The static library too: a compiler-made memcpy call would jump through
    # an IRELATIVE slot that is not filled yet when a resolver runs.
    u = run(["nm", "--undefined-only", args.static_lib]).stdout.decode().split()
    bad = sorted(set(s for s in u if s in PRELOAD_NAMES))
    print(f"{os.path.basename(args.static_lib)}: references to C library copy names: {bad or 'none'}")
    if bad:
        fail(f"libuarch.a calls {bad}")
    # The two lists written by hand besides the table: the Debian symbols
    # file's block of the preload library, and the README.
    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    with open(os.path.join(root, "debian", "libuarch0.symbols")) as f:
        block = f.read().split("libuarch_preload.so.0 ")[1].split("\n", 1)[1]
    listed = set(line.split("@")[0].strip() for line in block.splitlines() if line.startswith(" "))
    if listed != set(PRELOAD_NAMES + PRELOAD_QUERY):
        fail(f"debian/libuarch0.symbols lists {sorted(listed ^ set(PRELOAD_NAMES + PRELOAD_QUERY))} unlike "
             "src/table/libc_names.def and the preload queries")
    with open(os.path.join(root, "README.md")) as f:
        readme = f.read()
    missing = [n for n in PRELOAD_NAMES if not re.search(r"(?<![\w])" + re.escape(n) + r"(?![\w])", readme)]
    if missing:
        fail(f"README.md does not name {missing} (src/table/libc_names.def)")
    print(f"debian/libuarch0.symbols and README.md name the {len(PRELOAD_NAMES)} names of src/table/libc_names.def")
    so = run(["readelf", "-dW", args.lib]).stdout.decode()
    if "Library soname: [libuarch.so.0]" not in so:
        fail("libuarch.so's soname is not libuarch.so.0")
    check_frameless()
    check_one_page()


def check_one_page():
    """Every memcpy/memmove/memset variant of this architecture lies within
    one 4 KiB page, in both libraries: a branch taken into the next page
    cost the avx512 copy's small sizes 0.27 ns a call (Zen 4 guest, see
    UARCH_MEM_ENTRY), so where the linker puts a variant must not decide
    its speed. Unoptimised builds (-O0, -Og) are not held to it: the avx512
    copy alone is 5 KiB there."""
    opt = build_optimization()
    if opt is None:
        return
    if opt in ("0", "g", "plain"):
        print(f"one page: not checked at -O{opt}")
        return
    arch = lib_arch()
    wanted = {variant_symbol(op, impl, arch) for op in ("memcpy", "memmove", "memset") for impl in impl_names()}
    wanted = {w for w in wanted if w and not w.startswith("uarch_generic_")}
    if not wanted:
        fail(f"one page: the table names no {arch} memory variant")
        return
    for lib in (args.lib, args.preload_lib):
        sized = {n: v for n, v in sized_symbols(lib).items() if n in wanted}
        name = os.path.basename(lib)
        if set(sized) != wanted:
            fail(f"{name}: no sized symbol for {sorted(wanted - set(sized))}")
        crossing = 0
        for sym, (at, size) in sorted(sized.items()):
            last = at + size - 1
            if at // 4096 != last // 4096:
                fail(f"{name}: {sym} [{at:#x}, {last:#x}] crosses a 4 KiB page boundary")
                crossing += 1
        print(f"one page: {name}: {len(sized)} variants, {crossing} crossing a 4 KiB page boundary "
              f"(largest {max((z for _, z in sized.values()), default=0)} bytes)")


def build_optimization():
    """The build's -O level as meson names it, or None (and a failure)."""
    try:
        with open(os.path.join(os.environ["UARCH_BUILD_ROOT"], "meson-info", "intro-buildoptions.json")) as f:
            return next(o["value"] for o in json.load(f) if o["name"] == "optimization")
    except (KeyError, OSError, StopIteration, ValueError):
        fail("cannot read the build's optimization level (UARCH_BUILD_ROOT)")
        return None


def check_frameless():
    """The x86-64 vector and erms entries run without a stack frame: a frame
    that realigns the stack for zmm spills costs every call that takes the
    path (mem_avx512.cpp, inline_loop)."""
    if "X86-64" not in run(["readelf", "-hW", args.lib]).stdout.decode():
        print("frameless entries: not an x86-64 library")
        return
    opt = build_optimization()
    if opt is None:
        return
    if opt not in ("2", "3", "s"):
        print(f"frameless entries: not checked at -O{opt} (the sanitizer tree's -O1 keeps frames)")
        return
    want = re.compile(r"^uarch_x86_64_mem(cpy|move|set)_(sse2|avx2|avx512|erms)$")
    # name -> (offset, size); memmove_X may alias memcpy_X
    entries = {n: v for n, v in sized_symbols(args.lib).items() if want.match(n)}
    names = sorted(entries)
    if len(names) < 12:
        fail(f"frameless entries: found {len(names)} x86-64 entries ({names}), expected 12")
    for n in names:
        off, size = entries[n]
        dis = run(["objdump", "-d", "--no-show-raw-insn", f"--start-address={off:#x}",
                   f"--stop-address={off + size:#x}", args.lib]).stdout.decode()
        body = [l for l in dis.splitlines() if re.match(r"^\s+[0-9a-f]+:\t", l)]
        if not body:
            fail(f"{n}: objdump showed no instructions")
        frame = [l.strip() for l in body if re.search(r"\bpush|%rsp|%rbp", l)]
        if frame:
            fail(f"{n} sets up a stack frame: {frame[:3]}")
        else:
            print(f"frameless entries: {n}: {len(body)} instructions, none touches %rsp or %rbp")


def flat_features(j):
    f = j.get("features")
    if isinstance(f, dict):
        return {k for k, v in f.items() if v}
    if isinstance(f, list):
        return set(f)
    return None


def check_info_features():
    info = find_info()
    if not info:
        skip("uarch-info features: tools/info/uarch-info is not built")
    r = run([info, "--json"])
    if r.returncode != 0:
        show(r, "uarch-info --json")
        fail("uarch-info --json failed")
        return
    try:
        j = json.loads(r.stdout)
    except ValueError as e:
        fail(f"uarch-info --json is not JSON: {e}")
        return
    feats = flat_features(j)
    if feats is None:
        fail("uarch-info --json has no features list")
        return
    if args.raw_cpuid:   # x86-64 only
        raw = bindings(run([args.raw_cpuid]).stdout)
        for k in ("avx512f", "erms", "fsrm", "fsrs"):
            have, want = k in feats, raw.get(k) == "1"
            print(f"{k}: raw CPUID {int(want)}, uarch-info {int(have)}")
            if have != want:
                fail(f"uarch-info says {k}={int(have)}, CPUID says {int(want)}")
    if j.get("ops") != OPS:
        fail(f"uarch-info --json ops {j.get('ops')} differ from src/table/ops.def's {OPS}")
    impl = j.get("impl", {})
    mine = bindings(run([args.shared]).stdout)
    for op in OPS:
        if op in impl and impl[op] != mine.get(op):
            fail(f"uarch-info impl {op}={impl[op]} but uarch_impl says {mine.get(op)}")
    print(f"uarch-info impl: {impl}")


CHECKS = {
    "hygiene": check_hygiene,
    "info-features": check_info_features,
}

# Checks a cross build cannot make, and why (e2e.py skips them there).
HOST_ONLY = {}
