"""The three link modes (a PIE linked to libuarch.so, a static program
linked to libuarch.a, a program that finds uarch under LD_PRELOAD) bind
alike; UARCH_TUNABLES applies in each, and never under AT_SECURE; the
preload library runs no CPUID beyond its constructor; a static program
sends its memcpy family to uarch with GNU ld's --wrap."""
import os
import re
import shutil
import tempfile

from checklib import args, base_env, fail, failures, run, show, skip
from common import bindings, local_symbols, preload_env
from ops_table import OPS  # (src/table/ops.def, read)


# ---- the three link modes ----------------------------------------------------

def at_secure(stdout):
    m = re.search(r"at_secure=(\d+)", stdout.decode(errors="replace"))
    return int(m.group(1)) if m else None


def three_modes(tunables=None, **extra):
    """Runs impl_print in the three link modes; returns {mode: bindings}."""
    res = {}
    for mode, cmd, env in (("shared", [args.shared], base_env(UARCH_TUNABLES=tunables, **extra)),
                           ("static", [args.static], base_env(UARCH_TUNABLES=tunables, **extra)),
                           ("preload", [args.preload_prog], preload_env(UARCH_TUNABLES=tunables, **extra))):
        r = run(cmd, env)
        show(r, f"{mode} (UARCH_TUNABLES={tunables!r})")
        if r.returncode != 0:
            fail(f"{mode}: {cmd[0]} exited {r.returncode}")
        if r.stderr:
            fail(f"{mode}: the program printed to stderr")
        b = bindings(r.stdout)
        if sorted(b) != sorted(OPS):
            fail(f"{mode}: expected one line per op, got {sorted(b)}")
        res[mode] = b
    return res


def elf_header(path):
    return run(["readelf", "-hlW", path]).stdout.decode()


def check_modes():
    h = elf_header(args.shared)
    if not re.search(r"Type:\s+DYN", h) or "INTERP" not in h:
        fail("the shared-mode program is not a PIE")
    h = elf_header(args.static)
    if "INTERP" in h or "DYNAMIC" in h:
        fail("the static-mode program is not statically linked")
    needed = run(["readelf", "-dW", args.shared]).stdout.decode()
    if "libuarch.so.0" not in needed:
        fail("the shared-mode program does not need libuarch.so.0")
    needed = run(["readelf", "-dW", args.preload_prog]).stdout.decode()
    if "libuarch" in needed:
        fail("the preload-mode program links uarch itself")
    res = three_modes()
    if not failures and not (res["shared"] == res["static"] == res["preload"]):
        fail(f"bindings differ between modes: {res}")
    print(f"bindings in all three modes: {res['shared']}")


def check_tunables():
    default = three_modes()
    # baseline is what the issue names; when the CPU's default already is
    # baseline (an SSE2-only CPU) use the portable generic one instead.
    want = "baseline" if default["shared"].get("memcpy") != "baseline" else "generic"
    tuned = three_modes(f"memcpy={want}")
    for mode, b in tuned.items():
        if b.get("memcpy") != want:
            fail(f"{mode}: UARCH_TUNABLES=memcpy={want} gave memcpy={b.get('memcpy')}")
        others = {k: v for k, v in b.items() if k != "memcpy"}
        dflt = {k: v for k, v in default[mode].items() if k != "memcpy"}
        if others != dflt:
            fail(f"{mode}: memcpy={want} changed other ops: {others} vs {dflt}")
    print(f"memcpy: {default['shared'].get('memcpy')} -> {want} in all three modes")
    # The environment the program started with decides, whatever the
    # program does to its copy before its first call (setenv puts its own
    # string into the start-up array, unsetenv shifts the array).
    other = "generic" if want != "generic" else "gpr"
    for edit in (f"memcpy={other}", "-"):
        for mode, b in three_modes(f"memcpy={want}", E2E_EDIT_TUNABLES=edit).items():
            if b.get("memcpy") != want:
                fail(f"{mode}: started with memcpy={want}, edited to {edit!r} before the first call: "
                     f"memcpy={b.get('memcpy')}")
    print(f"memcpy={want} as started, after the program's setenv and unsetenv")


def nosuid(path):
    return bool(os.statvfs(path).f_flag & os.ST_NOSUID)


