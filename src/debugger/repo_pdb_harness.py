"""ndbg pdb harness for repository-level trajectories: real pdb driven into one invocation.

A repository-level document starts at one invocation of a repository trace (src/ndl/
repo_scope.ts). To check its forward actions against pdb, each script reruns the trace's entry
point (repo_tracer.prepare_entry, the same preparation as the sandboxed run) under the same
RepoRecorder, which numbers invocations exactly as the trace did; at the call event of the
chosen invocation it hands over to pdb, which stops there (the document's first frame). From
then on the commands of the script drive pdb; a stop is described like pdb_harness.py does,
with depth counted from the entry (1) over repository frames, and ordinals counted over the
scope's events (always counting mode: the entry's call is ordinal 0).

EXIT: the scope ends when the entry invocation's return event has been handled -- whatever
the next command, the next stop would be outside the trajectory, so the run ends there with
exit kind "normal" (it returned) or "error" (an exception left it). `continue` without
breakpoints keeps pdb's trace function (bdb would drop it) so that this end is seen.

Jobs (JSONL on stdin), results as in pdb_harness.py:
    {"id", "root", "path": [...], "entry": "unittest:...", "invocation": N, "repr_cap": 256,
     "seed": 0, "timeout": 10, "scripts": [[...], ...]}

The repository's code runs here unsandboxed, like the function-level harness: use it on code
you trust (the fixture, the standard library); traces of untrusted code come from the sandbox.
"""

import atexit
import os
import pdb
import shutil
import sys
import tempfile

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "trace"))
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import pdb_harness  # noqa: E402
import repo_tracer  # noqa: E402
import tracer  # noqa: E402
from pdb_harness import COUNTED_EVENTS, ScriptedPdb  # noqa: E402


# The scripts' working directory (one per harness process, removed when it exits; the forked
# children leave through os._exit, which skips atexit).
SCRATCH = tempfile.mkdtemp(prefix="ndbg-pdb-")
atexit.register(shutil.rmtree, SCRATCH, True)


class ScopedPdb(ScriptedPdb):
    """ScriptedPdb that stops only inside the entry invocation (and what it calls)."""

    def __init__(self, commands, result_fd, recorder, repr_cap):
        super().__init__(commands, result_fd, count=True)
        self.recorder = recorder
        self.repr_cap = repr_cap
        self.target = None
        self.exception_pending = False

    def is_skipped_module(self, module_name):
        return False  # scope, not module, decides (stop_here)

    def in_repo(self, frame):
        return self.recorder.lines_of(frame.f_code) is not None

    def in_scope(self, frame):
        target = self.target
        while frame is not None:
            if frame is target:
                return True
            frame = frame.f_back
        return False

    def stop_here(self, frame):
        return self.in_scope(frame) and self.in_repo(frame) and pdb.Pdb.stop_here(self, frame)

    def break_here(self, frame):
        return self.in_scope(frame) and pdb.Pdb.break_here(self, frame)

    def start_at(self, frame):
        """Called at the entry invocation's call event: pdb takes over and stops there."""
        self.reset()
        self.target = frame
        self.botframe = frame.f_back
        self._set_stopinfo(None, None)  # `step`: stop at the next event, this call
        sys.settrace(self.trace_dispatch)
        return self.trace_dispatch(frame, "call", None)

    def trace_dispatch(self, frame, event, arg):
        scoped = self.in_scope(frame) and self.in_repo(frame)
        if scoped and event in COUNTED_EVENTS:
            self.ordinal += 1
            frame.f_locals  # the tracer reads the locals at every event (see pdb_harness.py)
        if frame is self.target:
            if event == "exception":
                self.exception_pending = True
            elif event == "line":
                self.exception_pending = False
        result = pdb.Pdb.trace_dispatch(self, frame, event, arg)
        if frame is self.target and event == "return":
            normal = tracer.returned_normally(frame, self.exception_pending)
            self._finish({"event": "exit", "kind": "normal" if normal else "error"})
        if scoped and not self.quitting:
            return self.trace_dispatch
        return result

    def set_continue(self):
        self._set_stopinfo(self.botframe, None, -1)  # and keep tracing: see the file comment

    def _depth(self, frame):
        """Repository frames from this one up to the entry invocation's (= 1)."""
        depth = 0
        f = frame
        while f is not None:
            if self.in_repo(f):
                depth += 1
            if f is self.target:
                break
            f = f.f_back
        return depth


class HandoffRecorder(repo_tracer.RepoRecorder):
    """Records like the sandbox's recorder until the entry invocation starts, then hands over."""

    def __init__(self, root, target, repr_cap):
        super().__init__(root, max_events=1 << 62, repr_cap=repr_cap)
        self.target = target
        self.debugger = None

    def global_trace(self, frame, event, arg):
        result = repo_tracer.RepoRecorder.global_trace(self, frame, event, arg)
        if result is not None and self._next_invocation - 1 == self.target:
            return self.debugger.start_at(frame)
        return result


def repo_child(job, commands, result_fd):
    devnull = os.open(os.devnull, os.O_RDWR)
    for fd in (0, 1, 2):
        os.dup2(devnull, fd)
    pdb_harness.reset_breakpoints()
    os.chdir(SCRATCH)  # like the sandbox's scratch dir
    import random

    random.seed(job.get("seed", 0))
    spec = {"root": job["root"], "path": job.get("path") or []}
    cap = job.get("repr_cap", tracer.DEFAULT_REPR_CAP)
    recorder = HandoffRecorder(job["root"], job["invocation"], cap)
    debugger = ScopedPdb(commands, result_fd, recorder, cap)
    recorder.debugger = debugger
    try:
        repo_tracer.setup_path(spec)
        run, _ = repo_tracer.prepare_entry(spec, job["entry"])
    except BaseException as e:
        debugger._finish(None, failure="entry: %s" % e)
    sys.settrace(recorder.global_trace)
    try:
        run()
    except BaseException:
        pass
    sys.settrace(None)
    debugger._finish(None, failure="invocation %d was not reached (%d calls)"
                     % (job["invocation"], recorder._next_invocation))


if __name__ == "__main__":
    pdb_harness.main(repo_child)
