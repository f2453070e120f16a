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

`first_look` is a looser rule for a caller that re-checks what it keeps (the miner, whose
calls mostly import modules and define classes, and for which a fork costs more than the
call): imports of the modules the worker imported before forking, class definitions and
attribute stores are let in; what reaches around a program's own namespace (`setattr`,
`__globals__`, `__del__`, the calls that change a standard-library module's state) is not.
Such a program can still leave something behind (`keyword.kwlist.append`), so its trace is
only a first look: the miner keeps a call only when a fresh fork gives the same trace
(src/programs/mine.ts), which is the trace every later stage computes.
"""

import dis
import opcode

_FORBIDDEN_OPS = frozenset(
    opcode.opmap[name]
    for name in ("IMPORT_NAME", "IMPORT_FROM", "IMPORT_STAR", "STORE_ATTR", "DELETE_ATTR",
                 "LOAD_BUILD_CLASS")
    if name in opcode.opmap
)
_IMPORT_NAME = opcode.opmap["IMPORT_NAME"]
_IMPORT_STAR = opcode.opmap["IMPORT_STAR"]

# first_look: dunder names that reach beyond the program's own objects, or run later (__del__
# would run inside another program), and the calls that change a standard-library module's
# state for the programs after this one (warning filters, the decimal context, registries).
_FIRST_LOOK_FORBIDDEN = frozenset([
    "__builtins__", "__globals__", "__import__", "__subclasses__", "__code__", "__closure__",
    "__del__", "__dict__", "__loader__", "__spec__",
    "simplefilter", "filterwarnings", "resetwarnings", "setcontext", "getcontext", "register",
    "register_dialect", "unregister_dialect", "field_size_limit", "add_extension", "purge",
])

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


def first_look(code, admitted):
    """True when `code` may run in a shared process under the looser rule (module notes);
    `admitted`: the top-level modules it may import."""
    stack = [code]
    while stack:
        co = stack.pop()
        for name in co.co_names:
            if name in _FORBIDDEN_NAMES or name in _FIRST_LOOK_FORBIDDEN or name.startswith(_FORBIDDEN_PREFIXES):
                return False
        for ins in dis.get_instructions(co) if not _FORBIDDEN_OPS.isdisjoint(co.co_code[::2]) else ():
            if ins.opcode == _IMPORT_STAR:
                return False
            if ins.opcode == _IMPORT_NAME and ins.argval.split(".")[0] not in admitted:
                return False
        stack.extend(c for c in co.co_consts if type(c) is _CODE)
    return True