def check_setuid():
    if os.geteuid() != 0:
        skip("setuid/setgid: creating a set-id helper owned by another user needs root")
    candidates = [os.environ.get("UARCH_BUILD_ROOT", ""), tempfile.gettempdir(), "/var/tmp"]
    base = next((c for c in candidates if c and os.path.isdir(c) and not nosuid(c)), None)
    if base is None:
        skip(f"setuid/setgid: every candidate directory {candidates} is on a nosuid mount")
    nobody = 65534
    tmp = tempfile.mkdtemp(prefix="uarch-setuid-", dir=base)
    try:
        os.chmod(tmp, 0o755)   # the set-id copy runs as nobody and must reach its files
        libs = {"shared": os.path.join(tmp, "libuarch.so.0"),
                "preload": os.path.join(tmp, "libuarch_preload.so"),
                "record": os.path.join(tmp, "libuarch_record.so")}
        shutil.copy(args.lib, libs["shared"])
        shutil.copy(args.preload_lib, libs["preload"])
        shutil.copy(args.record_lib, libs["record"])
        # Where the recorder would write: anyone may create files there, so
        # only AT_SECURE keeps the set-id runs from writing.
        prof_dir = os.path.join(tmp, "prof")
        os.mkdir(prof_dir)
        os.chmod(prof_dir, 0o1777)
        progs = {}
        for name, src in (("static", args.static), ("helper", args.secure_helper)):
            progs[name] = os.path.join(tmp, name)
            shutil.copy(src, progs[name])
        for p in list(libs.values()) + list(progs.values()):
            os.chmod(p, 0o755)
        default = bindings(run([args.shared]).stdout)
        want_tuned = "baseline" if default.get("memcpy") != "baseline" else "generic"
        tun = f"memcpy={want_tuned}"
        cases = [("static", [progs["static"]], progs["static"]),
                 ("shared (dlopen libuarch.so)", [progs["helper"], libs["shared"]], progs["helper"]),
                 ("preload (dlopen libuarch_preload.so)", [progs["helper"], libs["preload"]], progs["helper"]),
                 ("recorder (dlopen libuarch_record.so)", [progs["helper"], libs["record"]], progs["helper"])]
        checked = 0
        for label, cmd, exe in cases:
            for kind, owner, group, mode in (("control", nobody, nobody, 0o755),
                                             ("setuid", nobody, 0, 0o4755),
                                             ("setgid", 0, nobody, 0o2755)):
                os.chown(exe, owner, group)
                os.chmod(exe, mode)   # after chown, which clears the set-id bits
                for f in os.listdir(prof_dir):
                    os.unlink(os.path.join(prof_dir, f))
                r = run(cmd, base_env(UARCH_TUNABLES=tun, UARCH_PROF_OUT=prof_dir + "/p-"))
                show(r, f"{label}, {kind}, UARCH_TUNABLES={tun}")
                written = os.listdir(prof_dir)
                if label.startswith("recorder") and (kind == "control") != bool(written):
                    fail(f"{label} {kind}: UARCH_PROF_OUT {'not followed' if kind == 'control' else 'followed'} "
                         f"(files: {written})")
                b = bindings(r.stdout)
                sec = at_secure(r.stdout)
                if r.returncode != 0:
                    fail(f"{label} {kind}: exit {r.returncode}")
                    continue
                if kind == "control":
                    if sec != 0 or b.get("memcpy") != want_tuned:
                        fail(f"{label} control: expected AT_SECURE=0 and memcpy={want_tuned}, "
                             f"got AT_SECURE={sec} memcpy={b.get('memcpy')}")
                else:
                    if sec != 1:
                        fail(f"{label} {kind}: the process did not get AT_SECURE")
                    elif b != default:
                        fail(f"{label} {kind}: tunables were not ignored: {b} vs default {default}")
                checked += 1
        # File capabilities give AT_SECURE with equal real and effective ids.
        setcap, setpriv = shutil.which("setcap"), shutil.which("setpriv")
        if setcap and setpriv:
            exe = progs["static"]
            os.chown(exe, 0, 0)
            os.chmod(exe, 0o755)
            rc = run([setcap, "cap_net_raw+ep", exe])
            if rc.returncode == 0:
                r = run([setpriv, f"--reuid={nobody}", f"--regid={nobody}", "--clear-groups", exe],
                        base_env(UARCH_TUNABLES=tun))
                show(r, f"static with file capability cap_net_raw+ep, run as uid {nobody}")
                if at_secure(r.stdout) != 1 or bindings(r.stdout) != default:
                    fail("file capabilities: tunables were not ignored under AT_SECURE")
                checked += 1
            else:
                print("note: setcap failed here (" + rc.stderr.decode().strip() + "); file-capability case not run")
        else:
            print("note: setcap/setpriv missing; file-capability case not run")
        print(f"{checked} set-id runs checked; tunables applied only in the control runs")
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


# ---- CPUID at load ------------------------------------------------------------

