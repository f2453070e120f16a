"""What a mined function's code says about its inputs (`ndbg programs mine`): per parameter
its annotation, default, the literals it is compared with and the types its uses imply; the
function's own literals; doctest calls; literal-argument call sites across the corpus. Parsing
only, like mine_extract.py, which imports this module."""

import ast
import doctest
import re

# Method names that say what type a parameter is (`s.split(...)` -> str).
METHOD_TYPES = {
    "str": {"split", "strip", "lstrip", "rstrip", "lower", "upper", "startswith", "endswith", "replace", "find", "rfind",
            "isdigit", "isalpha", "isalnum", "isspace", "isupper", "islower", "title", "capitalize", "encode", "partition",
            "rpartition", "splitlines", "zfill", "center", "ljust", "rjust", "casefold", "swapcase", "expandtabs", "format",
            "rsplit", "removeprefix", "removesuffix", "isidentifier", "isnumeric", "isdecimal", "translate"},
    "list": {"append", "extend", "pop", "insert", "remove", "sort", "reverse"},
    "dict": {"items", "keys", "values", "get", "setdefault", "update", "popitem"},
    "set": {"add", "discard", "union", "intersection", "difference", "issubset", "issuperset"},
    "bytes": {"decode", "hex"},
}


def walk(node):
    """The nodes `ast.walk` yields, in its order, as a list: about a third of its time. The
    extractor walks every tree of a corpus, and each function's several times."""
    todo = [node]
    append, extend, AST = todo.append, todo.extend, ast.AST
    for n in todo:  # a list iterated while it grows: a breadth-first queue
        for field in n._fields:
            v = getattr(n, field, None)
            if isinstance(v, AST):
                append(v)
            elif type(v) is list:
                extend([x for x in v if isinstance(x, AST)])
    return todo


def resolve_from(mod, node):
    """The dotted module a `from X import y` in MOD names (relative imports resolved)."""
    if node.level == 0:
        return node.module or ""
    parts = mod.module.split(".")
    is_pkg = mod.path.endswith("__init__.py")
    base = parts if is_pkg else parts[:-1]
    if node.level > 1:
        base = base[: len(base) - (node.level - 1)]
    return ".".join(base + ([node.module] if node.module else []))


def literal_or_none(node):
    try:
        return ast.literal_eval(node)
    except Exception:
        return None


def literal_repr(node):
    """repr of a literal expression, or None."""
    try:
        v = ast.literal_eval(node)
    except Exception:
        return None
    # A set's repr follows string hashing, which differs per process (PYTHONHASHSEED): sorted
    # element reprs keep the mined file the same from run to run.
    r = "{%s}" % ", ".join(sorted(map(repr, v))) if isinstance(v, set) and v else repr(v)
    return r if len(r) <= 200 else None


def param_hints(fn):
    """Per positional parameter: its annotation, default and the types its uses suggest."""
    args = fn.args
    positional = args.posonlyargs + args.args
    defaults = [None] * (len(positional) - len(args.defaults)) + list(args.defaults)
    params = []
    for a, d in zip(positional, defaults):
        params.append({
            "name": a.arg,
            "annotation": ast.unparse(a.annotation) if a.annotation is not None else None,
            "default": literal_repr(d) if d is not None else None,
            "has_default": d is not None,
            "uses": set(),
            "values": set(),
        })
    by_name = {p["name"]: p for p in params}

    def mark(node, use):
        if isinstance(node, ast.Name) and node.id in by_name:
            by_name[node.id]["uses"].add(use)

    for n in walk(fn):
        if isinstance(n, ast.Attribute) and isinstance(n.value, ast.Name) and n.value.id in by_name:
            for ty, methods in METHOD_TYPES.items():
                if n.attr in methods:
                    mark(n.value, ty)
        elif isinstance(n, ast.Call) and isinstance(n.func, ast.Name):
            f = n.func.id
            # A parameter that is called is a function: its arity picks builtins that fit.
            mark(n.func, "call:%d" % min(len(n.args), 2))
            for kw in n.keywords:
                if kw.arg == "key":
                    mark(kw.value, "call:1")
            if f in ("map", "filter") and n.args:
                mark(n.args[0], "call:1")
            for arg in n.args:
                if f in ("range", "chr", "bin", "hex", "oct"):
                    mark(arg, "int")
                elif f in ("len", "sorted", "reversed", "enumerate", "sum", "max", "min", "list", "set", "tuple", "zip", "any", "all"):
                    mark(arg, "seq")
                elif f in ("ord",):
                    mark(arg, "char")
                elif f == "float":
                    mark(arg, "num")
            if f == "isinstance" and len(n.args) == 2 and isinstance(n.args[0], ast.Name):
                tys = n.args[1].elts if isinstance(n.args[1], ast.Tuple) else [n.args[1]]
                for t in tys:
                    if isinstance(t, ast.Name):
                        mark(n.args[0], "is:" + t.id)
        elif isinstance(n, ast.BinOp):
            for side, other in ((n.left, n.right), (n.right, n.left)):
                if isinstance(other, ast.Constant) and isinstance(other.value, (int, float)) and not isinstance(other.value, bool):
                    mark(side, "num")
                elif isinstance(other, ast.Constant) and isinstance(other.value, str):
                    mark(side, "str")
        elif isinstance(n, ast.Compare):
            items = [n.left] + list(n.comparators)
            for x in items:
                if isinstance(x, ast.Name) and x.id in by_name:
                    for y in items:
                        v = literal_repr(y) if y is not x else None
                        if v is not None:
                            by_name[x.id]["values"].add(v)
                            lit = literal_or_none(y)
                            if isinstance(lit, (tuple, list, set, frozenset)) and any(isinstance(op, (ast.In, ast.NotIn)) for op in n.ops):
                                for e in lit:
                                    if len(repr(e)) <= 60:
                                        by_name[x.id]["values"].add(repr(e))
        elif isinstance(n, ast.Subscript):
            mark(n.value, "seq")
            if isinstance(n.slice, ast.Constant) and isinstance(n.slice.value, str):
                mark(n.value, "dict")
        elif isinstance(n, (ast.For, ast.comprehension)):
            mark(n.iter, "seq")
    for p in params:
        p["uses"] = sorted(p["uses"])
        p["values"] = sorted(p["values"])[:12]
    return params


