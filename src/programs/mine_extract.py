"""Extracts standalone-callable functions from Python source files (`ndbg programs mine`).

Reads a JSON request on stdin: {"files": [{"path", "module", "origin"}], "allow_imports": [...],
"max_function_lines": N, "max_code_lines": N, "callsite_files": [...]} and writes JSONL on
stdout: one {"kind": "function", ...} line per candidate, then one {"kind": "summary", ...}.

Only parses (ast); nothing here runs the code. A candidate's `code` is the function plus the
module-level definitions it references, in dependency order: imports of allowed modules,
constants, helper functions and classes, also from other modules of the same corpus when the
module imports them by name (`from .util import helper`). A name that cannot be resolved that
way (bound under `if`/`try`, star imports, `__file__`, a module outside the allow-list) drops
the function, with the reason counted in the summary.
"""

import ast
import builtins
import gc
import json
import resource
import sys

from mine_hints import body_literals, collect_callsites, doctest_calls, param_hints, resolve_from, walk

BUILTINS = set(dir(builtins))
# Module globals whose value depends on where the file lives or how it was imported.
PLACE_NAMES = {"__file__", "__name__", "__spec__", "__loader__", "__package__", "__path__", "__builtins__", "__all__"}


_FREE = {}


def free_names(node):
    """(runtime, annotation_only): the names a definition reads that it does not bind itself,
    split by whether anything but an annotation reads them; None when it rebinds module state."""
    key = id(node)
    if key not in _FREE:
        _FREE[key] = _free_names(node)
    return _FREE[key]


def annotation_nodes(node):
    """Ids of the nodes inside annotations (parameters, returns, annotated assignments)."""
    roots = []
    for n in walk(node):
        if isinstance(n, ast.arg) and n.annotation is not None:
            roots.append(n.annotation)
        elif isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef)) and n.returns is not None:
            roots.append(n.returns)
        elif isinstance(n, ast.AnnAssign):
            roots.append(n.annotation)
    return {id(m) for r in roots for m in walk(r)}


def _free_names(node):
    """A sound over-approximation: a name bound anywhere inside counts as local, which at worst
    drops a function. Annotation-only names are kept apart: under `from __future__ import
    annotations` nothing evaluates them, so one that cannot be resolved need not drop the code."""
    loads, annotation_loads, binds = set(), set(), set()
    in_annotation = annotation_nodes(node)
    for n in walk(node):
        if isinstance(n, ast.Name):
            if not isinstance(n.ctx, ast.Load):
                binds.add(n.id)
            else:
                (annotation_loads if id(n) in in_annotation else loads).add(n.id)
        elif isinstance(n, ast.arg):
            binds.add(n.arg)
        elif isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)) and n is not node:
            binds.add(n.name)
        elif isinstance(n, (ast.Import, ast.ImportFrom)):
            for a in n.names:
                binds.add((a.asname or a.name).split(".")[0])
        elif isinstance(n, ast.ExceptHandler) and n.name:
            binds.add(n.name)
        elif isinstance(n, (ast.Global, ast.Nonlocal)):
            return None  # rebinding module state: not standalone in the sense we want
    if isinstance(node, (ast.FunctionDef, ast.ClassDef)):
        binds.discard(node.name)
    runtime = loads - binds
    return runtime, annotation_loads - binds - runtime


def is_generator(fn):
    for n in walk(fn):
        if isinstance(n, (ast.Yield, ast.YieldFrom, ast.Await)):
            # A yield inside a nested def or lambda belongs to that one; rare enough to drop too.
            return True
    return False


def is_overload(decorator):
    """`@overload` / `@typing.overload`: a signature stub, the real body comes after it."""
    target = decorator.func if isinstance(decorator, ast.Call) else decorator
    return (target.attr if isinstance(target, ast.Attribute) else getattr(target, "id", None)) == "overload"


