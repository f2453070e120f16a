"""Python-level guards for a sandboxed child: an audit hook (PEP 578) that blocks process
creation, signals to other processes, network, native code loading, rlimit changes and any
filesystem write outside the private working directory.

Audit hooks cannot be removed once added, so user code cannot switch them off. They are the only
protection against fork bombs when the runner is root (the kernel ignores RLIMIT_NPROC for root)
and the only filesystem protection when bubblewrap is not available. They are not a security
boundary against a determined attacker (bubblewrap is the OS-level one); they stop the accidental
and the generated-program kind of damage, which is what ndbg runs.
"""

import os
import sys

# Events refused outright: the operation never starts.
BLOCKED = frozenset(
    [
        "os.fork",
        "os.forkpty",
        "os.exec",
        "os.posix_spawn",
        "os.spawn",
        "os.system",
        "os.startfile",
        "subprocess.Popen",
        "pty.spawn",
        "os.kill",
        "os.killpg",
        "signal.pthread_kill",
        "socket.__new__",
        "socket.connect",
        "socket.bind",
        "socket.sendto",
        "socket.sendmsg",
        "socket.getaddrinfo",
        "urllib.Request",
        "http.client.connect",
        "ftplib.connect",
        "smtplib.connect",
        "webbrowser.open",
        "ctypes.dlopen",
        "ctypes.dlsym",
        "ctypes.cdata",
        "ctypes.call_function",
        "resource.setrlimit",
        "resource.prlimit",
        "os.chroot",
        "os.setuid",
        "os.setgid",
        "sys.setprofile",
        "sys.remote_exec",
        "mmap.__new__",
    ]
)

# Events whose listed arguments are paths that must stay inside the working directory.
PATH_ARGS = {
    "os.remove": (0,),
    "os.rmdir": (0,),
    "os.rename": (0, 1),
    "os.link": (0, 1),
    "os.symlink": (1,),
    "os.truncate": (0,),
    "os.chmod": (0,),
    "os.chown": (0,),
    "os.chflags": (0,),
    "os.lchflags": (0,),
    "os.lchmod": (0,),
    "os.mkdir": (0,),
    "os.mkfifo": (0,),
    "os.mknod": (0,),
    "os.utime": (0,),
    "os.setxattr": (0,),
    "os.removexattr": (0,),
    "shutil.rmtree": (0,),
    "shutil.copyfile": (1,),
    "shutil.copytree": (1,),
    "shutil.move": (0, 1),
    "shutil.make_archive": (0,),
    "shutil.unpack_archive": (1,),
}

# Positions of dir_fd arguments (-1 or None when absent) in those events.
DIR_FD_ARGS = {
    "os.remove": (1,),
    "os.rmdir": (1,),
    "os.rename": (2, 3),
    "os.link": (2, 3),
    "os.symlink": (2,),
    "os.mkdir": (2,),
    "os.chmod": (2,),
    "os.chown": (3,),
    "os.utime": (3,),
}

_WRITE_FLAGS = os.O_WRONLY | os.O_RDWR | os.O_CREAT | os.O_TRUNC | os.O_APPEND

# Writable files outside the working directory that are harmless.
_ALLOWED_FILES = frozenset(["/dev/null"])


class SandboxViolation(PermissionError):
    """Raised into user code for a blocked operation (user code may catch it; it is recorded)."""


def install(workdir, blocked_log):
    """Adds the audit hook (see make_hook)."""
    sys.addaudithook(make_hook(workdir, blocked_log))


def make_hook(workdir, blocked_log):
    """The audit hook. `blocked_log` (a list) receives the name of each blocked event.
    The sandbox worker builds it once and each forked child only adds it (cheaper per program).

    sys.settrace is not refused here: CPython itself raises that audit event when it switches
    tracing off after an exception in the trace function (e.g. RecursionError). The tracer
    instead checks at the end that its trace function is still installed."""
    root = os.path.realpath(workdir)
    prefix = root + os.sep
    realpath = os.path.realpath
    fspath = os.fspath
    blocked = BLOCKED
    path_args = PATH_ARGS

    def inside(path):
        if isinstance(path, int):  # an already-open descriptor
            return True
        try:
            p = fspath(path)
            if isinstance(p, bytes):
                p = p.decode("utf-8", "surrogateescape")
            full = realpath(p)
        except Exception:
            return False
        return full == root or full.startswith(prefix) or full in _ALLOWED_FILES

    def refuse(event, what):
        if len(blocked_log) < 32 and event not in blocked_log:
            blocked_log.append(event)
        raise SandboxViolation("ndbg sandbox: %s blocked (%s)" % (event, what))

    def hook(event, args):
        if event in blocked:
            refuse(event, "not allowed in the sandbox")
        elif event == "open":
            flags = args[2] if len(args) > 2 else 0
            mode = args[1]
            writes = (isinstance(flags, int) and flags > 0 and flags & _WRITE_FLAGS) or (
                isinstance(mode, str) and any(c in mode for c in "wax+")
            )
            if writes and not inside(args[0]):
                refuse(event, "write outside the working directory: %r" % (args[0],))
        elif event in path_args:
            for i in path_args[event]:
                if i < len(args) and not inside(args[i]):
                    refuse(event, "outside the working directory: %r" % (args[i],))
            for i in DIR_FD_ARGS.get(event, ()):
                # a dir_fd-relative path cannot be resolved here: refuse it
                if i < len(args) and isinstance(args[i], int) and args[i] >= 0:
                    refuse(event, "dir_fd-relative paths are not allowed")

    return hook
