"""How the preload library binds: every C library name it serves reaches
it (LD_DEBUG=bindings, the fortified _chk names); its symbols name the
variants from load on, its entries jump through pointers and are never
rewritten; where the system refuses what a binding needs (mprotect,
executable memory, pages larger than 4 KiB) every name still binds; and a
program built with AddressSanitizer runs under it."""
import os
import re
import shutil
import tempfile

import exe_wrapper  # tests/exe_wrapper.py: qemu in cross builds
from checklib import SKIP, args, base_env, fail, run, show, skip
from common import PRELOAD_NAMES, lib_arch, local_symbols, preload_env
from ops_table import impl_names, variant_symbol  # (src/table/ops.def, read)


# ---- the names the preload library serves -------------------------------------

def check_ld_debug():
    binding = re.compile(r"binding file (\S+) \[0\] to (\S+) \[0\]: normal symbol `([\w]+)'")
    cases = [(["/bin/ls", "-la", "/"], ["memcpy", "memset"]),
             ([args.fortify, "memcpy", "8"], ["__memcpy_chk", "__memset_chk"]),
             ([args.names], ["mempcpy", "__mempcpy", "bzero", "explicit_bzero", "__memmove_chk",
                             "__mempcpy_chk"])]
    if exe_wrapper.foreign(args.names):   # this machine's ls cannot load the cross build's library
        cases = [c for c in cases if exe_wrapper.foreign(c[0][0])]
    for cmd, syms in cases:
        r = run(cmd, preload_env(LD_DEBUG="bindings"))
        seen = {}
        for m in binding.finditer(r.stderr.decode(errors="replace")):
            if os.path.realpath(m.group(1)) == os.path.realpath(cmd[0]):
                seen[m.group(3)] = m.group(2)
        for s in syms:
            to = seen.get(s)
            ok = to is not None and os.path.basename(to).startswith("libuarch_preload.so")
            print(f"{os.path.basename(cmd[0])}: {s} bound to {to}")
            if not ok:
                fail(f"{cmd[0]}: {s} was not bound to libuarch_preload.so")


def check_fortify():
    h = run([exe_wrapper.tool("objdump", args.fortify), "-d", args.fortify]).stdout.decode()
    for f in (n for n in PRELOAD_NAMES if n.endswith("_chk")):
        if f"<{f}@plt>" not in h:
            fail(f"the fortified program does not call {f}: the test would prove nothing")
    for op in ("memcpy", "memmove", "memset", "mempcpy", "explicit_bzero"):
        for n, overflow in ((0, False), (16, False), (17, True), (4000, True)):
            for label, env in (("preload", preload_env()), ("plain", base_env())):
                r = run([args.fortify, op, str(n)], env)
                err = r.stderr.decode(errors="replace")
                if overflow:
                    ok = r.returncode == -6 and "*** buffer overflow detected ***" in err and not r.stdout
                else:
                    ok = r.returncode == 0 and f"{op} {n} ok" in r.stdout.decode() and not err
                print(f"{label}: fortify {op} {n}: exit {r.returncode} {'(SIGABRT) ' if r.returncode == -6 else ''}"
                      f"{err.strip() or r.stdout.decode().strip()} -> {'ok' if ok else 'WRONG'}")
                if not ok:
                    fail(f"{label}: {op} with n={n} into a 16-byte array")


def check_preload_names():
    r = run([args.names], preload_env(E2E_EXPECT_OBJECT="libuarch_preload.so"))
    show(r, "every preload name under LD_PRELOAD")
    if r.returncode != 0 or b"12 of 12 names checked, all ok" not in r.stdout:
        fail("a preload name is missing, misbound or wrong")
    aborts = r.stderr.decode().count("*** buffer overflow detected ***")
    if aborts != 5:
        fail(f"expected 5 fortify aborts from the _chk names, saw {aborts}")


# ---- how the preload entries are bound ------------------------------------------

def entry_lines(stdout):
    """{name: {impl, addr, own, offset, bytes}}, {name: {bytes, target, offset}}
    for the entries, and the other key=value lines."""
    names, entries, rest = {}, {}, {}
    for line in stdout.decode(errors="replace").splitlines():
        parts = line.split()
        if parts and parts[0] in ("memcpy", "memmove", "memset"):
            names[parts[0]] = dict(p.split("=", 1) for p in parts[1:])
        elif len(parts) > 1 and parts[0] == "entry":
            entries[parts[1]] = dict(p.split("=", 1) for p in parts[2:])
        elif "=" in line:
            k, v = line.split("=", 1)
            rest[k] = v
    return names, entries, rest


