"""ndbg pdb differential harness: drives real pdb (stdlib bdb/pdb) with scripted commands.

Ground truth for the oracle in src/debugger (spec ndl.md section 6). For each program it runs
every action script in a fresh forked child (so breakpoints, which bdb keeps class-global, and
any state the program mutates never leak between runs, and a run that never ends is killed),
and records where pdb stops: event, line, depth and locals, normalised exactly like the
tracer (its safe_repr is imported from src/trace/tracer.py).

Input: JSONL jobs on stdin, one per program:
    {"id": ..., "code": ..., "entry_call": "f(3)",
     "limit": null | K,          # the trace's event count when it was cut off (status never)
     "count": false,             # also count every program event (forced tracing), see below
     "timeout": 10,              # seconds per script
     "scripts": [["step", "next", "tbreak 7", "continue", "return"], ...]}
Output: one JSONL result per job, in order:
    {"id": ..., "python": "3.11.7", "runs": [{"stops": [STOP, ...], "errors": [...], "failure": null | "timeout" | ...}]}
where STOP is {"event", "line", "depth", "locals", "value", "gen", "gen_rule", "ordinal"} for
each pdb stop (the first is the stop at main's call), and the run's last entry is
{"event": "exit", "kind", "gen_rule"} when the program left pdb's control: "normal" (main
returned), "error" (an exception escaped main) or "never" (the run went past the trace's event
limit). `gen_rule` says whether generator frames decided where this stop came (see
_generator_rule): "stopframe", "send_end", "close" or null.

How pdb is set up, and why:
- The program is compiled as the tracer's CONTEXT (code + `main` wrapper) under the tracer's
  file name, and that text is put into linecache so that `tbreak N` can check the line.
- `skip` is every module except the program's (`__ndbg__`), the documented pdb option for
  ignoring library frames; the trace only holds program frames. The bottom frame that calls
  `main` lives in this module, so it is skipped as well: `step` at main's return leaves pdb's
  control (EXIT) instead of walking into harness code.
- The run starts with `runcall` on that bottom frame: bdb never stops at the first call it
  sees, so the first stop is main's call, as in the trace.
- pdb writes `__return__`/`__exception__` into the frame's locals dict when it stops at a
  return/exception; those two names are pdb's, not the program's, and are left out.
- Counting mode (`count`, always on when `limit` is set) keeps bdb's trace function on every
  program frame so that each event gets its ordinal in the trace (the index of the node);
  bdb itself only stops where it would without it, because a frame that bdb declines to trace
  cannot be stopped in while it is alive. Needed to stop a truncated run at the trace's limit.
  It also reads f_locals at every program event, as the tracer does: in 3.11 the order of the
  f_locals dict depends on when it was last refreshed (a variable bound between two reads is
  appended in co_varnames order, one deleted and re-bound moves to the end), so only with the
  same reads can the order be compared; outside counting mode locals compare as a mapping.
"""

import bdb
import json
import linecache
import os
import pdb
import select
import signal
import sys

try:  # Pdb() imports readline; doing it once here keeps it out of every forked child
    import readline  # noqa: F401
except ImportError:  # pragma: no cover
    pass

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "trace"))
from tracer import DEFAULT_REPR_CAP, FILENAME, build_context, python_version, safe_repr  # noqa: E402

PROGRAM_MODULE = "__ndbg__"
COUNTED_EVENTS = ("call", "line", "return", "exception")
PDB_ARTEFACTS = ("__return__", "__exception__")
GENERATOR_FLAGS = bdb.GENERATOR_AND_COROUTINE_FLAGS


class _NullOut:
    def write(self, text):
        return len(text)

    def flush(self):
        pass


class _ScriptInput:
    """pdb's stdin: the script's commands, one per readline; the end of the script ends the run."""

    def __init__(self, commands, on_end):
        self.commands = list(commands)
        self.on_end = on_end

    def readline(self):
        if not self.commands:
            self.on_end()  # does not return
        return self.commands.pop(0) + "\n"


