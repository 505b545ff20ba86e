"""How uarch is measured on a real program: a command run to its end (its
own CPU time and its children's), or a server started in a cgroup of its
own and driven by a client (the server's CPU time). Shared by
scripts/bench-e2e.sh's programs and uarch-run --compare; the context (ctx)
says where the preload library is, the two sides' environments and the
CPUs the server and the client run on."""
import os
import shutil
import signal
import subprocess
import time

import measure


class Context:
    """lib: the preload library. The "plain" side runs without it (or, with
    against, with it and UARCH_TUNABLES=against); the "uarch" side with it
    and UARCH_TUNABLES=tunables (default: the caller's UARCH_TUNABLES)."""

    def __init__(self, lib, scale, work, tunables=None, against=None):
        self.lib, self.scale, self.work = lib, scale, work
        self.live = []          # servers running: stopped on any exit
        drop = ("LD_PRELOAD", "UARCH_TUNABLES", "LD_BIND_NOW", "LD_DEBUG", "LD_LIBRARY_PATH")
        self.plain = {k: v for k, v in os.environ.items() if k not in drop}
        self.uarch = dict(self.plain, LD_PRELOAD=lib)
        tunables = os.environ.get("UARCH_TUNABLES") if tunables is None else tunables
        if tunables:
            self.uarch["UARCH_TUNABLES"] = tunables
        if against is not None:
            self.plain = dict(self.plain, LD_PRELOAD=lib, UARCH_TUNABLES=against)
        cpus = sorted(os.sched_getaffinity(0))
        # Server and client on different CPUs; a lone CPU is shared.
        self.server_cpu = cpus[0] if len(cpus) >= 2 else None
        self.client_cpu = cpus[1] if len(cpus) >= 2 else None

    def env(self, side):
        return self.uarch if side == "uarch" else self.plain

    def preloaded(self, side):
        return "LD_PRELOAD" in self.env(side)


class Workload:
    """name: what --programs takes; program and workload: the table's columns;
    packages: the Debian packages it needs (a tuple: alternatives, the first
    one apt knows is installed); commands: the programs it runs, each looked
    up on PATH and in /usr/sbin; unit: what one measured value is."""
    name = program = workload = ""
    packages = ()
    commands = ()
    unit = "s"
    server = False
    cwd = None      # where it runs (None: its own directory, dir)
    check = None    # the test (tests/e2e) that checks its output with and without uarch

    def __init__(self, ctx):
        self.ctx = ctx
        self.dir = os.path.join(ctx.work, self.name)

    def missing(self):
        """Why it cannot run here, or None."""
        for c in self.commands:
            if not (shutil.which(c) or os.path.exists(f"/usr/sbin/{c}")):
                return f"{c} not installed"
        return None

    def setup(self):
        os.makedirs(self.dir, exist_ok=True)

    def make_dir(self, path):
        """A directory the workload's processes can write into."""
        os.makedirs(path, exist_ok=True)

    def writers(self):
        """uarch-prof's options for a program whose processes drop to
        another user themselves (nginx's workers): they write their parts."""
        return []

    def stop(self):
        pass


class Client(Workload):
    """A command the suite runs and measures itself."""

    def cmd(self):
        raise NotImplementedError

    def before_run(self):
        """Untimed preparation of each run."""

    def stdin(self):
        return None

    def run(self, side):
        self.before_run()
        t, _ = measure.run_child(self.cmd(), self.ctx.env(side), self.cwd or self.dir, stdin=self.stdin())
        return t

    def trace(self, prefix, runs=1):
        """One run under prefix (a recorder)."""
        self.before_run()
        measure.run_child(prefix + self.cmd(), self.ctx.env("plain"), self.cwd or self.dir, stdin=self.stdin())

    def output(self, side, timeout=600):
        """One run's exit status, stdout and stderr, and result(): what must
        not differ with and without uarch."""
        self.before_run()
        with open(self.stdin() or os.devnull, "rb") as fin:
            r = subprocess.run(self.cmd(), env=self.ctx.env(side), cwd=self.cwd or self.dir, stdin=fin,
                               capture_output=True, timeout=timeout)
        return r.returncode, r.stdout, r.stderr, self.result()

    def result(self):
        """What a run leaves besides its output (a file's digest)."""
        return b""

    def same_output(self):
        """Runs it without, then with uarch: (the run without, an error or None)."""
        a = self.output("plain")
        if a[0] != 0:
            last = a[2].decode(errors="replace").strip().splitlines()[-1:] or ["no message"]
            return a, f"fails even without the preload library (exit {a[0]}): {last[0]}"
        b = self.output("uarch")
        diff = [part for part, x, y in zip(("exit status", "stdout", "stderr", "result"), a, b) if x != y]
        return a, (f"{', '.join(diff)} differ{'s' if len(diff) == 1 else ''} under LD_PRELOAD" if diff else None)


class Instance:
    """One server: its directory, socket or port, process and cgroup."""

    def __init__(self, side, path):
        self.side, self.dir = side, path
        self.proc = self.group = self.log = None
        self.port = None
        self.wrapped = False   # the server runs under a recorder


