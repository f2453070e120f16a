# Over 300 lines on purpose: the one file the sandbox child imports and that also runs as a script
# for raw tracing; the Recorder and its settrace callbacks are one piece.
"""ndbg tracer: records one program run with sys.settrace (spec ndl.md sections 2-4).

The program's code is executed as the module source
    CODE.rstrip('\n') + '\n\ndef main():\n    return ' + ENTRY_CALL + '\n'
(the forward document's CONTEXT), and `main()` is called with tracing on, so `main` is
depth 0 and line numbers and source lines are those of the CONTEXT. Only frames whose code
comes from that source are recorded; the standard library, builtins and this file are not.

This module is imported by the sandbox runner (one forked child per program) and can also be
run directly for an unsandboxed in-process trace of JSONL records on stdin (used by the
benchmark's raw settrace baseline).
"""

import json
import sys
import time

FILENAME = "<ndbg-program>"
DEFAULT_REPR_CAP = 256
DEFAULT_MAX_EVENTS = 10000

_ADDRESS = None  # compiled on first use: `re` is not imported by the sandbox worker (fork cost)
_RETURN_OPCODES = set()
try:
    # `opcode` rather than `dis`: same table, far fewer modules in the forked worker.
    import opcode as _opcode

    for _name in ("RETURN_VALUE", "RETURN_CONST"):
        if _name in _opcode.opmap:
            _RETURN_OPCODES.add(_opcode.opmap[_name])
    _YIELD_VALUE = _opcode.opmap.get("YIELD_VALUE", -1)
    _RESUME = _opcode.opmap.get("RESUME", -1)
except Exception:  # pragma: no cover - opcode is stdlib
    _YIELD_VALUE = _RESUME = -1

# CO_GENERATOR | CO_COROUTINE | CO_ASYNC_GENERATOR: frames that settrace re-enters ("call") on
# every resume and leaves ("return") on every yield/await.
_SUSPENDABLE = 0x20 | 0x80 | 0x200


def build_context(code, entry_call):
    """The forward CONTEXT: the program plus the `main` wrapper around the entry call."""
    return code.rstrip("\n") + "\n\ndef main():\n    return " + entry_call + "\n"


def safe_repr(value, cap=DEFAULT_REPR_CAP):
    """repr() that never raises, with addresses normalised and long reprs cut in the middle."""
    try:
        text = repr(value)
        if not isinstance(text, str):
            raise TypeError("__repr__ returned non-string")
    except BaseException:  # a hostile __repr__ may raise anything, even SystemExit
        return "<repr failed: %s>" % type(value).__name__
    if " at 0x" in text:
        text = _normalize_addresses(text)
    if len(text) > cap:
        keep = cap - 3
        head = (keep + 1) // 2
        tail = keep // 2
        text = text[:head] + "..." + (text[-tail:] if tail else "")
    return text


def _normalize_addresses(text):
    global _ADDRESS
    if _ADDRESS is None:
        import re

        _ADDRESS = re.compile(r" at 0x[0-9a-fA-F]+")
    return _ADDRESS.sub(" at 0x\u2026", text)


class StepLimit(BaseException):
    """Raised in-process when the event cap is reached (the sandbox exits instead)."""


