#!/usr/bin/env python3
"""Hardening checks that run programs under emulated CPUs, valgrind, or a
hostile environment. One Meson test per check (see meson.build):
`hardening.py CHECK --key=path ...`. Exit 0 passed, 1 failed, 77 skipped.
"""
import json
import os
import random
import re
import shutil
import sys

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
import checklib  # noqa: E402  (tests/checklib.py: fail, skip, run, the driver)
import exe_wrapper  # noqa: E402  (tests/exe_wrapper.py: qemu in cross builds)
from checklib import args, base_env, fail, skip  # noqa: E402
from ops_table import OPS  # noqa: E402  (src/table/ops.def, read)

# What qemu-x86_64 reports for each model (vendor, family, model) and the
# memcpy variant the policy (src/select/select.cpp) promises for it: on
# hardware, and with what qemu 7.2's TCG exposes (no AVX-512, no FSRM;
# AVX2 since 7.2). Conroe: Core 2, slow unaligned SSE loads -> gpr.
# Denverton: SSE4.2, no AVX -> baseline. Skylake-Server: AVX-512 but the
# policy avoids zmm there (frequency drop) -> avx2 either way.
MODELS = {
    "Conroe": ("intel", 0x6, 0x0f, "gpr", "gpr"),
    "Denverton": ("intel", 0x6, 0x5f, "baseline", "baseline"),
    "Skylake-Client": ("intel", 0x6, 0x5e, "avx2", "avx2"),
    "Skylake-Server": ("intel", 0x6, 0x55, "avx2", "avx2"),
    "Icelake-Server": ("intel", 0x6, 0x86, "avx512", "avx2"),
    "EPYC-Rome": ("amd", 0x17, 0x31, "avx2", "avx2"),
    "EPYC-Milan": ("amd", 0x19, 0x01, "avx2", "avx2"),
}

# The mem suite's tests that reach every strategy of every variant (small,
# vector, rep movsb/stosb and non-temporal windows, overlap both ways, guard
# pages) at a cost an emulator can pay; the exhaustive sweeps run natively.
MEM_QUICK = "*ZeroSize*:*CopyMediumSampled*:*GuardPages*:*OverlapLarge*:*Set*:*NarrowStringWindows*"
# cpu_features reads SSE bits from the host's /proc/cpuinfo, which
# qemu-user cannot replace: its oracle test compares against the host.
CORE_UNDER_QEMU = "-Oracle.AgreesWithCpuFeatures"


def clean_env(extra=None):
    """checklib.base_env, LD_LIBRARY_PATH kept (as these checks always have),
    and extra's items as given."""
    env = base_env(keep=("LD_LIBRARY_PATH",))
    env.update(extra or {})
    return env


def run(cmd, env=None, timeout=600):
    return checklib.run(cmd, env if env is not None else clean_env(), timeout)


def text(b):
    return b.decode(errors="replace")


def noise_free(err):
    return "\n".join(l for l in text(err).splitlines()
                     if not l.startswith("qemu-x86_64: warning: TCG doesn't support"))


def bindings(stdout):
    out = {}
    for line in text(stdout).splitlines():
        if "=" in line and not line.startswith(("#", "cpu:")) and line.split("=", 1)[0] in OPS:
            k, v = line.split("=", 1)
            out[k] = v.strip()
    return out


def describe(r):
    if r.returncode == -4:
        return "SIGILL: ILLEGAL INSTRUCTION"
    if r.returncode < 0:
        return f"killed by signal {-r.returncode}"
    return f"exit {r.returncode}"


def gtest_summary(out):
    s = text(out)
    lines = [l for l in s.splitlines() if re.match(r"^(mem: |\[  PASSED  \]|\[  FAILED  \]|\[  SKIPPED \] \d)", l)]
    return " | ".join(lines[-4:])


# ---- emulated CPUs -------------------------------------------------------------

