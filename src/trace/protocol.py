"""The sandbox's wire format: pool.ts <-> sandbox worker (sandbox.py) <-> its children.

Each request on the worker's stdin is a 24-byte header of six little-endian uint32: kind (`t`
trace, `x` exec, `r` repository entry, `s` CPU statistics, as a character code), wall-clock limit in ms, event cap (0:
the configured one), and the UTF-8 byte lengths of the id, the code and the entry call, which
follow as raw bytes (the shared child reads the same frames from its request pipe). The answer on stdout is what the child
wrote there, one JSON result line, followed by the worker's trailer line: `\n\x1e{}\n` when the
child exited normally after writing its result, or `\n\x1e{"status", "limit", "error"}\n` when it
did not (killed, crashed, timed out), in which case the pool builds the record from its own copy
of the request and ignores any partial line.

The worker writes only trailers; a child writes its own result line (encode_line).
"""

import json
import json.encoder
import os
import signal

_dumps = json.dumps

# The request header: six little-endian uint32 fields, read in place through a memoryview (no
# parsing, no allocation in the worker).
HEADER_FIELDS = ("kind", "timeout_ms", "max_events", "id_len", "code_len", "call_len")
HEADER_BYTES = 4 * len(HEADER_FIELDS)
KIND, TIMEOUT_MS, MAX_EVENTS, ID_LEN, CODE_LEN, CALL_LEN = range(len(HEADER_FIELDS))
KIND_TRACE = 0x74  # "t"
KIND_EXEC = 0x78  # "x"
# "r": one repository entry point (repo_tracer.py); the code field holds the JSON spec of the
# repository ({"root", "path", ...}) and the call field the entry point.
KIND_REPO = 0x72
KIND_STATS = 0x73  # "s"
OK_TRAILER = b"\n\x1e{}\n"


def failure_trailer(status, limit, message):
    return b"\n\x1e" + (_dumps({"status": status, "limit": limit, "error": message}) + "\n").encode()


def exit_trailer(status, timeout):
    """The trailer for a child's exit status (None: killed at the wall-clock limit)."""
    if status is None:
        return failure_trailer("never", "timeout", "wall-clock limit of %gs exceeded (killed)" % timeout)
    if status == 0:
        return OK_TRAILER
    if os.WIFSIGNALED(status):
        sig = os.WTERMSIG(status)
        name = signal_name(sig)
        if sig == signal.SIGXCPU or sig == signal.SIGKILL:
            # SIGKILL at the hard CPU rlimit (the worker itself did not kill this child)
            return failure_trailer("never", "cpu", "CPU time limit exceeded (%s)" % name)
        return failure_trailer("error", "crash", "killed by %s" % name)
    return failure_trailer("error", "exit", "the process exited with code %d without a result"
                           % os.WEXITSTATUS(status))


def signal_name(sig):
    try:
        return signal.Signals(sig).name
    except ValueError:
        return "signal %d" % sig


def _not_serializable(o):
    raise TypeError("Object of type %s is not JSON serializable" % type(o).__name__)


# json.dumps's own C encoder, made once: json.dumps builds one per call through two Python
# layers, and every page those touch is a copy-on-write fault in a forked child. Same bytes.
_c_encoder = json.encoder.c_make_encoder and json.encoder.c_make_encoder(
    {}, _not_serializable, json.encoder.encode_basestring_ascii, None, ": ", ", ", False, False, True)


def encode_line(obj):
    """json.dumps(obj) + "\n" as bytes."""
    if _c_encoder is None:  # pragma: no cover - CPython always has the accelerator
        return (_dumps(obj) + "\n").encode()
    return ("".join(_c_encoder(obj, 0)) + "\n").encode()


def read_into(fd, view):
    """Fills `view` from fd; False at end of input."""
    got = 0
    size = len(view)
    while got < size:
        n = os.readv(fd, [view[got:]])
        if n == 0:
            return False
        got += n
    return True


def write_all(fd, data):
    view = memoryview(data)
    while view:
        n = os.write(fd, view)
        view = view[n:]
