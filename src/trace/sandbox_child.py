"""The forked child of the sandbox worker (sandbox.py): sets the limits, runs one program
(traced, or plain `exec`), and writes exactly one result line on its private pipe.

Everything here runs after fork, in the process that also runs user code; the worker never
calls into it except `Child(...).run()` right after fork.
"""

import io
import json
import os
import random
import resource
import signal
import sys
import time

import tracer

_dumps = json.dumps
_real_exit = os._exit  # captured before the child patches os._exit
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


def write_all(fd, data):
    view = memoryview(data)
    while view:
        n = os.write(fd, view)
        view = view[n:]
