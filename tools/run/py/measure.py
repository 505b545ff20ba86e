"""CPU time of the processes that run under the preload library.

A program the suite runs itself: its own rusage (user + system), which
includes every descendant it waited for. A server: the CPU time of its whole
process tree, read from a cgroup of its own (cgroup v2 cpu.stat usage_usec,
else cgroup v1 cpuacct.usage), else summed from /proc/PID/stat (utime, stime
and the times of reaped children, cutime and cstime, of every live process
of the tree: each exited process is counted once, in its reaper's cutime).
"""
import os
import pwd
import subprocess
import tempfile
import time

CLK_TCK = os.sysconf("SC_CLK_TCK")


class Failed(RuntimeError):
    """A measured command that did not exit 0: its status and last line."""

    def __init__(self, cmd, status, last):
        super().__init__(f"{os.path.basename(cmd[0])} exited {status}: {last}")
        self.cmd, self.status, self.last = cmd, status, last


def run_child(cmd, env, cwd, cpu=None, stdin=None, capture=False):
    """Runs cmd to its end (pinned to cpu if given); returns (CPU seconds,
    its stdout if capture else b"")."""
    def pin():
        if cpu is not None:
            os.sched_setaffinity(0, {cpu})
    with open(stdin or os.devnull, "rb") as fin, tempfile.TemporaryFile() as out, \
            tempfile.TemporaryFile() as err:
        p = subprocess.Popen(cmd, env=env, cwd=cwd, stdin=fin, stdout=out if capture else subprocess.DEVNULL,
                             stderr=err, preexec_fn=pin)
        try:
            _, status, ru = os.wait4(p.pid, 0)
        except BaseException:   # interrupted: the suite's own child ends with it
            p.kill()
            p.wait()
            raise
        p.returncode = os.waitstatus_to_exitcode(status)
        out.seek(0)
        err.seek(0)
        if p.returncode != 0:
            last = err.read().decode(errors="replace").strip().splitlines()[-1:] or ["no message"]
            raise Failed(cmd, p.returncode, last[0])
        return ru.ru_utime + ru.ru_stime, out.read() if capture else b""


def drop_to(user):
    """In a child before exec: become user (a name), as runuser -u does."""
    pw = pwd.getpwnam(user)
    os.setgroups([])
    os.setgid(pw.pw_gid)
    os.setuid(pw.pw_uid)


def _mounts():
    with open("/proc/self/mounts") as f:
        return [line.split() for line in f]


def children(pid):
    """Pids of pid's live children."""
    return _kids().get(pid, [])


def _tree(root):
    """Pids of root and its live descendants."""
    kids = _kids()
    out, todo = [], [root]
    while todo:
        p = todo.pop()
        out.append(p)
        todo += kids.get(p, [])
    return out


def _kids():
    kids = {}
    for d in os.listdir("/proc"):
        if d.isdigit():
            try:
                with open(f"/proc/{d}/stat") as f:
                    s = f.read()
                ppid = int(s[s.rindex(")") + 2:].split()[1])
            except (OSError, ValueError):
                continue
            kids.setdefault(ppid, []).append(int(d))
    return kids


class Group:
    """Where a server's CPU time is read: a fresh cgroup, or its /proc tree.

    attach() runs in the server's child before exec (preexec_fn), so that
    everything the server starts is in the group from its first instruction.
    """

    def __init__(self, name):
        self.path, self.kind, self.root_pid = None, "proc", None
        mounts = _mounts()
        for m in [m for m in mounts if m[2] == "cgroup2"] + \
                [m for m in mounts if m[2] == "cgroup" and "cpuacct" in m[3].split(",")]:
            self._try(os.path.join(m[1], name), "v2" if m[2] == "cgroup2" else "v1")
            if self.path:
                break

    def _try(self, path, kind):
        try:
            os.mkdir(path)
        except OSError:
            return
        probe = os.path.join(path, "cpu.stat" if kind == "v2" else "cpuacct.usage")
        if os.access(os.path.join(path, "cgroup.procs"), os.W_OK) and os.path.exists(probe):
            self.path, self.kind = path, kind
        else:
            os.rmdir(path)

    def attach(self):
        if self.path:
            with open(os.path.join(self.path, "cgroup.procs"), "w") as f:
                f.write("0")   # "0": the writing process itself

    def pids(self):
        if self.path:
            with open(os.path.join(self.path, "cgroup.procs")) as f:
                return [int(x) for x in f.read().split()]
        return _tree(self.root_pid) if self.root_pid else []

    def cpu_seconds(self):
        if self.kind == "v2":
            with open(os.path.join(self.path, "cpu.stat")) as f:
                for line in f:
                    k, v = line.split()
                    if k == "usage_usec":
                        return int(v) / 1e6
        if self.kind == "v1":
            with open(os.path.join(self.path, "cpuacct.usage")) as f:
                return int(f.read()) / 1e9
        ticks = 0
        for p in _tree(self.root_pid):
            try:
                with open(f"/proc/{p}/stat") as f:
                    s = f.read()
            except OSError:
                continue
            v = s[s.rindex(")") + 2:].split()
            ticks += sum(int(x) for x in v[11:15])   # utime stime cutime cstime
        return ticks / CLK_TCK

    def settle(self, count, timeout=2.0):
        """Waits (up to timeout s) until the group has at most count processes
        again: the server processes a client's connection started have ended."""
        end = time.monotonic() + timeout
        while len(self.pids()) > count and time.monotonic() < end:
            time.sleep(0.005)

    def remove(self):
        if self.path:
            end = time.monotonic() + 5
            while time.monotonic() < end:
                try:
                    os.rmdir(self.path)
                    break
                except OSError:
                    time.sleep(0.05)
            self.path = None
