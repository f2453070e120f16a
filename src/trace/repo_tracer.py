"""Repository-level tracing (docs/trace.md, "Repository traces"): runs one entry point of a
repository -- a unittest test, a doctest, a pytest node or a `module:expression` call -- with
the tracer on, recording only frames whose code lives under the repository root.

The sandbox child (sandbox_child.Runner.run_repo) calls trace_entry; the repository pdb harness
(src/debugger/repo_pdb_harness.py) calls prepare_entry and RepoRecorder the same way, so both
number invocations identically and pdb can be driven into the invocation a trajectory starts at.

Entry points (strings, one per traced run):
    call:MODULE:EXPR        import MODULE, evaluate EXPR in its namespace
    unittest:TEST_ID        unittest.TestLoader().loadTestsFromName(TEST_ID), run
    doctest:NAME            the doctest NAME (DocTestFinder name, e.g. `fractions.Fraction`) of
                            the module that is NAME's longest importable prefix
    doctest:MODULE:NAME     the doctest NAME of MODULE (for a module that names itself otherwise)
    pytest:NODE_ID          pytest.main([NODE_ID, ...]) (needs pytest importable)
    discover                list the entry points (unittest tests, doctests) -> "entries"

Everything the entry needs is imported *before* tracing starts (test modules, doctest finder),
so module bodies are not part of the trace; module and class bodies are never recorded either.
"""

import ast
import io
import os
import sys
import tokenize

import tracer

ENTRY_KINDS = ("call", "unittest", "doctest", "pytest")

# Set on the code of functions, lambdas and comprehensions; not on module and class bodies,
# which run at import (pytest imports test modules while tracing) and are not debugger frames.
CO_OPTIMIZED = 0x1

LIBRARY_DIRS = frozenset(["site-packages", "dist-packages"])


class RepoRecorder(tracer.Recorder):
    """A Recorder for every function frame whose file is under `root`. Call
    events carry `file` (the path relative to root, '/'-separated); `files` collects the source
    of each file that had events."""

    def __init__(self, root, **kwargs):
        super().__init__(**kwargs)
        self.root = os.path.realpath(root)
        self._prefix = self.root + os.sep
        self._by_filename = {}  # co_filename -> (relative path, lines) or None
        self.files = {}  # relative path -> source text

    def relative(self, filename):
        """The repository-relative path of a code object's file, or None when outside."""
        hit = self._by_filename.get(filename)
        if hit is None and filename not in self._by_filename:
            hit = self._load(filename)
        return hit[0] if hit else None

    def _load(self, filename):
        full = os.path.realpath(filename) if filename and not filename.startswith("<") else ""
        hit = None
        if full == self.root or full.startswith(self._prefix):
            rel = os.path.relpath(full, self.root).replace(os.sep, "/")
            # A virtual environment inside the checkout is library code, not the repository's.
            library = bool(set(rel.split("/")[:-1]) & LIBRARY_DIRS)
            text = None if library else read_source(full)
            if text is not None:
                if rel == ".":  # the root is one file (e.g. a stdlib module)
                    rel = os.path.basename(full)
                hit = (rel, text.split("\n"), text)
        self._by_filename[filename] = hit
        return hit

    def lines_of(self, code):
        if not code.co_flags & CO_OPTIMIZED:  # a module or class body, not a function's frame
            return None
        filename = code.co_filename
        hit = self._by_filename.get(filename)
        if hit is None:
            if filename in self._by_filename:
                return None
            hit = self._load(filename)
            if hit is None:
                return None
        rel = hit[0]
        if rel not in self.files:
            self.files[rel] = hit[2]
        self.call_file = rel
        return hit[1]


def read_source(path):
    """A file's text as Python reads it (coding cookie, universal newlines), or None."""
    try:
        with tokenize.open(path) as f:
            return f.read()
    except (OSError, SyntaxError, UnicodeDecodeError):
        return None