class Module:
    def __init__(self, path, module, origin, source, tree):
        self.path, self.module, self.origin, self.source, self.tree = path, module, origin, source, tree
        self.lines = source.splitlines(keepends=True)
        self.defs = {}  # name -> (stmt, kind)
        self.order = {}  # stmt id -> index in module body
        for i, st in enumerate(tree.body):
            self.order[id(st)] = i
            if isinstance(st, (ast.FunctionDef, ast.ClassDef)):
                self.defs[st.name] = (st, "def")
            elif isinstance(st, ast.AsyncFunctionDef):
                self.defs[st.name] = (st, "async")
            elif isinstance(st, (ast.Assign, ast.AnnAssign)):
                targets = st.targets if isinstance(st, ast.Assign) else [st.target]
                for t in targets:
                    for n in walk(t):
                        if isinstance(n, ast.Name):
                            self.defs[n.id] = (st, "assign")
            elif isinstance(st, ast.Import):
                for a in st.names:
                    self.defs[(a.asname or a.name).split(".")[0]] = (st, ("import", a))
            elif isinstance(st, ast.ImportFrom):
                for a in st.names:
                    if a.name == "*":
                        continue
                    self.defs[a.asname or a.name] = (st, ("from", a))

    def segment(self, st, strip_docstring=True):
        first = st.lineno
        if getattr(st, "decorator_list", None):
            first = min(d.lineno for d in st.decorator_list)
        lines = self.lines[first - 1 : st.end_lineno]
        body = getattr(st, "body", None)
        if strip_docstring and isinstance(st, (ast.FunctionDef, ast.ClassDef)) and body and len(body) > 1:
            d = body[0]
            if isinstance(d, ast.Expr) and isinstance(d.value, ast.Constant) and isinstance(d.value.value, str):
                # Whole lines only: a docstring sharing a line with code is left as it is.
                lo, hi = d.lineno - first, d.end_lineno - first
                if lo > 0 and "".join(lines[lo : hi + 1]).strip().endswith(('"""', "'''", '"', "'")):
                    lines = lines[:lo] + lines[hi + 1 :]
        text = "".join(lines)
        return text if text.endswith("\n") else text + "\n"


class Closure:
    """The statements one function needs, gathered across modules."""

    def __init__(self, corpus, allow, max_lines):
        self.corpus, self.allow, self.max_lines = corpus, allow, max_lines
        self.lines = 0
        self.emitted = []  # (module, stmt) in dependency order
        self.seen = set()
        self.bound = {}  # name -> (module path, stmt id): a second binding of a name is a conflict
        self.imports = []  # import lines, in first-seen order
        # Set when an annotation-only name could not be resolved: the code then starts with
        # `from __future__ import annotations`, under which no annotation is evaluated.
        self.lazy_annotations = False

    def bind(self, name, key):
        """`key` says what the name is bound to: a statement (module path, id), or the import
        line, so that `from typing import Any` in two modules is one binding, not a conflict."""
        prev = self.bound.get(name)
        if prev is not None and prev != key:
            raise Reject("name_conflict")
        self.bound[name] = key

    def need(self, mod, name, depth=0):
        if depth > 40:
            raise Reject("too_deep")
        if name in PLACE_NAMES:
            raise Reject("module_globals")
        entry = mod.defs.get(name)
        if entry is None:
            if name in BUILTINS:
                return
            raise Reject("unresolved_name")
        st, kind = entry
        if kind == "async":
            raise Reject("async")
        if isinstance(kind, tuple):
            self.need_import(mod, name, st, kind, depth)
            return
        key = (mod.path, id(st))
        self.bind(name, key)
        if key in self.seen:
            return
        self.seen.add(key)
        if isinstance(st, (ast.FunctionDef, ast.ClassDef)) and st.decorator_list:
            for d in st.decorator_list:
                # An expression: no `global` (never None) and no annotations in it.
                for n in sorted(free_names(d)[0]):
                    self.need(mod, n, depth + 1)
        names = free_names(st)
        if names is None:
            raise Reject("global_statement")
        runtime, annotation_only = names
        for n in sorted(runtime):
            if n != name:
                self.need(mod, n, depth + 1)
        for n in sorted(annotation_only):
            if n != name:
                self.need_for_annotation(mod, n, depth + 1)
        self.lines += st.end_lineno - st.lineno + 1
        if self.lines > self.max_lines:
            # Stop early: in large packages a closure can pull in half the package.
            raise Reject("code_too_long")
        self.emitted.append((mod, st))

    def need_for_annotation(self, mod, name, depth):
        """Resolves a name only annotations read, as `need` does; when it cannot be resolved the
        closure is left as it was and its annotations become lazy (typing names imported under
        `if TYPE_CHECKING:` are the common case)."""
        saved = (self.lines, list(self.emitted), set(self.seen), dict(self.bound), list(self.imports), self.lazy_annotations)
        try:
            self.need(mod, name, depth)
        except Reject as r:
            if str(r) == "too_deep":
                raise
            self.lines, self.emitted, self.seen, self.bound, self.imports, _ = saved
            self.lazy_annotations = True

    def need_import(self, mod, name, st, kind, depth):
        how, alias = kind
        if how == "import":
            top = alias.name.split(".")[0]
            if top not in self.allow:
                raise Reject("import_outside_allow_list")
            line = "import %s%s\n" % (alias.name, " as " + alias.asname if alias.asname else "")
            self.bind(name, line)
            if line not in self.imports:
                self.imports.append(line)
            return
        target = resolve_from(mod, st)
        top = target.split(".")[0]
        if top in self.allow:
            line = "from %s import %s%s\n" % (target, alias.name, " as " + alias.asname if alias.asname else "")
            self.bind(name, line)
            if line not in self.imports:
                self.imports.append(line)
            return
        other = self.corpus.get(target)
        if other is None:
            raise Reject("import_outside_allow_list")
        if alias.asname and alias.asname != alias.name:
            raise Reject("renamed_import")
        self.need(other, alias.name, depth + 1)

    def code(self):
        parts = (["from __future__ import annotations\n"] if self.lazy_annotations else []) + self.imports
        if parts:
            parts.append("\n")
        for mod, st in self.emitted:
            parts.append(mod.segment(st))
            parts.append("\n")
        return "".join(parts).rstrip("\n") + "\n"


