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
import random
import resource
import select
import signal
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import guards  # noqa: E402
import tracer  # noqa: E402

_dumps = json.dumps
_loads = json.loads
_real_exit = os._exit
_monotonic = time.monotonic

PYTHON = tracer.python_version()


class Capture(io.StringIO):
    """sys.stdout/sys.stderr replacement: keeps the first `cap` characters, counts the rest."""

    def __init__(self, cap):
        super().__init__()
        self.cap = cap
        self.total = 0

    def write(self, s):
        if not isinstance(s, str):
            raise TypeError("write() argument must be str, not %s" % type(s).__name__)
        room = self.cap - self.total
        if room > 0:
            super().write(s if len(s) <= room else s[:room])
        self.total += len(s)
        return len(s)


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


class Child:
    """Runs in the forked child: sets the limits, runs the program, writes one result line."""

    def __init__(self, worker, req, wfd, timeout):
        self.w = worker
        self.cfg = worker.cfg
        self.req = req
        self.wfd = wfd
        self.timeout = timeout
        self.blocked = worker.blocked
        self.recorder = None
        self.record = None
        self.stdout = None
        self.stderr = None

    def run(self):
        start = _monotonic()
        try:
            os.setpgid(0, 0)
        except OSError:
            pass
        signal.signal(signal.SIGINT, signal.SIG_DFL)
        signal.signal(signal.SIGTERM, signal.SIG_DFL)
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)  # a too-big write fails (EFBIG) instead of killing
        os.dup2(self.w.devnull, 0)
        os.dup2(self.w.outfd, 1)
        os.dup2(self.w.outfd, 2)
        os.close(self.w.devnull)
        os.close(self.w.outfd)
        os.chdir(self.w.workdir)
        self.set_rlimits()
        self.stdout = sys.stdout = self.w.stdout
        self.stderr = sys.stderr = self.w.stderr
        sys.stdin = self.w.stdin
        sys.addaudithook(self.w.hook)
        # In the child: `random` reseeds itself from the OS after every fork (register_at_fork).
        random.seed(self.cfg["seed"])
        os._exit = self.exit_hook
        try:
            import posix

            posix._exit = self.exit_hook
        except ImportError:
            pass
        # Soft wall-clock limit for code that emits no trace events (`while True: pass` on one
        # line, time.sleep): the handler writes the partial record. A program that replaces the
        # handler still meets the worker's SIGKILL.
        signal.signal(signal.SIGALRM, self.on_alarm)
        signal.setitimer(signal.ITIMER_REAL, self.timeout)
        if self.req.get("kind", "trace") == "exec":
            self.run_exec()
        else:
            self.run_trace(start)

    def set_rlimits(self):
        cfg = self.cfg
        cpu = int(self.timeout) + 1
        limits = [
            (resource.RLIMIT_CPU, (cpu, cpu + 1)),
            (resource.RLIMIT_FSIZE, (cfg["fsize_mb"] << 20,) * 2),
            (resource.RLIMIT_CORE, (0, 0)),
            # Counts all processes of the user, so any small value refuses new ones; ignored by
            # the kernel for root (the audit guard refuses fork there).
            (resource.RLIMIT_NPROC, (0, 0)),
        ]
        if cfg["memory_mb"] > 0:
            limits.append((resource.RLIMIT_AS, (cfg["memory_mb"] << 20,) * 2))
        for which, value in limits:
            try:
                resource.setrlimit(which, value)
            except (ValueError, OSError):
                pass

    def run_trace(self, start):
        req = self.req
        max_events = int(req.get("max_events", self.cfg["max_events"]))
        self.recorder = tracer.Recorder(
            max_events=max_events,
            repr_cap=self.cfg["repr_cap"],
            on_limit=self.on_limit,
            deadline=start + self.timeout,
        )
        rec = tracer.trace_program(req["code"], req["entry_call"], recorder=self.recorder)
        self.finish(rec)

    def run_exec(self):
        rec = {"status": "normal"}
        self.record = rec
        try:
            compiled = compile(self.req["code"], "<ndbg-exec>", "exec")
            exec(compiled, {"__name__": "__main__"})
        except BaseException as e:
            rec["status"] = "error"
            rec["error"] = "%s: %s" % (type(e).__name__, tracer.safe_repr_message(e))
        self.finish(rec)

    def on_limit(self, recorder, reason):
        rec = recorder.record
        rec["status"] = "never"
        rec["limit"] = reason
        rec["error"] = tracer.limit_message(reason, recorder.max_events)
        self.finish(rec)

    def on_alarm(self, _sig, _frame):
        sys.settrace(None)
        if self.recorder is not None:
            self.recorder.limit_hit = True
            self.on_limit(self.recorder, "timeout")
        rec = self.record if self.record is not None else {}
        rec["status"] = "never"
        rec["limit"] = "timeout"
        rec["error"] = tracer.limit_message("timeout", 0)
        self.finish(rec)

    def escaped(self, exc):
        """An exception escaped the run itself (not the program's call): keep what we have."""
        sys.settrace(None)
        if self.recorder is not None and self.recorder.record is not None:
            rec = self.recorder.record
        else:
            rec = self.record if self.record is not None else {}
            if self.req.get("kind", "trace") == "trace":
                rec.update(code=self.req.get("code"), entry_call=self.req.get("entry_call"),
                           python=PYTHON, events=[])
        rec["status"] = "error"
        rec["limit"] = "crash"
        rec["error"] = "%s escaped the traced call (raised from a signal handler?)" % type(exc).__name__
        self.finish(rec)

    def exit_hook(self, code=0):
        """os._exit() from user code: keep what was recorded, then really exit."""
        if self.recorder is not None:
            sys.settrace(None)
            rec = self.recorder.record
        else:
            rec = self.record or {}
        rec["status"] = "error"
        rec["limit"] = "exit"
        rec["error"] = "os._exit(%s) called by the program" % (code,)
        self.finish(rec)

    def finish(self, rec):
        """Writes the result line and exits; signals are blocked so no handler can interrupt."""
        try:
            signal.pthread_sigmask(signal.SIG_BLOCK, signal.valid_signals())
        except (OSError, ValueError):
            pass
        try:
            out = {"id": self.req.get("id")}
            out.update(rec)
            err = out.get("error") or ""
            if out["status"] == "error" and "limit" not in out:
                if err.startswith("MemoryError"):
                    out["limit"] = "memory"
                elif err.startswith("OSError: [Errno 27]"):  # EFBIG: the file-size rlimit
                    out["limit"] = "output"
                elif self.blocked and "ndbg sandbox:" in err:
                    out["limit"] = "sandbox"
            out["isolation"] = self.w.isolation
            self.add_output(out)
            if self.blocked:
                out["blocked"] = list(self.blocked)
            data = (_dumps(out) + "\n").encode()
        except BaseException as e:  # e.g. MemoryError while serializing a huge record
            out = {"id": self.req.get("id"), "status": "error", "limit": "output",
                   "error": "cannot serialize the result: %s" % type(e).__name__,
                   "isolation": self.w.isolation}
            if self.req.get("kind", "trace") == "trace":
                out.update(code=self.req.get("code"), entry_call=self.req.get("entry_call"),
                           python=PYTHON, events=[])
            data = (_dumps(out) + "\n").encode()
        write_all(self.wfd, data)
        _real_exit(0)

    def add_output(self, out):
        cap = self.cfg["output_cap"]
        raw = b""
        try:
            if os.fstat(1).st_size > 0:
                raw = os.pread(1, cap, 0)
        except OSError:
            pass
        for name, stream, extra in (("stdout", self.stdout, raw), ("stderr", self.stderr, b"")):
            if stream is None:
                continue
            text = stream.getvalue() + extra.decode("utf-8", "replace")
            total = stream.total + len(extra)
            if text:
                out[name] = text[:cap]
            if total > cap:
                out[name + "_truncated"] = total - cap


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


def write_all(fd, data):
    view = memoryview(data)
    while view:
        n = os.write(fd, view)
        view = view[n:]


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
        _real_exit(0)

    signal.signal(signal.SIGTERM, terminate)
    worker.serve()


if __name__ == "__main__":
    main()