class Recorder:
    """The settrace callback and the events it collects."""

    # The `file` of the call event being recorded; lines_of sets it in repository traces
    # (repo_tracer.RepoRecorder), function-level call events have none.
    call_file = None

    def __init__(self, max_events=DEFAULT_MAX_EVENTS, repr_cap=DEFAULT_REPR_CAP, on_limit=None,
                 deadline=None, settrace=None):
        self.max_events = max_events
        # How tracing is switched on and off: the sandbox passes a wrapper that lets the call
        # through its audit guard (which refuses sys.settrace from user code).
        self.settrace = settrace or sys.settrace
        self.repr_cap = repr_cap
        # on_limit(recorder, reason) is called when a limit is hit ("steps" or "timeout"); the
        # sandbox writes the partial record there and os._exit()s, which user code cannot catch.
        # Without it (in-process) StepLimit is raised.
        self.on_limit = on_limit
        # time.monotonic() value after which the run is cut off ("timeout"); checked every 16
        # events, so a loop that emits events ends with a partial record before the parent's
        # wall-clock kill (which loses the events). The sandbox also arms SIGALRM for loops
        # that emit no events (`while True: pass` on one line).
        self.deadline = deadline
        self.events = []
        self.limit_hit = False
        self.limit_reason = None
        self.record = None  # the trace record being filled (set by trace_program)
        self._next_invocation = 0
        # frame -> [invocation id, depth, index of the frame's current line event or -1, the
        # source lines its events' src come from]
        self._frames = {}
        self._exception_pending = set()

    def _locals(self, frame):
        cap = self.repr_cap
        return {name: safe_repr(value, cap) for name, value in frame.f_locals.items()}

    def _emit(self, event):
        events = self.events
        events.append(event)
        n = len(events)
        if n >= self.max_events:
            self._limit("steps")
        elif self.deadline is not None and not (n & 15) and time.monotonic() > self.deadline:
            self._limit("timeout")

    def _limit(self, reason):
        self.limit_hit = True
        self.limit_reason = reason
        self.settrace(None)
        if self.on_limit is not None:
            self.on_limit(self, reason)
        raise StepLimit(reason)

    def lines_of(self, code):
        """The source lines of a code object to record (its frames are traced), or None.
        RepoRecorder (repo_tracer.py) records other files."""
        return self.source_lines if code.co_filename == FILENAME else None

    def global_trace(self, frame, event, arg):
        if event != "call":
            return None
        lines = self.lines_of(frame.f_code)
        if lines is None:
            return None
        parent = frame.f_back
        while parent is not None and parent not in self._frames:
            parent = parent.f_back
        depth = 0 if parent is None else self._frames[parent][1] + 1
        invocation = self._next_invocation
        self._next_invocation += 1
        if parent is not None:
            line_index = self._frames[parent][2]
            if line_index >= 0:
                self.events[line_index].setdefault("calls", []).append(invocation)
        self._frames[frame] = [invocation, depth, -1, lines]
        firstline = frame.f_code.co_firstlineno
        record = {
            "event": "call",
            "depth": depth,
            "invocation": invocation,
            "line": firstline,
            "src": lines[firstline - 1] if 0 < firstline <= len(lines) else "",
            "locals": self._locals(frame),
            "value": None,
            "func": frame.f_code.co_name,
        }
        if frame.f_code.co_flags & _SUSPENDABLE and _resumed(frame):
            record["resumed"] = True
        if self.call_file is not None:
            record["file"] = self.call_file
        self._emit(record)
        return self.local_trace

    def local_trace(self, frame, event, arg):
        info = self._frames.get(frame)
        if info is None:
            return None
        invocation, depth, _, lines = info
        lineno = frame.f_lineno
        record = {
            "event": event,
            "depth": depth,
            "invocation": invocation,
            "line": lineno,
            "src": lines[lineno - 1] if 0 < lineno <= len(lines) else "",
            "locals": self._locals(frame),
            "value": None,
            "func": frame.f_code.co_name,
        }
        if event == "line":
            info[2] = len(self.events)
            self._exception_pending.discard(frame)
        elif event == "exception":
            record["value"] = safe_repr(arg[1], self.repr_cap)
            self._exception_pending.add(frame)
        elif event == "return":
            if self._returned_normally(frame):
                record["value"] = safe_repr(arg, self.repr_cap)
                if frame.f_code.co_flags & _SUSPENDABLE and _at_opcode(frame, _YIELD_VALUE):
                    record["yield"] = True
            del self._frames[frame]
            self._exception_pending.discard(frame)
        else:
            return self.local_trace
        self._emit(record)
        return self.local_trace

    def _returned_normally(self, frame):
        return returned_normally(frame, frame in self._exception_pending)


def returned_normally(frame, exception_pending):
    """A 'return' event is also sent when an exception leaves the frame; tell them apart:
    after an 'exception' event with no 'line' since, only a return opcode means a return."""
    if not exception_pending:
        return True
    if not _RETURN_OPCODES:
        return False
    try:
        return frame.f_code.co_code[frame.f_lasti] in _RETURN_OPCODES
    except Exception:
        return False


def _at_opcode(frame, opcode):
    try:
        return frame.f_code.co_code[frame.f_lasti] == opcode
    except Exception:
        return False