def body_literals(fn):
    strs, nums = set(), set()
    for n in walk(fn):
        if isinstance(n, ast.Constant):
            if isinstance(n.value, str) and 0 < len(n.value) <= 24 and "\n" not in n.value:
                strs.add(n.value)
            elif isinstance(n.value, int) and not isinstance(n.value, bool) and -1000 <= n.value <= 1000:
                nums.add(n.value)
    return sorted(strs)[:24], sorted(nums)[:24]


def source_lines(source):
    """The lines as ast numbers them (only \\r\\n, \\r and \\n end one; str.splitlines also
    splits at form feeds and other separators)."""
    return re.split(r"\r\n|\r|\n", source)


def call_args_source(lines, call):
    """`a, b` of a call whose arguments are all literals (positional only), else None. `lines`
    are `source_lines` of the source: ast.get_source_segment splits the whole source again on
    every call, which made generated files with thousands of calls take minutes."""
    if call.keywords or any(isinstance(a, ast.Starred) for a in call.args) or not call.args:
        return None
    parts = []
    for a in call.args:
        if literal_or_none(a) is None and not (isinstance(a, ast.Constant) and a.value is None):
            return None
        if a.lineno != a.end_lineno:
            return None
        # Column offsets count UTF-8 bytes.
        seg = lines[a.lineno - 1].encode("utf-8")[a.col_offset : a.end_col_offset].decode("utf-8", "replace")
        if len(seg) > 200:
            return None
        parts.append(seg)
    return ", ".join(parts)


def doctest_calls(fn, name):
    doc = ast.get_docstring(fn)
    if not doc or ">>>" not in doc:
        return []
    out = []
    try:
        examples = doctest.DocTestParser().get_examples(doc)
    except Exception:
        return []
    for ex in examples:
        try:
            tree = ast.parse(ex.source.strip(), mode="eval")
        except SyntaxError:
            continue
        call = tree.body
        if isinstance(call, ast.Call) and isinstance(call.func, ast.Name) and call.func.id == name:
            args = call_args_source(source_lines(ex.source.strip()), call)
            if args is not None:
                out.append(args)
    return out


def collect_callsites(modules, names_by_module):
    """Literal-argument calls of corpus functions anywhere in the files: `mod.f(1, 'a')` where
    `mod` is imported, or `f(...)` after `from mod import f` (or inside mod itself)."""
    sites = {}
    for mod in modules:
        aliases = {}  # local name -> (module, function) for from-imports; or module alias -> module
        mod_aliases = {}
        nodes = walk(mod.tree)
        for st in nodes:
            if isinstance(st, ast.ImportFrom):
                target = resolve_from(mod, st)
                for a in st.names:
                    aliases[a.asname or a.name] = (target, a.name)
            elif isinstance(st, ast.Import):
                for a in st.names:
                    mod_aliases[a.asname or a.name] = a.name
        own = names_by_module.get(mod.module, set())
        lines = source_lines(mod.source)
        for n in nodes:
            if not isinstance(n, ast.Call):
                continue
            key = None
            if isinstance(n.func, ast.Name):
                if n.func.id in aliases:
                    key = "%s:%s" % aliases[n.func.id]
                elif n.func.id in own:
                    key = "%s:%s" % (mod.module, n.func.id)
            elif isinstance(n.func, ast.Attribute) and isinstance(n.func.value, ast.Name) and n.func.value.id in mod_aliases:
                key = "%s:%s" % (mod_aliases[n.func.value.id], n.func.attr)
            if key is None:
                continue
            args = call_args_source(lines, n)
            if args is not None:
                lst = sites.setdefault(key, [])
                if args not in lst and len(lst) < 16:
                    lst.append(args)
    return sites
