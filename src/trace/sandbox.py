"""ndbg sandbox worker ("zygote"): imports the tracer once, then forks one child per program.

    python3 -B -s sandbox.py CONFIG_JSON        (usually inside bubblewrap, see isolation.ts)

Protocol: one JSON request per line on stdin, exactly one JSON result line per request on stdout,
in order. Requests: {"id", "kind": "trace", "code", "entry_call"} or {"id", "kind": "exec",
"code"}; optional per-request "timeout_s" and "max_events". Nothing else is ever written to
stdout: the child's fds 0/1/2 are /dev/null and a capture file, and its result travels on a
private pipe that the worker validates before forwarding it.

The per-program path is kept lean (one fork, a few syscalls, no exec) because the program
generator traces tens of thousands of programs. What the child does, in order: own process
group, fds, rlimits, private working directory, seeded random, audit guards, then the run.

Limits and how each ends (status / limit):
  step cap          tracer writes the partial record and os._exit()s   never / steps
  soft deadline     tracer (checked every 64 events), partial record   never / timeout
  wall clock        the worker SIGKILLs the child's process group     never / timeout (no events)
  CPU rlimit        kernel SIGXCPU/SIGKILL                             never / cpu
  address space     MemoryError in the program                         error / memory
  os._exit()        patched: partial record, then the real exit        error / exit
  blocked operation SandboxViolation (PermissionError) in the program  error / sandbox
  killed by signal  e.g. SIGSEGV from C-stack overflow                 error / crash
"""

import gc
import io
import json
import os
import select
import signal
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import guards  # noqa: E402
import tracer  # noqa: E402
from sandbox_child import PYTHON, Capture, Child, write_all  # noqa: E402

_dumps = json.dumps
_loads = json.loads
_real_exit = os._exit
_monotonic = time.monotonic