def function_blocks(text):
    """The def blocks of a file for the NDL context (docs/ndl.md, "Repository documents"):
    [start (first decorator line), def line, end line, [class header lines, outermost first]]
    for every function at any nesting. None when the file does not parse."""
    try:
        tree = ast.parse(text)
    except (SyntaxError, ValueError, RecursionError):
        return None
    out = []

    def visit(node, classes):
        for child in ast.iter_child_nodes(node):
            if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef)):
                start = min([child.lineno] + [d.lineno for d in child.decorator_list])
                out.append([start, child.lineno, child.end_lineno, list(classes)])
                visit(child, classes)
            elif isinstance(child, ast.ClassDef):
                visit(child, classes + [child.lineno])
            else:
                visit(child, classes)

    visit(tree, [])
    out.sort()
    return out


# ---- entry points --------------------------------------------------------------------------

class EntryError(Exception):
    """The entry point cannot be prepared (bad name, import failed): nothing was traced."""


def setup_path(spec):
    """sys.path for the repository: spec["path"] (absolute dirs) first, in order."""
    for p in reversed(spec.get("path") or []):
        if p not in sys.path:
            sys.path.insert(0, p)
    sys.dont_write_bytecode = True  # the repository is read-only; never try to write .pyc


def prepare_entry(spec, entry):
    """Imports what `entry` needs and returns (run, outcome): `run()` executes the entry (this
    is what is traced) and `outcome()` then says how it went ("passed", "failed: ...")."""
    kind, _, rest = entry.partition(":")
    if kind not in ENTRY_KINDS or not rest:
        raise EntryError("entry %r: expected one of %s followed by ':'" % (entry, ", ".join(ENTRY_KINDS)))
    return globals()["_prepare_" + kind](rest, spec)


def _import(name):
    import importlib

    try:
        return importlib.import_module(name)
    except BaseException as e:
        raise EntryError("import %s failed: %s: %s" % (name, type(e).__name__, tracer.safe_repr_message(e)))


def _prepare_call(rest, spec):
    module_name, sep, expr = rest.partition(":")
    if not sep or not expr:
        raise EntryError("call entry needs MODULE:EXPR, got %r" % rest)
    module = _import(module_name)
    try:
        code = compile(expr, "<ndbg-entry>", "eval")
    except SyntaxError as e:
        raise EntryError("call entry %r: SyntaxError: %s" % (expr, e.msg))
    box = {}

    def run():
        box["value"] = eval(code, vars(module))

    return run, lambda: "returned %s" % tracer.safe_repr(box.get("value"), 80)


def _prepare_unittest(rest, spec):
    import unittest

    try:
        suite = unittest.TestLoader().loadTestsFromName(rest)
    except BaseException as e:
        raise EntryError("unittest %s: %s: %s" % (rest, type(e).__name__, tracer.safe_repr_message(e)))
    # A name that does not resolve comes back as a test that fails with the lookup's error.
    failed = [t for t in _flatten(suite) if type(t).__name__ == "_FailedTest"]
    if failed:
        raise EntryError("unittest %s: %s" % (rest, tracer.safe_repr_message(failed[0]._exception)))
    result = unittest.TestResult()

    def outcome():
        bad = [(t.id(), "error") for t, _ in result.errors] + [(t.id(), "failure") for t, _ in result.failures]
        return "passed %d of %d" % (result.testsRun - len(bad), result.testsRun) + "".join(
            "; %s: %s" % b for b in bad)

    return (lambda: suite.run(result)), outcome


def _doctest_module(name):
    parts = name.split(".")
    for k in range(len(parts), 0, -1):
        try:
            return _import(".".join(parts[:k]))
        except EntryError:
            if k == 1:
                raise
    raise EntryError("doctest %s: no importable module" % name)