class Server(Workload):
    """A server started twice, without and with the preload library (each in
    its own cgroup, pinned to the server CPU), and a client pinned to the
    other CPU. Subclasses give the commands."""
    server = True
    capture = False        # units() reads the client's stdout
    user = None            # the server runs as this user when the suite is root
    stop_signal = signal.SIGTERM
    trace_runs = 1         # client runs before the one a prediction is for (the suite's warm-up)

    def __init__(self, ctx):
        super().__init__(ctx)
        self.inst = {}

    def server_cmd(self, inst):
        raise NotImplementedError

    def ready(self, inst):
        raise NotImplementedError

    def init_instance(self, inst):
        """Untimed: data the runs need, once per server."""

    def client_cmd(self, inst):
        raise NotImplementedError

    def units(self, out):
        """How many units of work a client run's stdout reports (1 unless the
        run is time-bound)."""
        return 1

    def owner(self):
        return self.user if self.user and os.geteuid() == 0 else None

    def make_dir(self, path):
        os.makedirs(path, exist_ok=True)
        if self.owner():
            pw = measure.pwd.getpwnam(self.owner())
            os.chown(path, pw.pw_uid, pw.pw_gid)

    def setup(self):
        super().setup()
        for side in ("plain", "uarch"):
            self.inst[side] = self.start(side)
            self.init_instance(self.inst[side])

    def start(self, side, prefix=(), tag="trace"):
        inst = Instance(side, os.path.join(self.dir, side if not prefix else tag))
        inst.wrapped = bool(prefix)
        self.make_dir(inst.dir)
        self.prepare(inst)
        inst.group = measure.Group(f"uarch-e2e-{os.getpid()}-{self.name}-{inst.side}{'-trace' if prefix else ''}")
        cpu, owner = self.ctx.server_cpu, self.owner()

        def pre():
            if cpu is not None:
                os.sched_setaffinity(0, {cpu})
            inst.group.attach()
            if owner:
                measure.drop_to(owner)
        inst.log = open(os.path.join(self.dir, f"{os.path.basename(inst.dir)}.log"), "wb")
        env = self.ctx.env(side)
        if owner:
            pw = measure.pwd.getpwnam(owner)
            env = dict(env, HOME=pw.pw_dir, USER=owner, LOGNAME=owner)
        inst.proc = subprocess.Popen(list(prefix) + self.server_cmd(inst), env=env, cwd=self.cwd or inst.dir,
                                     stdin=subprocess.DEVNULL, stdout=inst.log, stderr=subprocess.STDOUT,
                                     preexec_fn=pre, start_new_session=True)
        inst.group.root_pid = inst.proc.pid
        self.ctx.live.append((self, inst))
        end = time.monotonic() + 120
        while not self.ready(inst):
            if inst.proc.poll() is not None or time.monotonic() > end:
                self.halt(inst)
                with open(inst.log.name, errors="replace") as f:
                    tail = f.read().strip().splitlines()[-1:] or ["no message"]
                raise RuntimeError(f"{self.program} did not start: {tail[0]}")
            time.sleep(0.05)
        if not prefix:
            self.check_preload(inst)
        return inst

    def prepare(self, inst):
        """Untimed, before the server starts: its configuration, data dir."""

    def check_preload(self, inst):
        """The preload library is mapped in the server's processes on the
        uarch side, and in none on the plain side."""
        lib = os.path.basename(self.ctx.lib)
        for pid in inst.group.pids():
            try:
                with open(f"/proc/{pid}/maps") as f:
                    maps = f.read()
            except OSError:
                continue
            if not maps:
                continue   # exiting: its memory is already gone
            mapped = lib in maps
            if mapped != self.ctx.preloaded(inst.side):
                self.halt(inst)
                raise RuntimeError(f"{self.program} pid {pid}: {lib} {'not ' if not mapped else ''}"
                                   f"mapped on the {inst.side} side")

    def halt(self, inst):
        if inst.proc and inst.proc.poll() is None:
            try:
                # Under a recorder (trace), the server is its child: the
                # server is stopped, and the recorder ends when it has.
                pids = measure.children(inst.proc.pid) if inst.wrapped else [inst.proc.pid]
                for pid in pids or [inst.proc.pid]:
                    os.kill(pid, self.stop_signal)
                inst.proc.wait(30)
            except subprocess.TimeoutExpired:
                os.killpg(inst.proc.pid, signal.SIGKILL)
                inst.proc.wait()
        if inst.group:
            # Children the server left behind, by their ids.
            for pid in inst.group.pids() if inst.group.path else []:
                try:
                    os.kill(pid, signal.SIGKILL)
                except OSError:
                    pass
            inst.group.remove()
        if inst.log:
            inst.log.close()
        if (self, inst) in self.ctx.live:
            self.ctx.live.remove((self, inst))

    def stop(self):
        for inst in self.inst.values():
            self.halt(inst)
        self.inst = {}

    def restart(self):
        """Both servers stopped and started again on the data they have
        (init_instance is not repeated): new processes, whose memory other
        physical pages back, as a server's next start gets."""
        for side, inst in list(self.inst.items()):
            self.halt(inst)
            self.inst[side] = self.start(side)

    def client(self, inst, capture=False):
        return measure.run_child(self.client_cmd(inst), self.ctx.env("plain"), self.dir,
                                 cpu=self.ctx.client_cpu, capture=capture)

    def run(self, side):
        inst = self.inst[side]
        n = len(inst.group.pids())
        t0 = inst.group.cpu_seconds()
        _, out = self.client(inst, capture=self.capture)
        inst.group.settle(n)
        return (inst.group.cpu_seconds() - t0) / self.units(out)

    def trace(self, prefix, runs=1):
        """The server under prefix (a recorder), started, loaded, its client
        run runs times, stopped."""
        inst = self.start("plain", prefix=prefix, tag=f"trace-{runs}")
        try:
            self.init_instance(inst)
            for _ in range(runs):
                self.client(inst)
        finally:
            self.halt(inst)