def disassemble(hexbytes, vma):
    """objdump's reading of an entry's first bytes, placed at its address
    ([] where no objdump reads the library's architecture)."""
    arch = lib_arch()
    objdump = exe_wrapper.tool("objdump", args.preload_lib)
    with tempfile.NamedTemporaryFile(suffix=".bin") as f:
        f.write(bytes.fromhex(hexbytes))
        f.flush()
        try:
            r = run([objdump, "-D", "-b", "binary", "-mi386:x86-64" if arch == "x86_64" else "-maarch64",
                     f"--adjust-vma={vma}", f.name])
        except OSError:
            return []
    return [ln.strip() for ln in r.stdout.decode().splitlines() if re.match(r"\s*[0-9a-f]+:\t", ln)]


def pointer_entry(hexbytes):
    """True when hexbytes start an entry as linked, which adds its slot's
    offset to the slot's address and jumps there, after its landing pad:
    x86-64 `endbr64; lea off(%rip), %r11; add (%r11), %r11; jmp *%r11`
    (f3 0f 1e fa 4c 8d 1d rel32 4d 03 1b 41 ff e3); arm64 `bti c`,
    `adrp x16, off`, `add x16, x16, #lo12`, `ldr x17, [x16]` (as many of
    those words as given)."""
    b = bytes.fromhex(hexbytes)
    if lib_arch() == "x86_64":
        want = b"\xf3\x0f\x1e\xfa\x4c\x8d\x1d"
        tail = b"\x4d\x03\x1b\x41\xff\xe3"
        if len(b) < len(want):
            return want.startswith(b)
        return b[:7] == want and (len(b) < 11 + len(tail) or b[11:11 + len(tail)] == tail)
    masks = [(0xffffffff, 0xd503245f), (0x9f00001f, 0x90000010), (0xffc003ff, 0x91000210), (0xffffffff, 0xf9400211)]
    words = [int.from_bytes(b[i:i + 4], "little") for i in range(0, min(len(b), 16) - 3, 4)]
    return bool(words) and all(w & m == v for w, (m, v) in zip(words, masks))


def entry_page(lib=None):
    """The offset of the preload library's entry page, in hex (None, and a
    failure, where its symbol table has none)."""
    lib = lib or args.preload_lib
    page = [o for o, n in local_symbols(lib).items() if "uarch_preload_entry_page" in n]
    if len(page) != 1:
        fail(f"no uarch_preload_entry_page in {lib}'s symbol table")
        return None
    return f"{page[0]:x}"


def run_entry(label, prefix=(), lib=None):
    page = entry_page(lib)
    if page is None:
        return {}, {}, {}
    r = run(list(prefix) + [args.entry, page], preload_env(lib))
    show(r, label)
    if r.returncode != 0 or b"all ok" not in r.stdout:
        fail(f"{label}: a name or an entry gave a wrong result (exit {r.returncode})")
    if r.stderr:
        fail(f"{label}: the program printed to stderr")
    names, entries, rest = entry_lines(r.stdout)
    for what, got in (("names", names), ("entries", entries)):
        if sorted(got) != ["memcpy", "memmove", "memset"]:
            fail(f"{label}: expected memcpy, memmove and memset {what}, got {sorted(got)}")
    if rest.get("wx_mappings") != "0":
        fail(f"{label}: {rest.get('wx_mappings')} mappings are writable and executable")
    # An emulator (qemu-user) may keep a page of its own, present from the
    # start; natively there is none.
    start = "0" if not exe_wrapper.foreign(args.entry) else rest.get("anon_exec_at_start")
    if rest.get("anon_exec_mappings") != start:
        fail(f"{label}: after copies of 2 and 64 MiB, {rest.get('anon_exec_mappings')} executable mappings "
             f"are backed by no file, {rest.get('anon_exec_at_start')} before the copies (code written at run time)")
    return names, entries, rest


