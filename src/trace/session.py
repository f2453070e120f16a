"""The worker's side of the shared child (docs/trace.md, "Shared process"); the child's side is
Runner.serve_session in sandbox_child.py."""

import os
import select

_real_exit = os._exit


class Session:
    """The worker's shared child: a fork that runs program after program, as long as each one
    qualifies (purity.shareable) and ends without hitting a limit (Runner.serve_session).

    Forking costs a child some hundreds of copy-on-write page faults, more than tracing a typical
    program takes; a program that can neither leave state behind nor observe addresses gives the
    same trace in a process that has run others, so those share this one. The rest, and every
    `exec` request, get a fresh fork as before."""

    def __init__(self, worker):
        req_r, self.reqfd = os.pipe()
        self.replyfd, reply_w = os.pipe()
        worker.clean_workdir()
        self.pid = os.fork()
        if self.pid == 0:
            runner = worker.runner
            try:
                os.close(self.reqfd)
                os.close(self.replyfd)
                runner.serve_session(req_r, reply_w)
            except BaseException as e:
                runner.escaped(e)
            finally:
                _real_exit(70)
        os.close(req_r)
        os.close(reply_w)
        try:
            os.setpgid(self.pid, self.pid)
        except OSError:
            pass
        self.programs = 0
        self.poller = select.poll()
        self.poller.register(self.replyfd, select.POLLIN)

    def reply(self, limit):
        """b"P", b"I", b"" (the child exited) or None (no answer within `limit` seconds)."""
        if not self.poller.poll(limit * 1000):
            return None
        return os.read(self.replyfd, 1)

    def close_fds(self):
        os.close(self.reqfd)
        os.close(self.replyfd)
