#!/usr/bin/env python3
"""The process zoo: every dynamically linked program in /usr/bin that is
not set-id or file-capability runs with --version and with --help, as
nobody, in an empty directory, stdin from /dev/null, at most 3 s each:
without uarch, with LD_PRELOAD=libuarch_preload.so and with
LD_PRELOAD=libuarch_record.so. A run that dies of a signal (SIGSEGV,
SIGBUS, SIGILL, SIGFPE, SIGABRT, SIGSYS, SIGTRAP) with a library when it
did not without fails the test, naming the program. The programs given
after --extra (whose libraries' resolvers copy before the preloaded
library is relocated) join the zoo, so that it can fail.

usage: zoo.py PRELOAD_SO RECORD_SO [--limit N] [--extra PROGRAM...]"""
import concurrent.futures
import os
import pwd
import signal
import stat
import subprocess
import sys
import tempfile

CRASHES = {signal.SIGSEGV, signal.SIGBUS, signal.SIGILL, signal.SIGFPE, signal.SIGABRT, signal.SIGSYS,
           signal.SIGTRAP}
TIMEOUT = 3


def is_candidate(path):
    try:
        st = os.stat(path)
    except OSError:
        return False
    if not stat.S_ISREG(st.st_mode) or not st.st_mode & 0o111 or st.st_mode & (stat.S_ISUID | stat.S_ISGID):
        return False
    try:
        with open(path, "rb") as f:
            head = f.read(4096)
    except OSError:
        return False
    if head[:4] != b"\x7fELF":
        return False
    # Dynamically linked: it has a PT_INTERP (the loader's path in the first page).
    if b"/ld-linux" not in head and b"ld.so" not in head:
        r = subprocess.run(["readelf", "-lW", path], capture_output=True, text=True)
        if "INTERP" not in r.stdout:
            return False
    # File capabilities: AT_SECURE, and the preload library ignored anyway.
    try:
        if os.getxattr(path, "security.capability"):
            return False
    except OSError:
        pass
    return True


def run(prog, arg, preload, cwd, uid, gid):
    env = {"PATH": "/usr/bin:/bin", "HOME": cwd, "LANG": "C", "TERM": "dumb"}
    if preload:
        env["LD_PRELOAD"] = preload
    try:
        p = subprocess.Popen([prog, arg], cwd=cwd, env=env, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                             stderr=subprocess.DEVNULL, user=uid, group=gid, extra_groups=[],
                             start_new_session=True)
    except OSError as e:
        return f"error {e.errno}"
    try:
        rc = p.wait(timeout=TIMEOUT)
    except subprocess.TimeoutExpired:
        try:
            os.killpg(p.pid, signal.SIGKILL)
        except OSError:
            pass
        p.wait()
        return "timeout"
    if rc < 0 and -rc in CRASHES:
        return f"crash {signal.Signals(-rc).name}"
    return f"exit {rc}"


def main(argv):
    if len(argv) < 2:
        print("usage: zoo.py PRELOAD_SO RECORD_SO [--limit N] [--extra PROGRAM...]")
        return 2
    libs = {"preload": os.path.abspath(argv[0]), "record": os.path.abspath(argv[1])}
    limit, extra, rest = None, [], argv[2:]
    while rest:
        if rest[0] == "--limit":
            limit = int(rest[1])
            rest = rest[2:]
        elif rest[0] == "--extra":
            extra = [os.path.abspath(p) for p in rest[1:]]
            rest = []
        else:
            print(f"zoo.py: unknown argument {rest[0]}")
            return 2
    if os.geteuid() != 0:
        print("skipped: the zoo runs programs as nobody, which needs root")
        return 77
    try:
        nobody = pwd.getpwnam("nobody")
    except KeyError:
        print("skipped: no user nobody")
        return 77
    progs = sorted(os.path.join("/usr/bin", n) for n in os.listdir("/usr/bin"))
    progs = [p for p in progs if is_candidate(p)]
    if limit:
        progs = progs[:limit]
    progs += extra
    cwd = tempfile.mkdtemp(prefix="uarch-zoo.")
    os.chmod(cwd, 0o755)
    jobs = [(p, a) for p in progs for a in ("--version", "--help")]
    failures, differ, crashed_plain = [], 0, 0
    with concurrent.futures.ThreadPoolExecutor(max_workers=8) as pool:
        def one(job):
            prog, arg = job
            plain = run(prog, arg, None, cwd, nobody.pw_uid, nobody.pw_gid)
            return job, plain, {k: run(prog, arg, lib, cwd, nobody.pw_uid, nobody.pw_gid) for k, lib in libs.items()}
        for (prog, arg), plain, withlib in pool.map(one, jobs):
            if plain.startswith("crash"):
                crashed_plain += 1
            for k, got in withlib.items():
                if got != plain:
                    differ += 1
                if got.startswith("crash") and not plain.startswith("crash"):
                    failures.append(f"{prog} {arg}: {got} with {k}, {plain} without")
    os.rmdir(cwd)
    print(f"{len(progs)} programs ({len(extra)} added), {len(jobs)} runs each way: {len(failures)} crashed "
          f"only with uarch; {differ} runs ended otherwise than without (timeouts, exit codes); "
          f"{crashed_plain} crashed without uarch too")
    for f in failures:
        print(f"FAIL: {f}")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