def variant_symbols(name, impl):
    """The function the table names for the variant uarch_impl() calls impl
    (a set: empty where the table has none)."""
    cxx = [k for k, v in impl_names().items() if v == impl]
    return {variant_symbol(name, c, lib_arch()) for c in cxx} - {None}


def check_entries_unpatched(label, entries):
    """However large the copies, each entry is still its landing pad and a
    jump through its pointer: no code is rewritten at run time."""
    for name, e in entries.items():
        insns = disassemble(e["bytes"], 0)
        print(f"{label}: entry {name}: " + " | ".join(insns[:3]))
        if not pointer_entry(e["bytes"]) or "target" in e:
            fail(f"{label}: entry {name} is not its landing pad and a jump through its pointer: {e['bytes']}")


def check_preload_entry():
    """Under LD_PRELOAD the dynamic symbols memcpy/memmove/memset name the
    variants from load on: the program's own GOT and dlsym hold the variant
    that uarch_impl names, whose code is what the library's symbol table
    says is there. The entries that objects bound before the library call
    jump through pointers, before and after copies of 256 KiB to 64 MiB,
    and no executable mapping without a file appears."""
    if not args.entry:
        skip("preload-entry: no preload_entry program in this build")
    early = "pointer"
    names, entries, rest = run_entry("preload binding")
    start = rest.get("binding_at_start", "")
    if start.split()[0:1] != ["symbols"]:
        fail(f"before main: {start!r}, expected 'symbols' (bound at load)")
    first = re.search(r"first_bytes=([0-9a-f]+)", start)
    if f"entries_at_start={early}" not in start or not first or not pointer_entry(first.group(1)):
        fail(f"before any large copy the entries are {start!r}, expected {early}, jumping through the pointer")
    if rest.get("entries_after_64k") != early:
        fail(f"after a 64 KiB copy: {rest.get('entries_after_64k')!r}, expected {early!r} "
             "(copies below 256 KiB ask for no cache size)")
    late = "pointer"
    if rest.get("binding") != "symbols" or rest.get("entries") != late:
        fail(f"after a large copy: binding {rest.get('binding')!r}, entries {rest.get('entries')!r}, "
             f"expected symbols and {late}")
    syms = local_symbols(args.preload_lib)
    lib_code = open(args.preload_lib, "rb").read()
    # Where the file holds the executable segment's bytes.
    text = [ln for ln in run(["readelf", "-lW", args.preload_lib]).stdout.decode().splitlines()
            if ln.split()[:1] == ["LOAD"] and "E" in ln.split()[-2]]
    f_off, vaddr = (int(text[0].split()[1], 16), int(text[0].split()[2], 16)) if text else (0, 0)
    for name, e in names.items():
        if e["own"] != e["addr"]:
            fail(f"{name}: the program's own address {e['own']} differs from dlsym's {e['addr']}")
        off = int(e.get("offset", "-1"), 16)
        at = syms.get(off, [])
        insns = disassemble(e["bytes"], off)
        print(f"{name} ({e['impl']}) at offset {off:#x} {at}: " + " | ".join(insns[:3]))
        if not variant_symbols(name, e["impl"]) & set(at):
            fail(f"{name}: the symbol names {at}, expected {variant_symbols(name, e['impl'])}")
        # The bytes the call reaches are the library file's own at that
        # offset.
        file_bytes = lib_code[off - vaddr + f_off:off - vaddr + f_off + 16].hex()
        if file_bytes != e["bytes"]:
            fail(f"{name}: the bytes at the symbol ({e['bytes']}) are not the variant's ({file_bytes})")
    check_entries_unpatched("preload binding", entries)


def dynsym_in_relro(lib):
    """Whether lib's .dynsym lies inside its PT_GNU_RELRO range."""
    sections = run(["readelf", "-SW", lib]).stdout.decode()
    m = re.search(r"\.dynsym\s+DYNSYM\s+([0-9a-f]+)\s+[0-9a-f]+\s+([0-9a-f]+)", sections)
    relro = re.search(r"GNU_RELRO\s+0x[0-9a-f]+\s+(0x[0-9a-f]+)\s+0x[0-9a-f]+\s+0x[0-9a-f]+\s+(0x[0-9a-f]+)",
                      run(["readelf", "-lW", lib]).stdout.decode())
    if not m or not relro:
        return False
    at, size, lo = int(m.group(1), 16), int(m.group(2), 16), int(relro.group(1), 16)
    return lo <= at and at + size <= lo + int(relro.group(2), 16)