class ScriptedPdb(pdb.Pdb):
    def __init__(self, commands, result_fd, limit=None, count=False):
        super().__init__(stdin=_ScriptInput(commands, self._end_of_script), stdout=_NullOut(),
                         skip=[PROGRAM_MODULE], nosigint=True, readrc=False)
        self.result_fd = result_fd
        self.limit = limit
        self.count = count or limit is not None
        self.ordinal = -1
        self.repr_cap = DEFAULT_REPR_CAP
        self.stops = []
        self.errors = []
        self._event = None
        self._arg = None
        self._passed_send_end = False
        # id(frame) -> code of the generator frames into which GeneratorExit was thrown (their
        # close), until they return; ids, because a reference would keep the frame alive.
        self._closing = {}

    # -- where pdb stops -------------------------------------------------------------------
    def is_skipped_module(self, module_name):
        return module_name != PROGRAM_MODULE

    def user_call(self, frame, argument_list):
        self._event, self._arg = "call", None
        super().user_call(frame, argument_list)

    def user_line(self, frame):
        self._event, self._arg = "line", None
        super().user_line(frame)

    def user_return(self, frame, return_value):
        self._event, self._arg = "return", return_value
        super().user_return(frame, return_value)

    def user_exception(self, frame, exc_info):
        self._event, self._arg = "exception", exc_info[1]
        super().user_exception(frame, exc_info)

    def dispatch_exception(self, frame, arg):
        generator = frame.f_code.co_flags & GENERATOR_FLAGS
        if generator and arg[0] is GeneratorExit:
            self._closing[id(frame)] = frame.f_code
        # bdb never stops at the StopIteration without traceback by which a `yield from` /
        # `await` subiterator hands back its return value (bdb.dispatch_exception), although
        # it would stop at this frame's events; the trace records the event.
        if generator and arg[0] is StopIteration and arg[2] is None and self.stop_here(frame):
            self._passed_send_end = True
        return super().dispatch_exception(frame, arg)

    def dispatch_return(self, frame, arg):
        try:
            return super().dispatch_return(frame, arg)
        finally:
            self._closing.pop(id(frame), None)

    def _in_close(self, frame):
        """Whether `frame` runs inside a generator's close (it is, or was called from, a
        generator frame into which GeneratorExit was thrown)."""
        while frame is not None:
            if self._closing.get(id(frame)) is frame.f_code:
                return True
            frame = frame.f_back
        return False

    def _generator_rule(self, frame=None):
        """Whether generator frames decided the stop being made now (in `frame`; None: exit).

        "stopframe": bdb's stop frame is a generator/coroutine frame (after `next` or `return`
        in one, or `return` at the return of a frame called from one). Every generator case in
        bdb's stepping is conditional on that: the frame's call and return events (its
        resumptions and yields) are ignored, `return` never stops in it again, and a
        StopIteration or GeneratorExit in another frame stops. "send_end": since the last stop
        bdb passed over the StopIteration of a `yield from`/`await` end (dispatch_exception
        above). "close": the stop is inside a generator's close, whose timing depends on who
        holds the generator (the tracer's and pdb's reads of f_locals keep references; see
        docs/debugger.md). Otherwise None: bdb did what it does for plain frames.
        """
        stopframe = getattr(self, "stopframe", None)  # unset before runcall's reset()
        if stopframe is not None and stopframe.f_code.co_flags & GENERATOR_FLAGS:
            return "stopframe"
        if self._passed_send_end:
            return "send_end"
        return "close" if frame is not None and self._in_close(frame) else None

    def interaction(self, frame, traceback):
        self.stops.append(self._describe(frame))
        self._passed_send_end = False
        super().interaction(frame, traceback)

    def error(self, msg):
        self.errors.append(str(msg))

    def _depth(self, frame):
        """Program frames on the stack below this one (main = 0)."""
        depth = -1
        f = frame
        while f is not None:
            if f.f_code.co_filename == FILENAME:
                depth += 1
            f = f.f_back
        return depth

    def _describe(self, frame):
        cap = self.repr_cap
        local_vars = {name: safe_repr(value, cap) for name, value in frame.f_locals.items()
                      if name not in PDB_ARTEFACTS}
        value = None
        if self._event in ("return", "exception"):
            value = safe_repr(self._arg, cap)
        return {
            "event": self._event,
            "line": frame.f_lineno,
            "firstline": frame.f_code.co_firstlineno,
            "depth": self._depth(frame),
            "locals": local_vars,
            "value": value,
            "gen": bool(frame.f_code.co_flags & GENERATOR_FLAGS),
            "gen_rule": self._generator_rule(frame),
            "ordinal": self.ordinal if self.count else None,
        }

    # -- counting mode and the trace's event limit -----------------------------------------
    def trace_dispatch(self, frame, event, arg):
        program = frame.f_code.co_filename == FILENAME
        if self.count and program and event in COUNTED_EVENTS:
            self.ordinal += 1
            # Reading f_locals refreshes the frame's locals snapshot, whose key order (3.11)
            # depends on when it was last refreshed; the tracer reads it at every event.
            frame.f_locals
            if self.limit is not None and self.ordinal >= self.limit:
                self._finish({"event": "exit", "kind": "never"})
        result = super().trace_dispatch(frame, event, arg)
        if self.count and program and not self.quitting:
            return self.trace_dispatch
        return result

    def set_continue(self):
        # Without breakpoints pdb drops its trace function and lets the program run to its
        # end; past the limit of a truncated run that end is the trace's `never` exit.
        if self.limit is not None and not self.breaks:
            self._finish({"event": "exit", "kind": "never"})
        super().set_continue()

    # -- ending a run ----------------------------------------------------------------------
    def _end_of_script(self):
        self._finish(None)

    def _finish(self, exit_stop, failure=None):
        sys.settrace(None)
        if exit_stop:
            exit_stop = dict(exit_stop, gen_rule=self._generator_rule())
        stops = self.stops + ([exit_stop] if exit_stop else [])
        payload = json.dumps({"stops": stops, "errors": self.errors, "failure": failure})
        _write_all(self.result_fd, payload.encode("utf-8"))
        os._exit(0)


