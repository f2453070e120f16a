"""ndbg program normalizer: JSONL {"code": ...} on stdin -> JSONL facts on stdout, one per line.

For each program it reports
  ok        whether the code parses (Python 3 grammar of this interpreter)
  error     the SyntaxError message when it does not
  ast       hash of the normalized AST: identifiers alpha-renamed (v0, v1, ... in order of first
            appearance; builtins and attribute names kept), docstrings dropped, constants kept.
            Two programs that differ only in the names they chose get the same hash; this is the
            key for dedupe, splits and decontamination.
  shape     the same with every constant replaced by its type: a coarser "same skeleton" key,
            reported as a diversity measure only.
  imports   top-level module names imported anywhere in the code (sorted).
  risky     names of nondeterministic or unsafe builtins the code mentions (id, hash, input,
            open, exec, eval, globals, ...), sorted.

It never executes the code.
"""

import ast
import builtins
import hashlib
import json
import sys

BUILTINS = set(dir(builtins))
RISKY = {"id", "hash", "input", "open", "exec", "eval", "compile", "globals", "locals", "vars",
         "breakpoint", "__import__", "exit", "quit", "help", "memoryview"}


class Renamer(ast.NodeTransformer):
    def __init__(self, strip_constants):
        self.names = {}
        self.strip_constants = strip_constants

    def canon(self, name):
        if name in BUILTINS and name not in self.names:
            return name
        if name not in self.names:
            self.names[name] = "v%d" % len(self.names)
        return self.names[name]

    def visit_Name(self, node):
        node.id = self.canon(node.id)
        return node

    def visit_arg(self, node):
        node.arg = self.canon(node.arg)
        node.annotation = None
        return node

    def _strip_docstring(self, node):
        body = node.body
        if body and isinstance(body[0], ast.Expr) and isinstance(getattr(body[0], "value", None), ast.Constant) \
                and isinstance(body[0].value.value, str) and len(body) > 1:
            node.body = body[1:]

    def visit_FunctionDef(self, node):
        node.name = self.canon(node.name)
        node.returns = None
        self._strip_docstring(node)
        self.generic_visit(node)
        return node

    visit_AsyncFunctionDef = visit_FunctionDef

    def visit_ClassDef(self, node):
        node.name = self.canon(node.name)
        self._strip_docstring(node)
        self.generic_visit(node)
        return node

    def visit_Global(self, node):
        node.names = [self.canon(n) for n in node.names]
        return node

    visit_Nonlocal = visit_Global

    def visit_ExceptHandler(self, node):
        if node.name:
            node.name = self.canon(node.name)
        self.generic_visit(node)
        return node

    def visit_Constant(self, node):
        if self.strip_constants:
            return ast.Constant(value=type(node.value).__name__)
        return node


def digest(tree):
    text = ast.dump(tree, annotate_fields=False, include_attributes=False)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:20]


def imports_of(tree):
    found = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                found.add(alias.name.split(".")[0])
        elif isinstance(node, ast.ImportFrom):
            found.add((node.module or "").split(".")[0] or ".")
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "__import__":
            found.add("__import__")
    return sorted(found)


def facts(code):
    try:
        tree = ast.parse(code)
    except (SyntaxError, ValueError) as e:
        return {"ok": False, "error": "SyntaxError: %s (line %s)" % (getattr(e, "msg", str(e)), getattr(e, "lineno", "?"))}
    imports = imports_of(tree)
    risky = sorted({n.id for n in ast.walk(tree) if isinstance(n, ast.Name) and n.id in RISKY})
    h = digest(Renamer(False).visit(tree))
    shape = digest(Renamer(True).visit(ast.parse(code)))
    return {"ok": True, "ast": h, "shape": shape, "imports": imports, "risky": risky}


def safe_facts(code):
    try:
        return facts(code)
    except RecursionError:  # a pathologically deep expression: report it, do not die
        return {"ok": False, "error": "RecursionError: the code is nested too deeply to normalize"}


def main():
    sys.setrecursionlimit(20000)
    out = sys.stdout
    for line in sys.stdin:
        if not line.strip():
            continue
        out.write(json.dumps(safe_facts(json.loads(line)["code"])) + "\n")


if __name__ == "__main__":
    main()