def check_fallback_names(label, names, plain, symbols):
    """Each name reached the variant of the unrefused run: its symbol
    (symbols) or the entry's jump through its pointer (not symbols)."""
    for name, e in names.items():
        if e["impl"] != plain.get(name, {}).get("impl"):
            fail(f"{label}: {name} bound to {e['impl']}, {plain.get(name, {}).get('impl')} with nothing refused")
        if symbols and e["offset"] != plain.get(name, {}).get("offset"):
            fail(f"{label}: {name} reached offset {e['offset']}, the variant is at {plain.get(name, {}).get('offset')}")
        if not symbols and (e["addr"] != e["own"] or not pointer_entry(e["bytes"])):
            fail(f"{label}: {name} reached {e['bytes'][:24]}, expected the entry's jump through its pointer")


def check_preload_fallback():
    """Where the system refuses what each binding needs, every preload name
    still binds and works; uarch_preload_binding() says how.

    The library's .dynsym lies in RELRO, which ld.so leaves writable until
    it has relocated the library, so the symbol binding makes no system
    call: with every mprotect that asks for PROT_WRITE refused the symbols
    are bound all the same, and with executable anonymous memory refused
    too only the entries keep their pointers. The copy linked without that
    move (.dynsym on a read-only page, the layout a linker without INSERT
    gives) makes the page writable for three stores: with that refused its
    symbols keep the entries. The entries are never rewritten, so a filter
    that kills the process on an mprotect asking for PROT_EXEC, as
    OpenSSH's pre-authentication sandbox does, leaves a program that copies
    64 MiB alive, its names bound."""
    if not args.entry or not args.deny_execmem or not args.preload_lib_mprotect:
        skip("preload-fallback: no preload_entry, deny_execmem or mprotect copy of the library in this build")
    probe = run([args.deny_execmem, "/bin/true"])
    if probe.returncode == SKIP:
        skip("preload-fallback: no seccomp filters here: " + probe.stderr.decode().strip())
    ro = args.preload_lib_mprotect
    # A linker that cannot INSERT (gold, lld) leaves .dynsym where it was:
    # the build says whether its linker took the script.
    relro = args.dynsym_relro != "no"
    if dynsym_in_relro(args.preload_lib) != relro:
        fail(f"{args.preload_lib}: .dynsym {'is not' if relro else 'is'} inside PT_GNU_RELRO, "
             f"but the build {'linked' if relro else 'could not link'} it there")
    if dynsym_in_relro(ro):
        fail(f"{ro}: .dynsym is inside PT_GNU_RELRO: the copy tests no mprotect")
    for lib, what in ((args.preload_lib, "the library"), (ro, "the mprotect copy")):
        plain, _, rest = run_entry(f"{what}, nothing refused", lib=lib)
        if rest.get("binding") != "symbols":
            fail(f"{what}, nothing refused: uarch_preload_binding() says {rest.get('binding')!r}, expected 'symbols'")
        bound = dynsym_in_relro(lib)   # the symbols, with writes refused
        flag_sets = [["-w"], ["-w", "-x"]] + ([["-k", "-x"]] if lib == args.preload_lib else [])
        for flags in flag_sets:
            label = f"{what}, " + {"-w": "writes refused", "-w -x": "writes and executable memory refused",
                                   "-k -x": "a filter that kills on executable memory"}[" ".join(flags)]
            names, entries, rest = run_entry(label, [args.deny_execmem] + flags, lib)
            expect = "symbols" if bound or flags[0] == "-k" else "pointer"
            if rest.get("binding") != expect or rest.get("entries") != "pointer":
                fail(f"{label}: binding {rest.get('binding')!r}, entries {rest.get('entries')!r}, "
                     f"expected {expect!r} and 'pointer'")
            check_fallback_names(label, names, plain, expect == "symbols")
            for name, e in entries.items():
                if not pointer_entry(e["bytes"]):
                    fail(f"{label}: entry {name}: expected the unpatched entry (through its pointer), "
                         f"saw {e['bytes'][:24]}")
    for lib in (args.preload_lib, ro):
        for flags in (["-x"], ["-w", "-x"]):
            r = run([args.deny_execmem] + flags + [args.names],
                    preload_env(lib, E2E_EXPECT_OBJECT=os.path.basename(lib)))
            show(r, f"every preload name of {os.path.basename(lib)}, deny_execmem {' '.join(flags)}")
            if r.returncode != 0 or b"12 of 12 names checked, all ok" not in r.stdout:
                fail(f"{os.path.basename(lib)} with deny_execmem {' '.join(flags)}: a preload name is missing, "
                     "misbound or wrong")


