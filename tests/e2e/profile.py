#!/usr/bin/env python3
"""The system profile at load, in the three link modes: copies of
libuarch.so, libuarch_preload.so and a static program built to read a
profile under the build directory (the meson option profile_path fixes the
path at build time; these copies are built with a test path, never the
system's). Checks: the profile applies; a section applies to the
program it names and to no other; UARCH_TUNABLES overrides it entry
by entry; malformed entries are skipped; a missing, symlinked or huge file
changes nothing; under AT_SECURE (set-id, as root) only a root-owned file
writable by nobody else applies and the environment is ignored."""
import argparse
import os
import shutil
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from checklib import base_env, fail, failures  # noqa: E402  (tests/checklib.py)


def env_with(tunables=None):
    """checklib.base_env, LD_DEBUG kept (as this check always has)."""
    return base_env(keep=("LD_DEBUG",), UARCH_TUNABLES=tunables)


def bindings(cmd, tunables=None):
    r = subprocess.run(cmd, env=env_with(tunables), stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=60)
    out = r.stdout.decode(errors="replace")
    if r.returncode != 0 or r.stderr:
        fail(f"{cmd}: exit {r.returncode}, stderr {r.stderr.decode(errors='replace')!r}")
    b = {}
    for line in out.splitlines():
        if line.startswith("# at_secure="):
            b["at_secure"] = line.split()[1].split("=")[1]
        elif "=" in line and not line.startswith("#"):
            k, v = line.split("=", 1)
            b[k] = v
    return b


def write(path, text, mode=0o644, owner=0):
    tmp = path + ".new"
    with open(tmp, "w") as f:
        f.write(text)
    os.chmod(tmp, mode)
    if os.geteuid() == 0:
        os.chown(tmp, owner, owner)
    os.replace(tmp, path)