def check_qemu():
    qemu = shutil.which("qemu-x86_64")
    if not qemu:
        skip(f"qemu {args.cpu}: qemu-x86_64 is not installed (Debian package qemu-user)")
    vendor, family, model, want_hw, want_tcg = MODELS[args.cpu]
    q = [qemu, "-cpu", args.cpu]

    # 1. Which CPU qemu shows, and the library's bindings against the policy's.
    r = run(q + [args.policy])
    print(f"--- policy check under -cpu {args.cpu}: {describe(r)}")
    print(text(r.stdout).rstrip())
    if r.returncode != 0:
        fail(f"policy check: {describe(r)} {noise_free(r.stderr)}")
        return
    cpu_line = next((l for l in text(r.stdout).splitlines() if l.startswith("cpu:")), "")
    m = re.match(r"cpu: (\w+) family 0x([0-9a-f]+) model 0x([0-9a-f]+)", cpu_line)
    if not m or (m.group(1), int(m.group(2), 16), int(m.group(3), 16)) != (vendor, family, model):
        fail(f"qemu -cpu {args.cpu} should look like {vendor} family {family:#x} model {model:#x}: {cpu_line}")
    feats = set(cpu_line.split("features:", 1)[-1].split())
    avx512 = {"avx512f", "avx512bw", "avx512vl", "bmi2"} <= feats
    want = want_hw if avx512 else want_tcg
    got = bindings(r.stdout)
    print(f"policy promise for {args.cpu}: memcpy={want} "
          f"({'AVX-512 exposed' if avx512 else 'as exposed by qemu TCG: no AVX-512, no FSRM'})")
    if got.get("memcpy") != want:
        fail(f"{args.cpu}: memcpy={got.get('memcpy')}, the policy promises {want}")

    # 2. The same bindings in every link mode, with the programs' own
    #    correctness checks, and uarch-info.
    progs = []
    if args.policy_static:
        progs.append(("static-pie policy check", q + [args.policy_static, "--expect-memcpy=" + want], None))
    if args.shared:
        progs += [("shared (PIE + libuarch.so)", q + [args.shared], None),
                  ("static (-static + libuarch.a)", q + [args.static], None),
                  ("preload (LD_PRELOAD=libuarch_preload.so)",
                   q + ["-E", "LD_PRELOAD=" + args.preload_lib, "-E", "LD_BIND_NOW=1", args.preload_prog], None)]
    for label, cmd, env in progs:
        r = run(cmd, env)
        b = bindings(r.stdout)
        print(f"--- {label}: {describe(r)}; {' '.join(f'{k}={v}' for k, v in b.items())}")
        if r.returncode != 0:
            print(text(r.stdout)[-1500:] + noise_free(r.stderr)[-1500:])
            fail(f"{label}: {describe(r)}")
        elif b != got:
            fail(f"{label}: bindings {b} differ from {got}")
    if args.info:
        r = run(q + [args.info, "--json"])
        print(f"--- uarch-info --json: {describe(r)}")
        try:
            j = json.loads(r.stdout)
            print(f"uarch-info: {j.get('vendor')} family {j.get('family')} model {j.get('model')}, "
                  f"features {' '.join(j.get('features', []))}; impl {j.get('impl')}")
            if j.get("impl") != got:
                fail(f"uarch-info impl {j.get('impl')} differs from {got}")
        except ValueError:
            fail(f"uarch-info --json under qemu: {describe(r)}, not JSON; {noise_free(r.stderr)[-500:]}")

    # 3. The core and mem suites' binaries.
    for label, exe, filt in (("core suite", args.core_tests, CORE_UNDER_QEMU),
                             ("mem suite", args.mem_tests, MEM_QUICK)):
        if not exe:
            print(f"--- {label}: not built, not run")
            continue
        env = clean_env({"UARCH_TESTDATA": os.path.join(os.environ.get("UARCH_SOURCE_ROOT", ""), "tests", "data")})
        r = run(q + [exe, "--gtest_filter=" + filt], env, timeout=500)
        print(f"--- {label} under -cpu {args.cpu} (filter {filt}): {describe(r)}; {gtest_summary(r.stdout)}")
        if r.returncode != 0:
            print(text(r.stdout)[-3000:] + noise_free(r.stderr)[-1500:])
            fail(f"{label} under -cpu {args.cpu}: {describe(r)}")
        m = re.search(r"mem: (\d+) variant tests ran, (\d+) skipped \(([^)]*)\)", text(r.stdout))
        if label == "mem suite" and r.returncode == 0:
            if not m:
                fail("the mem suite printed no summary of the variants it ran")
                continue
            skipped = set(m.group(3).split())
            # Each variant this CPU cannot run is skipped by name; each it can, runs.
            for variant, needs in (("avx2", {"avx2"}), ("avx512", {"avx512f", "avx512bw", "avx512vl", "bmi2"})):
                if (variant in skipped) == (needs <= feats):
                    fail(f"mem suite: {variant} {'skipped' if variant in skipped else 'ran'} on a CPU "
                         f"{'with' if needs <= feats else 'without'} {'+'.join(sorted(needs))}")
            print(f"mem suite: variants skipped by name on {args.cpu}: {' '.join(sorted(skipped)) or 'none'}")