class Worker:
    def __init__(self, cfg):
        self.cfg = cfg
        self.isolation = cfg["isolation"]
        self.base = cfg["workdir_base"]
        self.workdir = os.path.join(self.base, "work")
        self.fdout = os.path.join(self.base, "fdout")
        os.makedirs(self.workdir, exist_ok=True)
        # Opened once here and dup2'ed in each child (cheaper than opening per program). fdout
        # receives whatever the program writes to fds 1 and 2 directly; it is emptied after use.
        self.devnull = os.open(os.devnull, os.O_RDONLY)
        self.outfd = os.open(self.fdout, os.O_RDWR | os.O_CREAT | os.O_TRUNC | os.O_APPEND, 0o600)
        self.has_pidfd = hasattr(os, "pidfd_open")
        self.current = 0  # pid of the running child
        # Per-child state built once: every child starts from a copy of it (fork).
        self.blocked = []
        self.hook = guards.make_hook(self.workdir, self.blocked)
        self.stdout = Capture(cfg["output_cap"])
        self.stderr = Capture(cfg["output_cap"])
        self.stdin = io.StringIO("")

    # ---- worker side -------------------------------------------------------------------------

    def warm_up(self):
        """Runs the tracer and the encoder a few times before the first fork, so the lazily
        built state (interned names, caches) already exists in the worker and each child
        touches fewer shared pages (every first write to one is a copy-on-write fault, the
        main per-program cost)."""
        code = ("def g(n):\n    yield from range(n)\n\ndef f(xs, k=2):\n    out = {}\n"
                "    for i, x in enumerate(xs):\n        try:\n            out[x] = [y * k for y in g(i)]\n"
                "        except Exception as e:\n            out[x] = repr(e)\n    return sorted(out.items())")
        for _ in range(3):
            rec = tracer.trace_program(code, "f(['a', 'b', 'c'])")
            _dumps(rec)
        _loads(_dumps({"id": "warm", "kind": "trace", "code": code}))

    def serve(self):
        stdin = sys.stdin.buffer
        self.warm_up()
        gc.collect()
        gc.freeze()  # keep the worker's objects out of the children's GC (fewer copy-on-write faults)
        while True:
            line = stdin.readline()
            if not line:
                return
            if not line.strip():
                continue
            try:
                req = _loads(line)
                if req.get("kind") == "stats":  # CPU used so far by the worker and its children
                    t = os.times()
                    out = (_dumps({"id": req.get("id"), "status": "normal", "user": t.user,
                                   "system": t.system, "children_user": t.children_user,
                                   "children_system": t.children_system}) + "\n").encode()
                    write_all(1, out)
                    continue
                out = self.run_one(req)
            except Exception as e:  # a bug here must not kill the worker or desync the protocol
                out = self.failure({"id": None}, "error", "crash", "sandbox worker error: %r" % (e,))
            write_all(1, out)

    def run_one(self, req):
        timeout = float(req.get("timeout_s", self.cfg["timeout_s"]))
        self.clean_workdir()
        r, w = os.pipe()
        try:
            pid = os.fork()
        except OSError as e:
            os.close(r)
            os.close(w)
            return self.failure(req, "error", "sandbox", "cannot fork: %s" % e)
        self.current = pid
        if pid == 0:  # child
            child = None
            try:
                os.close(r)
                child = Child(self, req, w, timeout)
                child.run()
            except BaseException as e:  # e.g. raised by the program's own signal handler
                if child is not None:
                    child.escaped(e)
            finally:
                _real_exit(70)
        os.close(w)
        try:
            os.setpgid(pid, pid)
        except OSError:
            pass  # the child already did it, or already exited
        try:
            return self.collect(req, pid, r, timeout)
        finally:
            self.current = 0
            if os.fstat(self.outfd).st_size:
                os.ftruncate(self.outfd, 0)

    def collect(self, req, pid, r, timeout):
        """Reads the child's result until EOF and exit, or kills it at the wall-clock limit."""
        hard = _monotonic() + timeout + self.cfg["kill_grace_s"]
        max_bytes = self.cfg["max_result_mb"] << 20
        chunks = []
        size = 0
        killed = None
        status = None
        poller = select.poll()
        poller.register(r, select.POLLIN)
        pidfd = None
        if self.has_pidfd:
            try:
                pidfd = os.pidfd_open(pid)
                poller.register(pidfd, select.POLLIN)
            except OSError:
                pidfd = None
        eof = False
        while status is None:
            remaining = hard - _monotonic()
            if remaining <= 0:
                killed = "timeout"
                break
            if eof and pidfd is None:
                # No pidfd (old kernel): the result is in; wait for the exit by polling.
                got, st = os.waitpid(pid, os.WNOHANG)
                if got == pid:
                    status = st
                    break
                time.sleep(0.001)
                continue
            for fd, _ in poller.poll(remaining * 1000):
                if fd == r:
                    data = os.read(r, 1 << 20)
                    if not data:
                        eof = True
                        poller.unregister(r)
                    else:
                        chunks.append(data)
                        size += len(data)
                        if size > max_bytes:
                            killed = "output"
                elif fd == pidfd and eof:
                    status = os.waitpid(pid, 0)[1]
                elif fd == pidfd:
                    # Exited but the pipe is not at EOF yet: drain what is buffered.
                    poller.unregister(pidfd)
                    pidfd_done = pidfd
                    pidfd = None
                    os.close(pidfd_done)
            if killed:
                break
        kill_group(pid)  # also reaches anything the child left in its process group
        os.close(r)
        if pidfd is not None:
            os.close(pidfd)
        if status is None:
            status = os.waitpid(pid, 0)[1]
        return self.finish(req, killed, b"".join(chunks), status)

    def finish(self, req, killed, data, status):
        if killed == "timeout":
            limit_s = float(req.get("timeout_s", self.cfg["timeout_s"]))
            return self.failure(req, "never", "timeout",
                                "wall-clock limit of %gs exceeded (killed)" % limit_s)
        if killed == "output":
            return self.failure(req, "error", "output",
                                "result larger than %d MiB" % self.cfg["max_result_mb"])
        if os.WIFSIGNALED(status):
            sig = os.WTERMSIG(status)
            name = signal_name(sig)
            if sig == signal.SIGXCPU or (sig == signal.SIGKILL and not data):
                # SIGKILL at the hard CPU rlimit (the worker itself did not kill this child)
                return self.failure(req, "never", "cpu", "CPU time limit exceeded (%s)" % name)
            return self.failure(req, "error", "crash", "killed by %s" % name)
        if data.endswith(b"\n") and data.count(b"\n") == 1:
            return data
        code = os.WEXITSTATUS(status) if os.WIFEXITED(status) else -1
        return self.failure(req, "error", "exit",
                            "the process exited with code %d without a result" % code)

    def failure(self, req, status, limit, message):
        rec = {"id": req.get("id")}
        if req.get("kind", "trace") == "trace":
            rec.update(code=req.get("code"), entry_call=req.get("entry_call"), python=PYTHON)
        rec.update(status=status, error=message, limit=limit, isolation=self.isolation)
        if req.get("kind", "trace") == "trace":
            rec["events"] = []
        return (_dumps(rec) + "\n").encode()

    def clean_workdir(self):
        try:
            names = os.listdir(self.workdir)
        except FileNotFoundError:
            os.makedirs(self.workdir, exist_ok=True)
            return
        if not names:
            return
        # The program left files: remove them (shutil is not imported: fork cost).
        remove_tree(self.workdir)
        os.makedirs(self.workdir, exist_ok=True)