def main():
    p = argparse.ArgumentParser()
    for k in ("lib", "preload-lib", "static", "static-wrap", "helper", "profile"):
        p.add_argument("--" + k, required=True)
    a = p.parse_args()
    profile = a.profile
    os.makedirs(os.path.dirname(profile), exist_ok=True)
    os.chmod(os.path.dirname(profile), 0o755)

    def modes(progs):
        return {"static": [progs["static"]], "static --wrap": [progs["static_wrap"]],
                "shared": [progs["helper"], progs["lib"]],
                "preload": [progs["helper"], progs["preload"]]}

    progs = {"static": a.static, "static_wrap": a.static_wrap, "helper": a.helper, "lib": a.lib,
             "preload": a.preload_lib}
    if os.path.lexists(profile):
        os.unlink(profile)
    default = bindings([a.static])
    # Two variants other than the default, each runs on any x86-64/arm64 CPU.
    want = "baseline" if default.get("memcpy") != "baseline" else "generic"
    other = "generic" if want == "baseline" else "baseline"
    print(f"default: {default}; the profile sets {want}")

    def expect(label, progs, memcpy, memset, tunables=None, secure=None):
        for mode, cmd in modes(progs).items():
            b = bindings(cmd, tunables)
            got = (b.get("memcpy"), b.get("memset"))
            ok = got == (memcpy, memset) and (secure is None or b.get("at_secure") == secure)
            print(f"{'ok  ' if ok else 'FAIL'} {label}, {mode}: memcpy={got[0]} memset={got[1]}"
                  + (f" at_secure={b.get('at_secure')}" if secure is not None else ""))
            if not ok:
                fail(f"{label}, {mode}: expected memcpy={memcpy} memset={memset}, got {b}")

    dflt = default.get("memcpy"), default.get("memset")
    try:
        expect("no profile", progs, *dflt)
        write(profile, f"# a comment\nmemcpy={want}\nbogus\nnt_threshold=zz\nmemset={want}\n")
        expect("profile", progs, want, want)
        expect("profile, UARCH_TUNABLES=memcpy=" + other, progs, other, want, f"memcpy={other}")
        # A section applies to the program its name names, and to no other.
        for mode, cmd in modes(progs).items():
            own = os.path.basename(cmd[0])
            for label, section, memset in ((f"section [{own}]", own, want), ("section [another]", "another", dflt[1])):
                write(profile, f"memcpy={want}\n[{section}]\nmemset={want}\n[not-{own}]\nmemcpy={other}\n")
                b = bindings(cmd)
                got = (b.get("memcpy"), b.get("memset"))
                ok = got == (want, memset)
                print(f"{'ok  ' if ok else 'FAIL'} {label}, {mode}: memcpy={got[0]} memset={got[1]}")
                if not ok:
                    fail(f"{label}, {mode}: expected memcpy={want} memset={memset}, got {b}")
        os.unlink(profile)
        os.symlink(os.path.abspath(os.path.join(os.path.dirname(profile), "target")), profile)
        write(os.path.join(os.path.dirname(profile), "target"), f"memcpy={want}\n")
        expect("symlink", progs, *dflt)
        os.unlink(profile)
        write(profile, f"memcpy={want}\n" + "#" * 5000 + "\n")
        expect("huge", progs, *dflt)

        if os.geteuid() != 0:
            print("SKIP: the AT_SECURE cases need root (a set-id copy owned by another user)")
            return
        tmp = tempfile.mkdtemp(prefix="uarch-profile-", dir=os.path.dirname(profile))
        os.chmod(tmp, 0o755)
        sec = dict(progs)
        for k in ("static", "static_wrap", "helper", "lib", "preload"):
            sec[k] = os.path.join(tmp, os.path.basename(progs[k]))
            shutil.copy(progs[k], sec[k])
            os.chmod(sec[k], 0o755)
        nobody = 65534
        for exe in (sec["static"], sec["static_wrap"], sec["helper"]):
            os.chown(exe, nobody, nobody)
            os.chmod(exe, 0o4755)   # set-uid nobody: AT_SECURE
        probe = bindings([sec["static"]])
        if probe.get("at_secure") != "1":
            print(f"SKIP: the set-id copy did not get AT_SECURE here ({probe}); nosuid mount?")
            return
        write(profile, f"memcpy={want}\nmemset={want}\n", 0o644, 0)
        expect("AT_SECURE, root 0644", sec, want, want, secure="1")
        expect("AT_SECURE, root 0644, UARCH_TUNABLES ignored", sec, want, want, f"memcpy={other}", secure="1")
        # Sections: never under AT_SECURE (the invoker chose the name).
        write(profile, "".join(f"[{os.path.basename(sec[k])}]\nmemcpy={want}\n" for k in ("static", "static_wrap", "helper")),
              0o644, 0)
        expect("AT_SECURE, a section named for the program", sec, *dflt, secure="1")
        write(profile, f"memcpy={want}\n", 0o664, 0)
        expect("AT_SECURE, group-writable", sec, *dflt, secure="1")
        write(profile, f"memcpy={want}\n", 0o646, 0)
        expect("AT_SECURE, world-writable", sec, *dflt, secure="1")
        write(profile, f"memcpy={want}\n", 0o644, nobody)
        expect("AT_SECURE, owned by nobody", sec, *dflt, secure="1")
        # Another user's file is refused in every process; so is one that
        # others may write; the process's own user's (root here) is taken.
        expect("not secure, owned by nobody", progs, *dflt)
        write(profile, f"memcpy={want}\n", 0o664, 0)
        expect("not secure, group-writable", progs, *dflt)
        write(profile, f"memcpy={want}\n", 0o644, 0)
        expect("not secure, the process's own user", progs, want, *dflt[1:])
        shutil.rmtree(tmp)
    finally:
        for f in (profile, os.path.join(os.path.dirname(profile), "target")):
            if os.path.lexists(f):
                os.unlink(f)
    if failures:
        print(f"profile: {len(failures)} failure(s)")
        sys.exit(1)
    print("profile: passed")


if __name__ == "__main__":
    main()