def _resumed(frame):
    """A generator/coroutine frame re-entered after a yield/await (RESUME's oparg is 0 only at
    the start of the function)."""
    try:
        code = frame.f_code.co_code
        i = frame.f_lasti
        return i >= 0 and code[i] == _RESUME and code[i + 1] != 0
    except Exception:
        return False


def python_version():
    return "%d.%d.%d" % sys.version_info[:3]


def limit_message(reason, max_events):
    if reason == "timeout":
        return "time limit reached"
    return "step limit of %d events reached" % max_events


def compile_program(code, entry_call):
    """The code object of the CONTEXT (raises SyntaxError like compile)."""
    return compile(build_context(code, entry_call), FILENAME, "exec")


def trace_program(code, entry_call, max_events=DEFAULT_MAX_EVENTS, repr_cap=DEFAULT_REPR_CAP,
                  on_limit=None, namespace=None, deadline=None, recorder=None, compiled=None):
    """Runs CODE's entry call under the tracer and returns the trace record (without id).

    `recorder` may be passed in (the sandbox keeps a handle on it for os._exit and passes its own
    settrace); otherwise one is made from max_events/repr_cap/on_limit/deadline. `compiled` is
    compile_program(code, entry_call) when the caller already has it.
    """
    context = build_context(code, entry_call)
    record = {
        "code": code,
        "entry_call": entry_call,
        "python": python_version(),
        "status": "normal",
        "events": [],
    }
    if recorder is None:
        recorder = Recorder(max_events=max_events, repr_cap=repr_cap, on_limit=on_limit,
                            deadline=deadline)
    recorder.source_lines = context.split("\n")
    recorder.record = record
    record["events"] = recorder.events
    try:
        if compiled is None:
            compiled = compile(context, FILENAME, "exec")
    except SyntaxError as e:
        record["status"] = "error"
        record["error"] = "SyntaxError: %s (line %s)" % (e.msg, e.lineno)
        return record
    globs = namespace if namespace is not None else {"__name__": "__ndbg__"}
    try:
        exec(compiled, globs)
    except BaseException as e:  # module-level code failed: nothing was traced
        record["status"] = "error"
        record["error"] = "%s: %s" % (type(e).__name__, safe_repr_message(e))
        return record
    run_traced(recorder, record, globs.get("main"))
    return record


def run_traced(recorder, record, fn):
    """Calls fn() with recorder's tracing on and sets record's status, limit and error from how
    it ended (also used for repository entry points, repo_tracer.py)."""
    recorder.settrace(recorder.global_trace)
    try:
        fn()
        if sys.gettrace() != recorder.global_trace and not recorder.limit_hit:
            # The program (or an exception inside the trace function) switched tracing off.
            record["status"] = "error"
            record["limit"] = "traceoff"
            record["error"] = "tracing was switched off during the run; the trace is incomplete"
    except BaseException as e:
        if recorder.limit_hit:
            record["status"] = "never"
            record["limit"] = recorder.limit_reason
            record["error"] = limit_message(recorder.limit_reason, recorder.max_events)
        else:
            record["status"] = "error"
            record["error"] = "%s: %s" % (type(e).__name__, safe_repr_message(e))
            if sys.gettrace() != recorder.global_trace:
                # e.g. RecursionError inside the trace function: CPython switched tracing off,
                # so the unwinding events are missing.
                record["limit"] = "traceoff"
    finally:
        recorder.settrace(None)


def safe_repr_message(exc):
    try:
        return str(exc)
    except BaseException:
        return "<str failed>"


def _main():
    """Unsandboxed: JSONL program records on stdin -> JSONL trace records on stdout."""
    import io

    results = sys.stdout
    for line in sys.stdin:
        if not line.strip():
            continue
        prog = json.loads(line)
        entry_call = "%s(%s)" % (prog.get("entry", "f"), prog["input"])
        # The program's prints must not land in the JSONL result stream.
        captured = io.StringIO()
        sys.stdout = captured
        try:
            rec = trace_program(prog["code"], entry_call)
        finally:
            sys.stdout = results
        rec = dict(id=prog["id"], **rec)
        rec["stdout"] = captured.getvalue()[:65536]
        results.write(json.dumps(rec) + "\n")


if __name__ == "__main__":
    _main()