def _prepare_doctest(rest, spec):
    import doctest

    if ":" in rest:  # MODULE:NAME, for a module whose doctests carry another name
        module_name, _, rest = rest.partition(":")
        module = _import(module_name)
    else:
        module = _doctest_module(rest)
    tests = [t for t in doctest.DocTestFinder().find(module) if t.name == rest and t.examples]
    if not tests:
        raise EntryError("doctest %s: no such doctest with examples in %s" % (rest, module.__name__))
    runner = doctest.DocTestRunner(verbose=False, optionflags=doctest.ELLIPSIS)
    out = io.StringIO()

    def run():
        runner.run(tests[0], out=out.write, clear_globs=True)

    def outcome():
        r = runner.summarize(verbose=False)
        return "passed %d of %d examples" % (r.attempted - r.failed, r.attempted)

    return run, outcome


def _prepare_pytest(rest, spec):
    try:
        import pytest
    except BaseException:
        raise EntryError("pytest entry %s: pytest is not importable (add its site-packages to the path)" % rest)
    box = {}

    # The run's working directory is the scratch dir: a relative node id is the repository's.
    node = rest if os.path.isabs(rest) else os.path.join(spec["root"], rest)

    def run():
        box["code"] = pytest.main([node, "-q", "-p", "no:cacheprovider", "--rootdir", spec["root"]])

    return run, lambda: "pytest exit code %s" % box.get("code")


def discover(spec):
    """The entry points of the repository: every unittest test under root (files test*.py) and,
    for the modules in spec["doctest"], every doctest with examples. Errors are listed."""
    import doctest
    import unittest

    entries, errors = [], []
    if spec.get("unittest", True) and os.path.isdir(spec["root"]):
        try:
            suite = unittest.TestLoader().discover(spec["root"], pattern="test*.py", top_level_dir=spec["root"])
            for test in _flatten(suite):
                tid = test.id()
                if tid.startswith("unittest.loader._FailedTest."):
                    errors.append("unittest: cannot load %s" % tid.rsplit(".", 1)[-1])
                else:
                    entries.append("unittest:" + tid)
        except BaseException as e:
            errors.append("unittest discovery: %s: %s" % (type(e).__name__, tracer.safe_repr_message(e)))
    for name in spec.get("doctest") or []:
        try:
            module = _import(name)
            for t in doctest.DocTestFinder().find(module):
                if t.examples:
                    # A module may name itself otherwise (_pydecimal is "decimal"): then say which.
                    own = t.name == name or t.name.startswith(name + ".")
                    entries.append("doctest:" + ("" if own else name + ":") + t.name)
        except BaseException as e:
            errors.append("doctest %s: %s" % (name, tracer.safe_repr_message(e)))
    return entries, errors


def _flatten(suite):
    for t in suite:
        if hasattr(t, "__iter__"):
            yield from _flatten(t)
        else:
            yield t


# ---- one traced run -----------------------------------------------------------------------

def trace_entry(spec, entry, recorder):
    """Runs one entry point under `recorder` (a RepoRecorder) and returns the repository trace
    record (without id); limits end it through recorder.on_limit like trace_program."""
    record = {"kind": "repo", "repo": spec["root"], "entry": entry, "python": tracer.python_version(),
              "status": "normal", "events": recorder.events, "files": recorder.files,
              "bounds": {"max_events": recorder.max_events, "repr_cap": recorder.repr_cap,
                         "timeout_s": spec.get("timeout_s")}}
    recorder.record = record
    setup_path(spec)
    if entry == "discover":
        record["entries"], record["errors"] = discover(spec)
        return record
    try:
        run, outcome = prepare_entry(spec, entry)
    except EntryError as e:
        record["status"] = "error"
        record["error"] = "EntryError: %s" % e
        return record
    tracer.run_traced(recorder, record, run)
    if record["status"] == "normal":
        record["outcome"] = outcome()
    add_blocks(record)
    return record


def add_blocks(record):
    """The def blocks of every recorded file (function_blocks), for the NDL context."""
    record["blocks"] = {rel: function_blocks(text) for rel, text in record["files"].items()}