def _write_all(fd, data):
    while data:
        n = os.write(fd, data)
        data = data[n:]


def _install_source(context):
    lines = [line + "\n" for line in context.split("\n")]
    linecache.cache[FILENAME] = (len(context), None, lines, FILENAME)


def _child(job, commands, result_fd):
    """Runs one script under pdb in this (forked) process and exits."""
    devnull = os.open(os.devnull, os.O_RDWR)
    for fd in (0, 1, 2):
        os.dup2(devnull, fd)
    reset_breakpoints()
    context = build_context(job["code"], job["entry_call"])
    _install_source(context)
    debugger = ScriptedPdb(commands, result_fd, limit=job.get("limit"), count=bool(job.get("count")))
    try:
        compiled = compile(context, FILENAME, "exec")
        namespace = {"__name__": PROGRAM_MODULE}
        exec(compiled, namespace)
        program_main = namespace["main"]
    except BaseException as e:  # the tracer records such a run with no events
        debugger._finish({"event": "exit", "kind": "error"}, failure="module: %s" % type(e).__name__)
    kind = "normal"
    try:
        debugger.runcall(lambda: program_main())
    except BaseException:
        kind = "error"
    debugger._finish({"event": "exit", "kind": kind})


def reset_breakpoints():
    """Breakpoints are class-global in bdb: a forked child starts from none."""
    bdb.Breakpoint.next = 1
    bdb.Breakpoint.bplist = {}
    bdb.Breakpoint.bpbynumber = [None]


def run_script(job, commands, timeout, child=None):
    """Runs `child(job, commands, result_fd)` (default: the function-level _child) in a fork
    and returns what it wrote, or a failure after `timeout` seconds."""
    child = child or _child
    read_fd, write_fd = os.pipe()
    pid = os.fork()
    if pid == 0:
        os.close(read_fd)
        try:
            child(job, commands, write_fd)
        finally:
            os._exit(3)
    os.close(write_fd)
    chunks = []
    failure = None
    deadline = _now() + timeout
    while True:
        left = deadline - _now()
        if left <= 0:
            failure = "timeout"
            os.kill(pid, signal.SIGKILL)
            break
        ready, _, _ = select.select([read_fd], [], [], left)
        if not ready:
            continue
        chunk = os.read(read_fd, 1 << 16)
        if not chunk:
            break
        chunks.append(chunk)
    os.close(read_fd)
    _, status = os.waitpid(pid, 0)
    if failure is None and not chunks:
        failure = "child died (status %d)" % status
    if failure is not None:
        return {"stops": [], "errors": [], "failure": failure}
    return json.loads(b"".join(chunks).decode("utf-8"))


def _now():
    import time

    return time.monotonic()


def main(child=None):
    """JSONL jobs on stdin -> results on stdout; `child` runs one script (default _child)."""
    for line in sys.stdin:
        if not line.strip():
            continue
        job = json.loads(line)
        timeout = float(job.get("timeout") or 10)
        runs = [run_script(job, script, timeout, child) for script in job["scripts"]]
        sys.stdout.write(json.dumps({"id": job["id"], "python": python_version(), "runs": runs}) + "\n")
        sys.stdout.flush()


if __name__ == "__main__":
    main()