# ---- valgrind --------------------------------------------------------------------

def check_valgrind():
    vg = shutil.which("valgrind")
    if not vg:
        skip("valgrind: not installed (Debian package valgrind)")
    base = [vg, "-q", "--error-exitcode=99", "--suppressions=" + args.suppressions]
    r = run(base + [args.policy])
    print(f"--- policy check under valgrind memcheck: {describe(r)}")
    print(text(r.stdout).rstrip())
    cpu = next((l for l in text(r.stdout).splitlines() if l.startswith("cpu:")), "?")
    b = bindings(r.stdout)
    print(f"valgrind's synthetic CPU: {cpu[5:]}")
    print(f"variants bound under valgrind: {' '.join(f'{k}={v}' for k, v in b.items())}")
    if r.returncode != 0:
        print(text(r.stderr)[-2000:])
        fail(f"policy check under valgrind: {describe(r)}")
    runs = []
    if args.shared:
        runs += [("shared-mode program", base + [args.shared], clean_env()),
                 ("preload-mode program", base + [args.preload_prog],
                  clean_env({"LD_PRELOAD": args.preload_lib, "LD_BIND_NOW": "1"}))]
    if args.mem_tests:
        runs.append(("mem suite (" + MEM_QUICK + ")", base + [args.mem_tests, "--gtest_filter=" + MEM_QUICK],
                     clean_env()))
    else:
        fail("the mem suite is not built")
    for label, cmd, env in runs:
        r = run(cmd, env, timeout=800)
        print(f"--- {label} under valgrind memcheck: {describe(r)}; {gtest_summary(r.stdout)}")
        if r.returncode != 0:
            print(text(r.stdout)[-2000:])
            print(text(r.stderr)[-4000:])
            fail(f"{label} under valgrind: {describe(r)}" +
                 (" (memcheck reported errors)" if r.returncode == 99 else ""))
        elif b"# memcpy from" in r.stdout and b"libuarch_preload" not in r.stdout:
            fail(f"{label}: memcpy was not the preload library's under valgrind")


# ---- hostile UARCH_TUNABLES ----------------------------------------------------

MALFORMED = [
    "memcpy=ampereone", "memmove=", "memset=avx9000", "prefetch_range=avx2", "prefetchw=12", "smp_mb=-",
    "mask=+avx2", "mask=avx2", "mask=-nosuchfeature", "rep_movsb_threshold=abc", "rep_movsb_stop=-1",
    "rep_stosb_threshold=1Q", "rep_stosb_stop=0x", "nt_threshold=99999999999999999999999",
    "nt_fill_threshold=12Q",
    "prefetch_stride=3", "idle_spin_ns=", "idle_monitor_ns=1.5", "idle_stages=spin,bogus", "idle_c01=2",
    "nosuchkey=1", "justtext", "=value", "MEMCPY=baseline", " memset=baseline",
]


def asan_after_preload():
    return ":".join(filter(None, [os.environ.get("ASAN_OPTIONS"), "verify_asan_link_order=0"]))


def hostile_cases(default):
    rnd = random.Random(20240601)
    garbage = bytes(rnd.choice(range(1, 256)) for _ in range(40 * 1024))
    colons = bytes(rnd.choice(b"::==,,-+xX09 \t\n\x7f\xff") for _ in range(30 * 1024))
    # Variant names are the architecture's: "ampereone" is valid on arm64,
    # lock_add and mfence exist on x86-64 only. A tuned value must differ
    # from the default (arm64's default memcpy is often baseline already).
    arm64 = exe_wrapper.machine(args.policy) == 183
    malformed = [("memcpy=avx2" if arm64 else e) if e == "memcpy=ampereone" else e for e in MALFORMED]
    cp_first, cp_last = ("baseline", "generic") if arm64 else ("generic", "baseline")
    mb_first, mb_last = ("dmb_ish", "generic") if arm64 else ("mfence", "lock_add")
    repeated = dict(default, memcpy=cp_last, smp_mb=mb_last)
    return [
        # name, value (bytes), expected bindings, entries that must be listed as rejected
        ("40 KiB of random bytes", garbage, default, None),
        ("30 KiB of separators and signs", colons, default, None),
        ("every key with a malformed value", ":".join(malformed).encode(), default, malformed),
        ("repeated keys (the last wins)",
         f"memcpy={cp_first}:smp_mb={mb_first}:memcpy={cp_last}:smp_mb={mb_last}".encode(),
         repeated, [f"memcpy={cp_first}", f"smp_mb={mb_first}"]),
        ("empty string", b"", default, []),
        ("only separators", b"::::::", default, None),
        ("40 entries", b":".join([b"rep_movsb_threshold=4096"] * 40), default, None),
        ("a valid entry, then 20 KiB without a separator", f"memcpy={cp_last}:".encode() + b"x" * 20000,
         dict(default, memcpy=cp_last), None),
    ]