def check_preload_pagesize():
    """arm64 kernels run with 4, 16 or 64 KiB pages, and mprotect refuses an
    address that is not on a page boundary: where the symbol binding makes
    .dynsym writable (the copy linked without the move into RELRO) it must
    round to the page size the kernel reports (AT_PAGESZ), not to 4096.
    qemu-user reports the page size it is given (-p) but accepts any 4
    KiB-aligned address, so its system call trace is what shows the
    rounding: every mprotect of the process (the binding's two, on the
    .dynsym range, and ld.so's) must cover whole pages of that size (the
    kernel refuses an address off a boundary, and rounds a length up: a
    range rounded to 4096 would protect more than it names), and the
    binding must still be "symbols". The library itself, its .dynsym in
    RELRO, binds with no mprotect making a page writable."""
    if lib_arch() == "x86_64":
        skip("preload-pagesize: x86-64 Linux runs with 4 KiB pages only")
    emu = exe_wrapper.wrapper(args.entry) if args.entry else []
    if not emu or not emu[0].startswith("qemu-"):
        skip("preload-pagesize: needs the build's programs to run under qemu-user, which can report other page sizes")
    if not args.preload_lib_mprotect:
        skip("preload-pagesize: no mprotect copy of the preload library in this build")
    for lib, makes_writable in ((args.preload_lib, not dynsym_in_relro(args.preload_lib)),
                                (args.preload_lib_mprotect, True)):
        page = entry_page(lib)
        if page is None:
            return
        for size in (16384, 65536):
            label = f"{os.path.basename(lib)}, AT_PAGESZ {size}"
            r = run(emu + ["-p", str(size), "-strace", "-E", "LD_PRELOAD=" + lib, args.entry, page], base_env())
            print(f"{label}: " + " ".join(ln for ln in r.stdout.decode(errors="replace").splitlines() if "binding" in ln))
            if r.returncode != 0 or b"all ok" not in r.stdout:
                fail(f"{label}: a name or an entry gave a wrong result (exit {r.returncode})")
            _, _, rest = entry_lines(r.stdout)
            if rest.get("binding") != "symbols":
                fail(f"{label}: uarch_preload_binding() says {rest.get('binding')!r}, expected 'symbols'")
            calls = re.findall(r"mprotect\((0x[0-9a-f]+),(\d+),([A-Z_|]+)\)", r.stderr.decode(errors="replace"))
            writable = [c for c in calls if "PROT_WRITE" in c[2]]
            if makes_writable and not writable:
                fail(f"{label}: no mprotect made a page writable: the trace shows no symbol binding")
            if not makes_writable and writable:
                fail(f"{label}: {len(writable)} mprotect calls made pages writable, expected none (.dynsym in RELRO)")
            bad = [c for c in calls if int(c[0], 16) % size or int(c[1]) % size]
            for addr, length, prot in bad:
                fail(f"{label}: mprotect({addr}, {length}, {prot}) is not whole {size}-byte pages")
            print(f"{label}: {len(calls)} mprotect calls, {len(writable)} making pages writable, "
                  f"{len(calls) - len(bad)} of whole pages")


ASAN_GDB = """
import gdb
gdb.execute("set pagination off")
gdb.execute("break main")
gdb.execute("run")
for v in VARIANTS:   # by address: rbreak misses them in a build with debug information
    gdb.Breakpoint("*" + v, internal=True)
seen = set()
for _ in range(200):
    try:
        gdb.execute("continue", to_string=True)
        f = gdb.newest_frame()
    except gdb.error:   # the program ended
        break
    if not f.is_valid() or not (f.name() or "").startswith("uarch_x86_64_mem"):
        break
    caller = f.older()
    seen.add((f.name(), caller.name() if caller else None))
    if len({v for v, c in seen if c == "main"}) >= 3:
        break
for v, c in sorted(seen, key=str):
    print(f"variant {v} called from {c}")
if gdb.selected_inferior().pid:
    gdb.execute("kill")
"""


