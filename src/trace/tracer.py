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
import re
import sys

FILENAME = "<ndbg-program>"
DEFAULT_REPR_CAP = 256
DEFAULT_MAX_EVENTS = 10000

_ADDRESS = re.compile(r" at 0x[0-9a-fA-F]+")
_RETURN_OPCODES = set()
try:
    import dis as _dis

    for _name in ("RETURN_VALUE", "RETURN_CONST"):
        if _name in _dis.opmap:
            _RETURN_OPCODES.add(_dis.opmap[_name])
except Exception:  # pragma: no cover - dis is stdlib
    pass


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
    text = _ADDRESS.sub(" at 0x\u2026", text)
    if len(text) > cap:
        keep = cap - 3
        head = (keep + 1) // 2
        tail = keep // 2
        text = text[:head] + "..." + (text[-tail:] if tail else "")
    return text


class StepLimit(BaseException):
    """Raised in-process when the event cap is reached (the sandbox exits instead)."""


class Recorder:
    """The settrace callback and the events it collects."""

    def __init__(self, max_events=DEFAULT_MAX_EVENTS, repr_cap=DEFAULT_REPR_CAP, on_limit=None):
        self.max_events = max_events
        self.repr_cap = repr_cap
        self.on_limit = on_limit  # called when the cap is hit; default raises StepLimit
        self.events = []
        self.limit_hit = False
        self._next_invocation = 0
        # frame -> [invocation id, depth, index of the frame's current line event or -1]
        self._frames = {}
        self._exception_pending = set()

    def _locals(self, frame):
        cap = self.repr_cap
        return {name: safe_repr(value, cap) for name, value in frame.f_locals.items()}

    def _emit(self, event):
        self.events.append(event)
        if len(self.events) >= self.max_events:
            self.limit_hit = True
            sys.settrace(None)
            if self.on_limit is not None:
                self.on_limit(self)
            raise StepLimit()

    def global_trace(self, frame, event, arg):
        if event != "call" or frame.f_code.co_filename != FILENAME:
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
        self._frames[frame] = [invocation, depth, -1]
        self._emit(
            {
                "event": "call",
                "depth": depth,
                "invocation": invocation,
                "line": frame.f_code.co_firstlineno,
                "src": self._src(frame.f_code.co_firstlineno),
                "locals": self._locals(frame),
                "value": None,
                "func": frame.f_code.co_name,
            }
        )
        return self.local_trace

    def local_trace(self, frame, event, arg):
        info = self._frames.get(frame)
        if info is None:
            return None
        invocation, depth, _ = info
        lineno = frame.f_lineno
        record = {
            "event": event,
            "depth": depth,
            "invocation": invocation,
            "line": lineno,
            "src": self._src(lineno),
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
            del self._frames[frame]
            self._exception_pending.discard(frame)
        else:
            return self.local_trace
        self._emit(record)
        return self.local_trace

    def _returned_normally(self, frame):
        """A 'return' event is also sent when an exception leaves the frame; tell them apart."""
        if frame not in self._exception_pending:
            return True
        if not _RETURN_OPCODES:
            return False
        try:
            return frame.f_code.co_code[frame.f_lasti] in _RETURN_OPCODES
        except Exception:
            return False

    def _src(self, lineno):
        lines = self.source_lines
        return lines[lineno - 1] if 0 < lineno <= len(lines) else ""


def python_version():
    return "%d.%d.%d" % sys.version_info[:3]


def trace_program(code, entry_call, max_events=DEFAULT_MAX_EVENTS, repr_cap=DEFAULT_REPR_CAP,
                  on_limit=None, namespace=None):
    """Runs CODE's entry call under the tracer and returns the trace record (without id)."""
    context = build_context(code, entry_call)
    record = {
        "code": code,
        "entry_call": entry_call,
        "python": python_version(),
        "status": "normal",
        "events": [],
    }
    recorder = Recorder(max_events=max_events, repr_cap=repr_cap, on_limit=on_limit)
    recorder.source_lines = context.split("\n")
    record["events"] = recorder.events
    try:
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
    main = globs.get("main")
    sys.settrace(recorder.global_trace)
    try:
        main()
    except StepLimit:
        record["status"] = "never"
        record["limit"] = "steps"
        record["error"] = "step limit of %d events reached" % max_events
    except BaseException as e:
        if recorder.limit_hit:
            record["status"] = "never"
            record["limit"] = "steps"
            record["error"] = "step limit of %d events reached" % max_events
        else:
            record["status"] = "error"
            record["error"] = "%s: %s" % (type(e).__name__, safe_repr_message(e))
    finally:
        sys.settrace(None)
    return record


def safe_repr_message(exc):
    try:
        return str(exc)
    except BaseException:
        return "<str failed>"


def _main():
    """Unsandboxed: JSONL program records on stdin -> JSONL trace records on stdout."""
    for line in sys.stdin:
        if not line.strip():
            continue
        prog = json.loads(line)
        entry_call = "%s(%s)" % (prog.get("entry", "f"), prog["input"])
        rec = trace_program(prog["code"], entry_call)
        rec = dict(id=prog["id"], **rec)
        sys.stdout.write(json.dumps(rec) + "\n")


if __name__ == "__main__":
    _main()
