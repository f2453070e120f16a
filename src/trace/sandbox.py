# Over 300 lines on purpose: the worker's per-program fork/wait/kill path and the helpers it calls
# stay in one module so that path touches as little memory as it can (see below).
"""ndbg sandbox worker ("zygote"): imports the tracer once, then runs each program in a forked
child: a fresh fork, or the shared session child for the programs purity.shareable admits.

    python3 -B -s sandbox.py CONFIG_JSON        (usually inside bubblewrap, see isolation.ts)

The wire format is in protocol.py.

Why the worker never decodes the request nor reads the result: after every fork, each page the
worker writes costs a copy-on-write fault (the kernel write-protects all of them for the child),
and in a VM a fault costs microseconds, so the per-program path of the worker touches as little
memory as it can: the payload goes into a buffer allocated once, the child decodes it and writes
its result to the worker's stdout itself (the worker waits for the child to exit, in order, so the
stream stays in sequence), and the worker only waits, kills and writes the trailer. The session
(session.py) goes further and skips the fork for the programs that cannot tell the difference.

Limits and how each ends (status / limit):
  step cap          tracer writes the partial record and os._exit()s   never / steps
  soft deadline     tracer (checked every 16 events), partial record   never / timeout
  wall clock        the worker SIGKILLs the child's process group     never / timeout (no events)
  CPU rlimit        kernel SIGXCPU/SIGKILL                             never / cpu
  address space     MemoryError in the program                         error / memory
  result too large  the child writes an error record instead           error / output
  os._exit()        patched: partial record, then the real exit        error / exit
  blocked operation SandboxViolation (PermissionError) in the program  error / sandbox
  killed by signal  e.g. SIGSEGV from C-stack overflow                 error / crash
"""

import gc
import json
import os
import signal
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import guards  # noqa: E402
import tracer  # noqa: E402
from protocol import (CALL_LEN, CODE_LEN, HEADER_BYTES, ID_LEN, KIND, KIND_STATS,  # noqa: E402
                      KIND_TRACE, OK_TRAILER, TIMEOUT_MS, encode_line, exit_trailer,
                      failure_trailer, write_all)