def count_cpuid(*prog):
    """CPUID instructions libuarch_preload.so executes in prog (gdb)."""
    script = os.path.join(os.path.dirname(os.path.abspath(__file__)), "count_cpuid.py")
    r = run(["gdb", "-q", "-batch", "-ex", f"set exec-wrapper env LD_PRELOAD={args.preload_lib}",
             "-ex", f"python LIB='{args.preload_lib}'", "-x", script, "--args"] + list(prog), timeout=120)
    m = re.search(rb"cpuid executed: (\d+) \((\d+) sites\)", r.stdout)
    if not m:
        show(r, f"gdb counting CPUID in {' '.join(prog)}")
        fail(f"could not count CPUID in {' '.join(prog)}")
        return None
    return int(m.group(1))


def check_load_cpuid():
    """At load the library runs at most 6 CPUID instructions (each a VM exit
    in a guest; with glibc's loader table and its record of the caches,
    none); no copy, however large, runs one (under CPUID faulting it would
    kill the process)."""
    if os.uname().machine != "x86_64":
        skip("load-cpuid: CPUID is x86-64's")
    if not shutil.which("gdb"):
        skip("load-cpuid: needs gdb (scripts/deps.sh installs it)")
    at_load = count_cpuid("/bin/true")
    print(f"CPUID at load (/bin/true under LD_PRELOAD): {at_load}")
    if at_load is not None and at_load > 6:
        fail(f"{at_load} CPUID instructions at load, more than 6")
    # preload_entry copies up to 64 MiB: past every window.
    page = [o for o, n in local_symbols(args.preload_lib).items() if "uarch_preload_entry_page" in n]
    with_large = count_cpuid(args.entry, f"{page[0]:x}" if page else "0")
    print(f"CPUID with large copies (preload_entry): {with_large}")
    if at_load is not None and with_large is not None and with_large > at_load:
        fail(f"{with_large - at_load} CPUID instructions inside copies (the caches are the constructor's to ask)")


# ---- static replacement: GNU ld --wrap ----------------------------------------

LIBZ_A = "/usr/lib/x86_64-linux-gnu/libz.a"


def pkg_config(*a):
    env = base_env(PKG_CONFIG_PATH=os.path.join(os.environ["UARCH_BUILD_ROOT"], "meson-uninstalled"))
    r = run(["pkg-config"] + list(a) + ["uarch"], env)
    if r.returncode != 0:
        fail(f"pkg-config {' '.join(a)} uarch: {r.stderr.decode().strip()}")
    return r.stdout.decode().split()


def iplt_targets(exe):
    """IPLT slot address -> name of the ifunc resolver its IRELATIVE names."""
    syms = {}
    for line in run(["nm", exe]).stdout.decode().splitlines():
        parts = line.split()
        if len(parts) == 3:
            syms.setdefault(int(parts[0], 16), parts[2])
    irel = {}
    for line in run(["readelf", "-rW", exe]).stdout.decode().splitlines():
        parts = line.split()
        if len(parts) >= 4 and parts[2] == "R_X86_64_IRELATIVE":
            irel[int(parts[0], 16)] = syms.get(int(parts[3], 16), parts[3])
    out = {}
    dis = run(["objdump", "-d", "--no-show-raw-insn", "-j", ".plt", "-j", ".iplt", exe]).stdout.decode()
    for m in re.finditer(r"^\s*([0-9a-f]+):\s+jmp\s+\*0x[0-9a-f]+\(%rip\)\s+# ([0-9a-f]+)", dis, re.M):
        if int(m.group(2), 16) in irel:
            out[int(m.group(1), 16)] = irel[int(m.group(2), 16)]
    return out


def mem_calls_from(exe, functions):
    """(caller, callee) for every call/jmp from one of functions to a
    memory function (a name with mem/bzero in it, or an IPLT slot, named by
    its resolver)."""
    iplt = iplt_targets(exe)
    dis = run(["objdump", "-d", "--no-show-raw-insn", exe]).stdout.decode()
    out, fn = [], None
    for line in dis.splitlines():
        m = re.match(r"^[0-9a-f]+ <(.+)>:$", line)
        if m:
            fn = m.group(1)
            continue
        m = re.match(r"^\s*[0-9a-f]+:\s+(call|jmp)\s+([0-9a-f]+) <(.+)>", line)
        if not m or fn not in functions:
            continue
        target = int(m.group(2), 16)
        callee = iplt.get(target, m.group(3))
        if target in iplt or re.search(r"mem|bzero", callee):
            out.append((fn, callee))
    return out