def remove_tree(top):
    """rm -rf that also restores permissions the program may have taken away."""
    try:
        os.chmod(top, 0o700)
    except OSError:
        pass
    for root, dirs, files in os.walk(top, topdown=False):
        for name in files:
            try:
                os.unlink(os.path.join(root, name))
            except OSError:
                pass
        for name in dirs:
            path = os.path.join(root, name)
            try:
                if os.path.islink(path):
                    os.unlink(path)
                else:
                    os.chmod(path, 0o700)
                    remove_tree(path) if os.listdir(path) else None
                    os.rmdir(path)
            except OSError:
                pass
    try:
        os.rmdir(top)
    except OSError:
        pass


class _Quitter:
    """`exit`/`quit` builtins, normally added by `site` (the worker runs with -S)."""

    def __init__(self, name):
        self.name = name

    def __repr__(self):
        return "Use %s() or Ctrl-D (i.e. EOF) to exit" % self.name

    def __call__(self, code=None):
        raise SystemExit(code)


def kill_group(pid):
    try:
        os.killpg(pid, signal.SIGKILL)
    except OSError:
        pass


def signal_name(sig):
    try:
        return signal.Signals(sig).name
    except ValueError:
        return "signal %d" % sig


def main():
    cfg = {
        "isolation": "guards",
        "timeout_s": 5.0,
        "kill_grace_s": 0.5,
        "max_events": tracer.DEFAULT_MAX_EVENTS,
        "repr_cap": tracer.DEFAULT_REPR_CAP,
        "memory_mb": 1024,
        "fsize_mb": 16,
        "output_cap": 65536,
        "max_result_mb": 256,
        "seed": 0,
    }
    cfg.update(_loads(sys.argv[1]))
    import builtins

    for name in ("exit", "quit"):
        if not hasattr(builtins, name):
            setattr(builtins, name, _Quitter(name))
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C goes to the CLI, which closes our stdin
    worker = Worker(cfg)

    def terminate(_sig, _frame):
        # The parent gives up on us: take the running program's process group along.
        if worker.current:
            kill_group(worker.current)
        remove_tree(worker.base)
        _real_exit(0)

    signal.signal(signal.SIGTERM, terminate)
    try:
        worker.serve()
    except BrokenPipeError:
        pass  # the parent went away while we were answering
    finally:
        # stdin closed (the parent is done, or died): leave no working directory behind.
        remove_tree(worker.base)


if __name__ == "__main__":
    main()