class Reject(Exception):
    pass


def load(entry, counts):
    try:
        with open(entry["path"], "rb") as fh:
            raw = fh.read()
        source = raw.decode("utf-8")
        tree = ast.parse(source)
    except (UnicodeDecodeError, SyntaxError, ValueError, OSError, RecursionError):
        counts["unparseable_file"] = counts.get("unparseable_file", 0) + 1
        return None
    return Module(entry["path"], entry["module"], entry.get("origin"), source, tree)


def peak_rss_mib():
    """This process's peak resident memory: it holds every module's tree, so it grows with the
    corpus (docs/programs.md gives the bench's figure)."""
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return peak // (1 << 20) if sys.platform == "darwin" else peak // 1024  # bytes on macOS, KiB elsewhere


def main():
    # The trees of the whole corpus stay alive to the end, and every collection of the cyclic
    # garbage collector walked all of them: parsing took 3.5 times as long. ASTs hold no
    # reference cycles; reference counting frees what this process lets go of.
    gc.disable()
    req = json.load(sys.stdin)
    allow = set(req["allow_imports"])
    max_fn = req.get("max_function_lines", 40)
    max_code = req.get("max_code_lines", 80)
    counts = {}
    modules = [m for m in (load(e, counts) for e in req["files"]) if m is not None]
    corpus = {m.module: m for m in modules}
    extra = [m for m in (load(e, counts) for e in req.get("callsite_files", [])) if m is not None]
    names_by_module = {m.module: {st.name for st in m.tree.body if isinstance(st, ast.FunctionDef)} for m in modules}
    sites = collect_callsites(modules + extra, names_by_module)
    out = sys.stdout
    functions = 0

    def reject(reason):
        counts[reason] = counts.get(reason, 0) + 1

    for mod in modules:
        for st in mod.tree.body:
            if not isinstance(st, ast.FunctionDef):
                continue
            functions += 1
            name = st.name
            if name.startswith("__"):
                reject("dunder")
                continue
            if any(is_overload(d) for d in st.decorator_list):
                reject("overload_stub")
                continue
            if is_generator(st):
                reject("generator_function")
                continue
            params = param_hints(st)
            required = [p for p in params if not p["has_default"]]
            if not params or st.args.kwonlyargs and any(d is None for d in st.args.kw_defaults):
                reject("no_positional_parameters" if not params else "required_keyword_only")
                continue
            if st.end_lineno - st.lineno + 1 > max_fn:
                reject("function_too_long")
                continue
            closure = Closure(corpus, allow, max_code)
            try:
                closure.need(mod, name)
            except Reject as r:
                reject(str(r))
                continue
            except RecursionError:
                reject("too_deep")
                continue
            code = closure.code()
            if code.count("\n") > max_code:
                reject("code_too_long")
                continue
            strs, nums = body_literals(st)
            record = {
                "kind": "function",
                "module": mod.module,
                "path": mod.path,
                "origin": mod.origin,
                "function": name,
                "line": st.lineno,
                "code": code,
                "params": params,
                "required": len(required),
                "doctests": doctest_calls(st, name)[:8],
                "callsites": sites.get("%s:%s" % (mod.module, name), [])[:8],
                "strings": strs,
                "ints": nums,
            }
            out.write(json.dumps(record) + "\n")
            reject("extracted")
    out.write(json.dumps({"kind": "summary", "modules": len(modules), "functions": functions, "counts": counts, "peak_rss_mib": peak_rss_mib()}) + "\n")


if __name__ == "__main__":
    sys.setrecursionlimit(10000)
    main()