def check_static_wrap():
    """-static and -static-pie programs, gcc and clang, linked with libz.a and
    `pkg-config --variable=wrap_ldflags uarch`: zlib's round trip is exact, and
    zlib's memcpy/memmove/memset calls reach uarch's variants (in the
    disassembly and at run time under a debugger)."""
    if os.uname().machine != "x86_64":
        skip("static-wrap: written for x86-64 (the variants' names, libz.a's path)")
    if not os.path.exists(LIBZ_A):
        skip(f"static-wrap: no {LIBZ_A} (Debian package zlib1g-dev, scripts/deps.sh installs it)")
    wrap = pkg_config("--variable=wrap_ldflags")
    flags = pkg_config("--static", "--cflags", "--libs")
    print(f"wrap_ldflags: {' '.join(wrap)}")
    if not any("--wrap=memcpy" in w for w in wrap):
        fail("pkg-config's wrap_ldflags has no --wrap=memcpy")
    zlib_fns = set()
    for line in run(["nm", "--defined-only", LIBZ_A]).stdout.decode().splitlines():
        parts = line.split()
        if len(parts) == 3 and parts[1] in "Tt":
            zlib_fns.add(parts[2])
    src = os.path.join(os.path.dirname(os.path.abspath(__file__)), "wrap_zlib.c")
    with tempfile.TemporaryDirectory() as tmp:
        for cc in ("gcc", "clang"):
            if not shutil.which(cc):
                fail(f"static-wrap: {cc} not found (scripts/deps.sh installs it)")
                continue
            for mode in ("-static", "-static-pie"):
                label = f"{cc} {mode}"
                exe = os.path.join(tmp, f"zlib-{cc}{mode}")
                cmd = [cc, "-O2", mode] + (["-fPIE"] if mode == "-static-pie" else []) + wrap + \
                    [src, "-o", exe, "-lz"] + flags
                r = run(cmd)
                if r.returncode != 0:
                    show(r, label + ": link")
                    fail(f"{label}: does not link")
                    continue
                r = run([exe])
                show(r, label)
                b = bindings(r.stdout)
                if r.returncode != 0 or r.stdout.count(b"round trip identical") != 3:
                    fail(f"{label}: the compression round trip is not byte-identical")
                calls = mem_calls_from(exe, zlib_fns)
                into_uarch = [c for c in calls if c[1].startswith("__wrap_")]
                elsewhere = [c for c in calls if not c[1].startswith("__wrap_")]
                print(f"{label}: zlib's calls to memory functions: {len(into_uarch)} to __wrap_*, "
                      f"{len(elsewhere)} elsewhere {sorted(set(elsewhere))[:6]}")
                if not into_uarch or elsewhere:
                    fail(f"{label}: zlib's memcpy/memmove/memset calls do not all go to __wrap_*")
                # At run time: who calls the bound variants (a breakpoint on
                # each, the caller read from the return address).
                variants = sorted({f"uarch_x86_64_{op}_{b.get(op)}" for op in ("memcpy", "memmove", "memset")})
                script = os.path.join(tmp, "callers.gdb")
                with open(script, "w") as f:
                    f.write("set pagination off\nset $hits = 0\n")
                    for v in variants:
                        f.write(f"break *{v}\ncommands\nsilent\ninfo symbol *(void **)$rsp\n"
                                "set $hits = $hits + 1\nif $hits >= 400\nkill\nend\ncontinue\nend\n")
                    f.write("run\n")
                gdb = ["gdb", "-q", "-batch", "-x", script, "--args", exe, "65536"]
                if not shutil.which("gdb"):
                    print(f"{label}: no gdb, the run-time check is skipped")
                    continue
                r = run(gdb, timeout=240)
                callers = re.findall(r"^(\S+) \+ \d+ in section", r.stdout.decode(), re.M)
                from_zlib = sorted(set(c for c in callers if c in zlib_fns))
                print(f"{label}: {len(callers)} calls into {variants} seen; callers from zlib: {from_zlib}")
                if not from_zlib:
                    show(r, label + ": gdb")
                    fail(f"{label}: no call from zlib reached uarch's variants at run time")


CHECKS = {
    "modes": check_modes,
    "tunables": check_tunables,
    "setuid": check_setuid,
    "static-wrap": check_static_wrap,
    "load-cpuid": check_load_cpuid,
}

# Checks a cross build cannot make, and why (e2e.py skips them there).
HOST_ONLY = {
    "setuid": "qemu-user cannot run a set-id program as one (the kernel sees qemu, which is not set-id)",
    "static-wrap": "it links with this machine's gcc, clang and libz.a; the native build checks it",
    "load-cpuid": "gdb debugs programs of this machine; the native build checks it",
}
