"""Which programs may run in a sandbox process that has already run other programs.

A program qualifies ("shareable") when its compiled code, module level and every nested
function, can neither change state that outlives it nor observe memory addresses:

- no imports (so no module objects, files, processes, signals, `sys`), no class definitions
  (no instances hashed by address, no `__del__`), no attribute assignment or deletion;
- none of the names that reach around those rules: dunder names other than `__name__`
  (`__builtins__`, `__class__`, `__globals__`, `__import__`, ...), the frame, code, generator
  and traceback attributes (`gi_frame`, `f_globals`, `tb_frame`, `co_consts`, ...), and the
  builtins that read or write arbitrary attributes, run new code, touch files or the terminal,
  or expose addresses (`getattr`, `setattr`, `vars`, `eval`, `exec`, `compile`, `open`, `id`,
  `hash`, `object`, `breakpoint`, `help`, ...).

What such a program can reach is its own namespace, the objects it makes, and immutable
builtins, so its trace does not depend on which programs ran before it in the same process. The
check is conservative by design: a program it rejects is simply run in a fresh fork. It reads
names and opcodes from the code objects (microseconds), not the source.
"""

import opcode

_FORBIDDEN_OPS = frozenset(
    opcode.opmap[name]
    for name in ("IMPORT_NAME", "IMPORT_FROM", "IMPORT_STAR", "STORE_ATTR", "DELETE_ATTR",
                 "LOAD_BUILD_CLASS")
    if name in opcode.opmap
)

_FORBIDDEN_NAMES = frozenset([
    "getattr", "setattr", "delattr", "vars", "eval", "exec", "compile", "open", "input",
    "breakpoint", "help", "id", "hash", "object", "memoryview", "exit", "quit", "mro",
])

# Attribute prefixes of frames, code objects, generators, coroutines and tracebacks.
_FORBIDDEN_PREFIXES = ("f_", "co_", "gi_", "cr_", "ag_", "tb_")

_CODE = type(compile("", "", "exec"))


def shareable(code):
    """True when `code` (a compiled program) qualifies, see the module notes."""
    stack = [code]
    while stack:
        co = stack.pop()
        if not _FORBIDDEN_OPS.isdisjoint(co.co_code[::2]):
            return False
        for name in co.co_names:
            if name in _FORBIDDEN_NAMES or name.startswith(_FORBIDDEN_PREFIXES):
                return False
            if name.startswith("__") and name != "__name__":
                return False
        for const in co.co_consts:
            if type(const) is _CODE:
                stack.append(const)
    return True