def flat_entries(lst):
    out = []
    for e in lst or []:
        out.append(e.get("entry", "") if isinstance(e, dict) else str(e))
    return out


def check_tunables_hostile():
    progs = []
    if args.shared:
        progs = [("shared", [args.shared], {}), ("static", [args.static], {}),
                 ("preload", [args.preload_prog], {"LD_PRELOAD": args.preload_lib, "LD_BIND_NOW": "1",
                                                    # a sanitizer build: its runtime need not come first
                                                    "ASAN_OPTIONS": asan_after_preload()})]
    progs.append(("policy check", [args.policy], {}))
    default = bindings(run([args.policy]).stdout)
    ls_plain = run(["/bin/ls", "-la", "/usr/lib"])
    for name, value, want, must_reject in hostile_cases(default):
        print(f"=== UARCH_TUNABLES: {name} ({len(value)} bytes)")
        for label, cmd, extra in progs:
            env = {k.encode(): v.encode() for k, v in clean_env(extra).items()}
            env[b"UARCH_TUNABLES"] = value
            r = run(cmd, env, timeout=60)
            b = bindings(r.stdout)
            ok = r.returncode == 0 and not r.stderr and b == want
            print(f"{label}: {describe(r)}, {len(r.stderr)} bytes on stderr, bindings "
                  f"{'as expected' if b == want else b}")
            if not ok:
                print(text(r.stdout)[-1000:] + text(r.stderr)[-1000:])
                fail(f"{name}: {label} did not run unchanged")
        # A real program under LD_PRELOAD, unchanged (not in a cross build:
        # this machine's ls cannot load the cross build's library).
        if not exe_wrapper.foreign(args.preload_lib):
            env = {k.encode(): v.encode() for k, v in
                   clean_env({"LD_PRELOAD": args.preload_lib, "LD_BIND_NOW": "1"}).items()}
            env[b"UARCH_TUNABLES"] = value
            r = run(["/bin/ls", "-la", "/usr/lib"], env, timeout=60)
            if (r.returncode, r.stdout, r.stderr) != (ls_plain.returncode, ls_plain.stdout, ls_plain.stderr):
                fail(f"{name}: ls under LD_PRELOAD behaved differently")
        if not args.info:
            continue
        env = {k.encode(): v.encode() for k, v in clean_env().items()}
        env[b"UARCH_TUNABLES"] = value
        r = run([args.info, "--json"], env, timeout=60)
        try:
            t = json.loads(r.stdout)["tunables"]
        except (ValueError, KeyError) as e:
            fail(f"{name}: uarch-info --json gave no tunables object ({describe(r)}: {e})")
            continue
        rejected, applied = flat_entries(t.get("rejected")), flat_entries(t.get("applied"))
        print(f"uarch-info: {len(applied)} applied, {len(rejected)} rejected, {t.get('dropped', 0)} dropped; "
              f"first rejected: {rejected[:3]}")
        if must_reject is not None:
            missing = [e for e in must_reject if e[:61] not in " ".join(rejected)]
            if missing:
                fail(f"{name}: uarch-info does not list {missing} as rejected")
        if want == default and applied and name != "40 entries":
            fail(f"{name}: uarch-info lists applied entries {applied}")
        if value and value.strip(b":") and not rejected and want == default and name != "40 entries":
            fail(f"{name}: uarch-info lists nothing as rejected")


CHECKS = {"qemu": check_qemu, "valgrind": check_valgrind, "tunables-hostile": check_tunables_hostile}


def main():
    checklib.main(CHECKS, ("cpu", "policy", "policy-static", "preload-lib", "info", "shared", "static",
                           "preload-prog", "core-tests", "mem-tests", "suppressions"))


if __name__ == "__main__":
    main()