def check_preload_asan():
    """A program built with AddressSanitizer runs under the preload library
    when the sanitizer's runtime is preloaded first (ASan refuses to start
    otherwise): its copies and fills are right, an overflowing memcpy is
    still reported, and the program's calls reach uarch's variants (under
    gdb, a breakpoint on each)."""
    if lib_arch() != "x86_64" or os.uname().machine != "x86_64":
        skip("preload-asan: written for x86-64 (the variants' names)")
    cc = shutil.which("gcc")
    libasan = run([cc, "-print-file-name=libasan.so"]).stdout.decode().strip() if cc else ""
    if not os.path.isabs(libasan) or not os.path.exists(libasan):
        skip("preload-asan: gcc's libasan.so is not installed")
    src = os.path.join(os.path.dirname(os.path.abspath(__file__)), "asan_copy.c")
    with tempfile.TemporaryDirectory() as tmp:
        exe = os.path.join(tmp, "asan_copy")
        r = run([cc, "-fsanitize=address", "-O1", "-g", src, "-o", exe])
        if r.returncode != 0:
            show(r, "gcc -fsanitize=address")
            fail("preload-asan: the ASan program does not build")
            return
        env = base_env(LD_PRELOAD=f"{libasan}:{args.preload_lib}")
        env.pop("ASAN_OPTIONS", None)   # ASan's own check of the load order, as users get it
        for n in ("0", "100", "5000", "300000"):
            r = run([exe, n], env)
            if r.returncode != 0 or r.stdout.strip() != f"ok {n}".encode():
                show(r, f"asan_copy {n}")
                fail(f"asan_copy {n}: wrong result under ASan and the preload library")
        r = run([exe, "1000", "+1"], env)
        if b"heap-buffer-overflow" not in r.stderr or r.returncode == 0:
            show(r, "asan_copy 1000 +1")
            fail("an overflowing memcpy under the preload library went unreported by ASan")
        else:
            print("ASan reports the overflowing memcpy under the preload library")
        wrong_order = dict(env, LD_PRELOAD=f"{args.preload_lib}:{libasan}")
        r = run([exe, "100"], wrong_order)
        print(f"the preload library ahead of ASan's runtime: exit {r.returncode}, "
              f"{r.stderr.decode(errors='replace').strip()[:100]}")
        if r.returncode == 0 or b"does not come first" not in r.stderr:
            fail("ASan started with the preload library ahead of its runtime: the README's advice is out of date")
        if not shutil.which("gdb"):
            fail("preload-asan: gdb not found (scripts/deps.sh installs it)")
            return
        script = os.path.join(tmp, "asan.py")
        variants = sorted({n for names in local_symbols(args.preload_lib).values() for n in names
                           if re.match(r"uarch_x86_64_mem(cpy|move|set)_", n)})
        with open(script, "w") as f:
            f.write(f"VARIANTS = {variants!r}\n" + ASAN_GDB)
        r = run(["gdb", "-q", "-batch", "-ex", f"set environment LD_PRELOAD={libasan}:{args.preload_lib}",
                 "-x", script, "--args", exe, "300000"], timeout=120)
        lines = [ln for ln in r.stdout.decode(errors="replace").splitlines() if ln.startswith("variant ")]
        print("\n".join(lines))
        from_main = {ln.split()[1] for ln in lines if ln.endswith(" main")}
        ops = {re.sub(r"^uarch_x86_64_(mem\w+?)_.*", r"\1", v) for v in from_main}
        if not ({"memset"} <= ops and ops & {"memcpy", "memmove"}):
            show(r, "gdb")
            fail(f"the program's copies and fills did not all reach uarch's variants (seen from main: {sorted(from_main)})")


CHECKS = {
    "ld-debug-bindings": check_ld_debug,
    "fortify": check_fortify,
    "preload-names": check_preload_names,
    "preload-entry": check_preload_entry,
    "preload-fallback": check_preload_fallback,
    "preload-pagesize": check_preload_pagesize,
    "preload-asan": check_preload_asan,
}

# Checks a cross build cannot make, and why (e2e.py skips them there).
HOST_ONLY = {
    "preload-asan": "it builds an ASan program with this machine's gcc; the native build checks it",
}