from sandbox_child import CHLD, Runner, prepare_worker  # noqa: E402
from seeding import SeedOnImport  # noqa: E402
from session import Session  # noqa: E402

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
        # The child writes its result here (the pool's pipe) after pointing fds 1/2 at fdout.
        self.resultfd = os.dup(1)
        self.current = 0  # pid of the running child
        self.session = None  # the shared child, see Session
        self.shared = 0  # programs answered by a session
        self.forked = 0  # programs run in a fork of their own
        # Per-child state built once: every child starts from a copy of it (fork).
        self.blocked = []
        self.hook = guards.make_hook(self.workdir, self.blocked)
        self.header = bytearray(HEADER_BYTES)
        self.fields = memoryview(self.header).cast("I")
        self.payload = bytearray(1 << 16)  # grows for larger programs
        prepare_worker(cfg)
        # Modules the programs will import (mined code: typing, re, dataclasses, ...), imported
        # once here so that no child pays for it: an import costs a fresh fork 1-40 ms, more
        # than the fork itself. A module is the same object whether a child imports it or finds
        # it in sys.modules, and the tracer records only the program's own frames.
        for name in cfg.get("preimport", ()):
            __import__(name)
        if "random" in sys.modules:  # pragma: no cover - guards the import list of this file
            raise RuntimeError("the sandbox worker must not import random (see SeedOnImport)")
        sys.meta_path.insert(0, SeedOnImport(cfg["seed"]))
        self.runner = Runner(self)

    # ---- worker side -------------------------------------------------------------------------

    def warm_up(self):
        """Runs the tracer and the encoder a few times before the first fork, so the lazily
        built state (interned names, caches) already exists in the worker and each child
        touches fewer shared pages."""
        code = ("def g(n):\n    yield from range(n)\n\ndef f(xs, k=2):\n    out = {}\n"
                "    for i, x in enumerate(xs):\n        try:\n            out[x] = [y * k for y in g(i)]\n"
                "        except Exception as e:\n            out[x] = repr(e)\n    return sorted(out.items())")
        for _ in range(3):
            encode_line(tracer.trace_program(code, "f(['a', 'b', 'c'])"))

    def serve(self):
        self.warm_up()
        gc.collect()
        gc.freeze()  # keep the worker's objects out of the children's GC (fewer copy-on-write faults)
        stdin = sys.stdin.buffer  # readinto fills the whole buffer unless the input ends
        header = self.header
        while True:
            if stdin.readinto(header) < HEADER_BYTES:
                return
            fields = self.fields
            size = fields[ID_LEN] + fields[CODE_LEN] + fields[CALL_LEN]
            if size > len(self.payload):
                self.payload = bytearray(size)
            if stdin.readinto(memoryview(self.payload)[:size]) < size:
                return
            if fields[KIND] == KIND_STATS:  # CPU used so far by the worker and its children
                self.end_session()  # a child's CPU time is counted once it has been reaped
                t = os.times()
                write_all(1, (_dumps({"status": "normal", "user": t.user, "system": t.system,
                                      "children_user": t.children_user,
                                      "children_system": t.children_system,
                                      "shared": self.shared, "forked": self.forked}) + "\n").encode())
                os.write(1, OK_TRAILER)
                continue
            try:
                timeout = fields[TIMEOUT_MS] / 1000.0
                trailer = None
                if fields[KIND] == KIND_TRACE and self.shares(timeout):
                    trailer = self.run_shared(timeout, size)
                if trailer is None:
                    trailer = self.run_one(timeout)
            except Exception as e:  # a bug here must not kill the worker or desync the protocol
                trailer = failure_trailer("error", "crash", "sandbox worker error: %r" % (e,))
            os.write(1, trailer)  # a few bytes: one write, atomic on a pipe

    def run_one(self, timeout):
        """Runs the request in a fresh fork of the worker."""
        self.forked += 1
        self.clean_workdir()
        try:
            pid = os.fork()
        except OSError as e:
            return failure_trailer("error", "sandbox", "cannot fork: %s" % e)
        if pid == 0:  # child
            try:
                if self.session is not None:  # the program must not reach the session's pipes
                    self.session.close_fds()
                self.runner.run()
            except BaseException as e:  # e.g. raised by the program's own signal handler
                self.runner.escaped(e)
            finally:
                _real_exit(70)
        self.current = pid
        try:
            os.setpgid(pid, pid)
        except OSError:
            pass  # the child already did it, or already exited
        try:
            status = self.wait(pid, timeout + self.cfg["kill_grace_s"])
        finally:
            self.current = 0
            if os.lseek(self.outfd, 0, os.SEEK_END):
                os.ftruncate(self.outfd, 0)
        return exit_trailer(status, timeout)

    def shares(self, timeout):
        """Whether a trace with this time limit goes to the session: sharing is on, and the
        limit is small against the session's CPU budget (else sessions would end every few
        programs, each costing a fork on top of the program's own)."""
        return self.cfg["session_programs"] > 0 and 2 * (timeout + 1) <= self.cfg["session_cpu_s"]

    def run_shared(self, timeout, size):
        """Runs the request in the shared session child; None when the program does not qualify
        (purity.shareable) or the session cannot take it, and it is to run in a fresh fork."""
        session = self.session
        if session is None:
            try:
                session = self.session = Session(self)
            except OSError:  # cannot fork now: the fresh-fork path reports it
                return None
        try:
            os.write(session.reqfd, self.header)
            write_all(session.reqfd, memoryview(self.payload)[:size])
        except OSError:  # the session died between programs
            self.end_session()
            return None
        reply = session.reply(timeout + self.cfg["kill_grace_s"])
        if reply == b"P":
            self.shared += 1
            session.programs += 1
            if session.programs >= self.cfg["session_programs"]:
                self.end_session()  # a fresh one now and then: no slow drift of its heap
            return OK_TRAILER
        if reply == b"I":
            return None
        if reply == b"R":  # its CPU budget is nearly spent: a new session takes the next ones
            self.end_session()
            return None
        self.shared += 1
        if reply is None:  # out of time
            kill_group(session.pid)
            self.end_session()
            return exit_trailer(None, timeout)
        # It exited: a limit ends a session after its result line, or it crashed.
        return exit_trailer(self.end_session(), timeout)

    def end_session(self):
        """Stops the shared child (closing its request pipe ends it) and reaps it; its exit
        status, or None when it had to be killed."""
        session, self.session = self.session, None
        if session is None:
            return None
        session.close_fds()
        return self.wait(session.pid, self.cfg["kill_grace_s"])

    def wait(self, pid, limit):
        """The child's exit status, or None when it ran past `limit` seconds and was killed.
        Either way its whole process group is gone afterwards. SIGCHLD is blocked in the worker
        (see sandbox_child.prepare_worker) so that it can be waited for with a timeout."""
        deadline = _monotonic() + limit
        status = None
        while True:
            got, st = os.waitpid(pid, os.WNOHANG)
            if got == pid:
                status = st
                break
            left = deadline - _monotonic()
            if left <= 0:
                break
            # A SIGCHLD raised before this call is still pending, so no exit is missed; one
            # from an earlier child only costs another turn of the loop.
            signal.sigtimedwait(CHLD, left)
        kill_group(pid)  # also reaches anything the child left in its process group
        if status is None:
            os.waitpid(pid, 0)
        return status

    def clean_workdir(self):
        try:
            os.rmdir(self.workdir)  # fails unless empty: no listing on the usual path
        except FileNotFoundError:
            pass
        except OSError:
            # The program left files: remove them (shutil is not imported: fork cost).
            remove_tree(self.workdir)
        try:
            os.mkdir(self.workdir, 0o700)
        except FileExistsError:  # remove_tree could not remove it; the next program says so
            pass


def remove_tree(top):
    """rm -rf that also restores permissions the program may have taken away, and never follows
    a symbolic link: a program may have replaced its working directory with one to anywhere."""
    if os.path.islink(top):
        try:
            os.unlink(top)
        except OSError:
            pass
        return
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
        "session_programs": 1000,
        "session_cpu_s": 60,
    }
    cfg.update(_loads(sys.argv[1]))
    import builtins

    for name in ("exit", "quit"):
        if not hasattr(builtins, name):
            setattr(builtins, name, _Quitter(name))
    if sys.byteorder != "little":  # pragma: no cover - the header is read in native order
        raise SystemExit("ndbg sandbox: a little-endian machine is required")
    worker = Worker(cfg)
    worker_pid = os.getpid()

    def terminate(_sig, _frame):
        if os.getpid() != worker_pid:  # inherited by a child: behave like the default action
            _real_exit(128 + signal.SIGTERM)
        # The parent gives up on us: take the running program's process group along.
        if worker.current:
            kill_group(worker.current)
        if worker.session is not None:
            kill_group(worker.session.pid)
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
