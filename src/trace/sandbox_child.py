# Over 300 lines on purpose: all a forked child runs is built once in the worker before the first
# fork (Runner), so it is one module the worker imports before forking.
"""The forked child's side of the sandbox worker (sandbox.py): reads its request from the
worker's buffer, sets the per-program limits, runs the program (traced, or plain `exec`), and
writes exactly one result line to the pool's pipe. A shared session child does the same for
program after program (Runner.serve_session; which programs may share: purity.py).

The `Runner` is built once in the worker, before the first fork, so every child starts with it
(and everything it needs) already in place: each page a child writes costs a copy-on-write fault,
so the per-program path sets as little state as it can. What does not depend on the program is
done once in the worker (`prepare_worker`): signal dispositions, the constant rlimits.
"""

import io
import os
import resource
import signal
import sys
import time

import purity
import tracer
from protocol import (CALL_LEN, CODE_LEN, ID_LEN, KIND, KIND_EXEC, KIND_REPO, KIND_TRACE,
                      MAX_EVENTS, TIMEOUT_MS, encode_line, read_into, write_all)

_real_exit = os._exit  # captured before the child patches os._exit
_monotonic = time.monotonic

PYTHON = tracer.python_version()

CHLD = (signal.SIGCHLD,)


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


def prepare_worker(cfg):
    """Process state every child inherits, set once in the worker instead of per program.

    - SIGINT ignored: Ctrl-C goes to the CLI, which closes the worker's stdin; a program gets
      its own process group anyway, so the terminal never signals it.
    - SIGXFSZ ignored: a write past the file-size limit fails (EFBIG) instead of killing.
    - SIGALRM: the child's soft deadline (armed only in the child, see Runner.run).
    - SIGCHLD blocked, so that the worker can wait for a child with a timeout (sigtimedwait);
      each child unblocks it.
    - the file-size, core and address-space rlimits (the worker stays far below them)."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
    signal.signal(signal.SIGALRM, _on_alarm)
    signal.pthread_sigmask(signal.SIG_BLOCK, CHLD)
    limits = [
        (resource.RLIMIT_FSIZE, (cfg["fsize_mb"] << 20,) * 2),
        (resource.RLIMIT_CORE, (0, 0)),
    ]
    if cfg["memory_mb"] > 0:
        limits.append((resource.RLIMIT_AS, (cfg["memory_mb"] << 20,) * 2))
    for which, value in limits:
        set_rlimit(which, value)


def set_rlimit(which, value):
    try:
        resource.setrlimit(which, value)
    except (ValueError, OSError):
        pass


def _on_alarm(_sig, _frame):
    if Runner.current is not None:
        Runner.current.on_alarm()


class Runner:
    """Runs in a forked child: sets the limits, runs programs, writes one result line each.

    A child runs either one program (`run`, then it exits) or, as the worker's shared session,
    a series of programs that purity.shareable admits (`serve_session`)."""

    current = None  # the Runner of this child, for the SIGALRM handler

    def __init__(self, worker):
        self.w = worker
        self.cfg = worker.cfg
        self.blocked = worker.blocked
        self.stdout = Capture(self.cfg["output_cap"])
        self.stderr = Capture(self.cfg["output_cap"])
        self.stdin = io.StringIO("")
        self.all_signals = signal.valid_signals()  # slow to build (~80 us): once, not per child
        self.session = False
        self.id = None
        self.code = None
        self.entry_call = None
        self.kind = KIND_TRACE
        self.timeout = 0.0
        self.max_events = 0
        self.recorder = None
        self.record = None

    def read_request(self):
        h = self.w.fields
        view = memoryview(self.w.payload)
        a = h[ID_LEN]
        b = a + h[CODE_LEN]
        self.id = str(view[:a], "utf-8")
        self.code = str(view[a:b], "utf-8")
        self.entry_call = str(view[b : b + h[CALL_LEN]], "utf-8")
        self.kind = h[KIND]
        self.timeout = h[TIMEOUT_MS] / 1000.0
        self.max_events = h[MAX_EVENTS] or self.cfg["max_events"]

    def run(self):
        """One program in a fresh fork; never returns."""
        start = _monotonic()
        self.read_request()
        self.enter_child(int(self.timeout) + 1)
        self.start_program()
        if self.kind == KIND_EXEC:
            self.run_exec()
        elif self.kind == KIND_REPO:
            self.run_repo(start)
        else:
            self.run_trace(start)

    def serve_session(self, reqfd, replyfd):
        """Runs the requests the worker writes to `reqfd` until it closes it, answering each on
        `replyfd`: b"P" when the result line has been written, b"I" when the program does not
        qualify for a shared process (nothing ran; the worker forks it a fresh child), b"R" when
        too little of the session's CPU budget is left to grant the program its full time limit
        (nothing ran; the session ends). A limit (steps, time, memory) ends the session after
        the result is written."""
        self.session = True
        budget = self.cfg["session_cpu_s"]
        admitted = frozenset(self.cfg.get("first_look_modules", ()))
        self.enter_child(budget)
        w = self.w
        header = memoryview(w.header)
        while True:
            if not read_into(reqfd, header):
                _real_exit(0)
            size = w.fields[ID_LEN] + w.fields[CODE_LEN] + w.fields[CALL_LEN]
            if size > len(w.payload):
                w.payload = bytearray(size)
            if not read_into(reqfd, memoryview(w.payload)[:size]):
                _real_exit(0)
            start = _monotonic()
            self.read_request()
            t = os.times()
            if t.user + t.system + self.timeout + 1 > budget:
                os.write(replyfd, b"R")
                _real_exit(0)
            if self.kind != KIND_TRACE:  # the worker sends only traces; anything else forks
                os.write(replyfd, b"I")
                continue
            try:
                compiled = tracer.compile_program(self.code, self.entry_call)
            except SyntaxError:
                compiled = None  # traced as an error record: nothing of it runs
            except BaseException:  # e.g. RecursionError on deeply nested source
                os.write(replyfd, b"I")
                continue
            if compiled is not None and not (purity.first_look(compiled, admitted) if admitted else purity.shareable(compiled)):
                os.write(replyfd, b"I")
                continue
            self.start_program()
            self.run_trace(start, compiled)
            os.write(replyfd, b"P")

    def enter_child(self, cpu_s):
        """Process setup of a child, once per fork; `cpu_s`: its CPU-time limit in seconds
        (set here, before the audit hook that refuses rlimit changes)."""
        Runner.current = self
        try:
            os.setpgid(0, 0)
        except OSError:
            pass
        w = self.w
        os.dup2(w.devnull, 0)
        os.dup2(w.outfd, 1)
        os.dup2(w.outfd, 2)
        os.close(w.devnull)
        os.close(w.outfd)
        os.chdir(w.workdir)
        set_rlimit(resource.RLIMIT_CPU, (cpu_s, cpu_s + 1))
        # Counts all processes of the user, so any small value refuses new ones; ignored by the
        # kernel for root (the audit guard refuses fork there).
        set_rlimit(resource.RLIMIT_NPROC, (0, 0))
        signal.pthread_sigmask(signal.SIG_UNBLOCK, CHLD)
        sys.stdin = self.stdin
        sys.addaudithook(w.hook)
        os._exit = self.exit_hook
        try:
            import posix

            posix._exit = self.exit_hook
        except ImportError:
            pass

    def start_program(self):
        """Per-program state: output captures, the soft deadline."""
        sys.stdout = self.stdout
        sys.stderr = self.stderr
        # Soft wall-clock limit for code that emits no trace events (`while True: pass` on one
        # line, time.sleep): the handler writes the partial record. A program that replaces the
        # handler still meets the worker's SIGKILL.
        signal.setitimer(signal.ITIMER_REAL, self.timeout)

    def run_trace(self, start, compiled=None):
        self.recorder = tracer.Recorder(
            max_events=self.max_events,
            repr_cap=self.cfg["repr_cap"],
            on_limit=self.on_limit,
            deadline=start + self.timeout,
        )
        rec = tracer.trace_program(self.code, self.entry_call, recorder=self.recorder,
                                   compiled=compiled)
        self.finish(rec)

    def run_repo(self, start):
        """One repository entry point (repo_tracer.py): the code field is the JSON spec."""
        import json

        import repo_tracer

        spec = json.loads(self.code)
        spec["timeout_s"] = self.timeout
        self.recorder = repo_tracer.RepoRecorder(
            spec["root"],
            max_events=self.max_events,
            repr_cap=self.cfg["repr_cap"],
            on_limit=self.on_limit,
            deadline=start + self.timeout,
        )
        self.finish(repo_tracer.trace_entry(spec, self.entry_call, self.recorder))

    def run_exec(self):
        rec = {"status": "normal"}
        self.record = rec
        try:
            compiled = compile(self.code, "<ndbg-exec>", "exec")
            exec(compiled, {"__name__": "__main__"})
        except BaseException as e:
            rec["status"] = "error"
            rec["error"] = "%s: %s" % (type(e).__name__, tracer.safe_repr_message(e))
        self.finish(rec)

    def on_limit(self, recorder, reason):
        rec = recorder.record
        if rec.get("kind") == "repo":
            import repo_tracer

            repo_tracer.add_blocks(rec)
        rec["status"] = "never"
        rec["limit"] = reason
        rec["error"] = tracer.limit_message(reason, recorder.max_events)
        self.finish(rec)

    def on_alarm(self):
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
            if self.kind == KIND_TRACE:
                rec.update(code=self.code, entry_call=self.entry_call, python=PYTHON, events=[])
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
        """Writes the result line, then exits, or in a session returns to take the next program
        unless a limit was hit. Signals are blocked meanwhile so no handler can interrupt."""
        if self.session:
            signal.setitimer(signal.ITIMER_REAL, 0)
        try:
            mask = signal.pthread_sigmask(signal.SIG_BLOCK, self.all_signals)
        except (OSError, ValueError):
            mask = None
        retire = True
        try:
            out = {"id": self.id}
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
            data = encode_line(out)
            if len(data) > self.cfg["max_result_mb"] << 20:
                data = self.failure_line("result larger than %d MiB" % self.cfg["max_result_mb"])
            else:
                retire = "limit" in out
        except BaseException as e:  # e.g. MemoryError while serializing a huge record
            data = self.failure_line("cannot serialize the result: %s" % type(e).__name__)
        write_all(self.w.resultfd, data)
        if retire or not self.session:
            _real_exit(0)
        self.next_program(mask)

    def next_program(self, mask):
        """Session: fresh per-program state, signals as before."""
        cap = self.cfg["output_cap"]
        self.stdout = Capture(cap)
        self.stderr = Capture(cap)
        del self.blocked[:]
        self.recorder = None
        self.record = None
        if mask is not None:
            signal.pthread_sigmask(signal.SIG_SETMASK, mask)

    def failure_line(self, message):
        out = {"id": self.id, "status": "error", "limit": "output", "error": message,
               "isolation": self.w.isolation}
        if self.kind == KIND_TRACE:
            out.update(code=self.code, entry_call=self.entry_call, python=PYTHON, events=[])
        return encode_line(out)

    def add_output(self, out):
        cap = self.cfg["output_cap"]
        raw = b""
        try:
            if os.lseek(1, 0, os.SEEK_END) > 0:
                raw = os.pread(1, cap, 0)
                if self.session:
                    os.ftruncate(1, 0)
        except OSError:
            pass
        for name, stream, extra in (("stdout", self.stdout, raw), ("stderr", self.stderr, b"")):
            text = stream.getvalue() + extra.decode("utf-8", "replace")
            total = stream.total + len(extra)
            if text:
                out[name] = text[:cap]
            if total > cap:
                out[name + "_truncated"] = total - cap


