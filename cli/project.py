"""``[tool.symshape]`` in pyproject.toml: finding it, reading it, turning it into declarations.

::

    [tool.symshape.dims]                 # optional: bounds of the named dims used below
    batch = { max = 128 }

    [[tool.symshape.exports]]
    function = "zoo.head:classify"       # module:function, importable from the project root
    example_inputs = [{ shape = [8, 4, 8], dtype = "float32" }]
    dynamic_shapes = { feats = ["batch", 4, "width"] }

An axis is a Dim name (the same string is the same Dim, bounded by ``[tool.symshape.dims]``),
a linear expression over one name (``"2*batch + 1"``, ``"8 - d"``), an int (static), or
``"Dim.AUTO"`` / ``"Dim.DYNAMIC"`` / ``"Dim.STATIC"``.  An example input is
``{ shape = [...], dtype = "float32" }`` (an array of ones; ``fill = 0.5`` for another
value), an int / float / bool (a Python scalar), a list of those (a list input) or a table
without ``shape`` (a dict input).  ``example_inputs`` is a list (positional arguments) or a
table (keyword arguments).

TOML is read with the standard library's ``tomllib`` (Python 3.11+) or, on 3.10, with the
``tomli`` package when it is installed.  ``layout`` below is a small position-keeping scanner
of the same file: it finds where each entry is (for error lines and annotations) and what
``--fix`` should edit, so that fixes are targeted text edits that keep the comments.
"""
from __future__ import annotations

import ast
import os
import re
from typing import Any, Dict, List, Optional, Tuple

from symshape.specs.dims import AUTO, DYNAMIC, STATIC, Dim
from ..errors import ProjectError, UserError
from .exportable import Declaration

MARKERS = {"Dim.AUTO": AUTO, "Dim.DYNAMIC": DYNAMIC, "Dim.STATIC": STATIC}


# --------------------------------------------------------------------------- loading
def load_toml(path: str, text: Optional[str] = None) -> dict:
    try:
        import tomllib  # Python 3.11+
    except ImportError:  # pragma: no cover - Python 3.10
        try:
            import tomli as tomllib
        except ImportError:
            raise ProjectError(
                "%s: reading [tool.symshape] needs a TOML parser: Python 3.11+ has tomllib; "
                "on Python 3.10 install tomli (pip install tomli)" % path) from None
    try:
        if text is not None:
            return tomllib.loads(text)
        with open(path, "rb") as fh:
            return tomllib.load(fh)
    except OSError as e:
        raise ProjectError("cannot read %s: %s" % (path, e)) from None
    except Exception as e:  # tomllib.TOMLDecodeError
        raise ProjectError("%s is not valid TOML: %s" % (path, e)) from None


def find_pyproject(start: str) -> Optional[str]:
    """The nearest pyproject.toml at or above ``start`` (a file or a directory)."""
    d = os.path.abspath(start)
    if os.path.isfile(d):
        if os.path.basename(d) == "pyproject.toml":
            return d
        d = os.path.dirname(d)
    while True:
        cand = os.path.join(d, "pyproject.toml")
        if os.path.isfile(cand):
            return cand
        parent = os.path.dirname(d)
        if parent == d:
            return None
        d = parent


def module_file(root: str, module: str) -> Optional[str]:
    """The file that ``import module`` finds below ``root`` (``a/b.py`` or
    ``a/b/__init__.py``), worked out from the paths alone (nothing is imported)."""
    parts = module.split(".")
    if not all(p.isidentifier() for p in parts):
        return None
    base = os.path.join(root, *parts)
    for cand in (base + ".py", os.path.join(base, "__init__.py")):
        if os.path.isfile(cand):
            return os.path.abspath(cand)
    return None


def toml_modules(pyproject: str) -> Dict[str, str]:
    """{file: module name} for the modules the ``[[tool.symshape.exports]]`` entries of
    ``pyproject`` name and that exist below its directory (the name they are imported
    under from the project root).  A malformed file names none (checking it says why)."""
    try:
        decls = declarations(pyproject)
    except UserError:
        return {}
    root = os.path.dirname(pyproject)
    out: Dict[str, str] = {}
    for d in decls:
        f = module_file(root, d.module) if d.module != "?" else None
        if f is not None:
            out.setdefault(f, d.module)
    return out


def symshape_table(path: str, text: Optional[str] = None) -> Optional[dict]:
    """The ``[tool.symshape]`` table of ``path`` (or of ``text``, its edited content), or
    None when it has none."""
    data = load_toml(path, text)
    tool = data.get("tool")
    if not isinstance(tool, dict):
        return None
    table = tool.get("symshape")
    if table is None:
        return None
    if not isinstance(table, dict):
        raise ProjectError("%s: tool.symshape must be a table" % path)
    return table


# --------------------------------------------------------------------------- axis expressions
def parse_axis(text: str) -> Tuple[str, Any]:
    """``("marker", m)``, ``("int", v)`` or ``("linear", (name, coeff, offset))``."""
    s = text.strip()
    if s in MARKERS:
        return "marker", MARKERS[s]
    try:
        node = ast.parse(s, mode="eval").body
    except SyntaxError:
        raise ValueError("%r is not a Dim name, a linear expression like '2*batch + 1', "
                         "an int or Dim.AUTO / Dim.DYNAMIC / Dim.STATIC" % text) from None
    coeffs, const = _linear(node, text)
    coeffs = {k: v for k, v in coeffs.items() if v}
    if not coeffs:
        return "int", const
    if len(coeffs) > 1:
        raise ValueError("%r: a derived dim is A*d + B over one Dim; Dims cannot be added "
                         "to each other" % text)
    (name, a), = coeffs.items()
    if not (a > 0 or a == -1):
        raise ValueError("%r: the coefficient must be a positive int (or the form B - d)"
                         % text)
    return "linear", (name, a, const)


def _linear(node, text) -> Tuple[Dict[str, int], int]:
    if isinstance(node, ast.Name):
        return {node.id: 1}, 0
    if isinstance(node, ast.Constant) and type(node.value) is int:
        return {}, node.value
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
        c, k = _linear(node.operand, text)
        return {n: -v for n, v in c.items()}, -k
    if isinstance(node, ast.BinOp) and isinstance(node.op, (ast.Add, ast.Sub)):
        c1, k1 = _linear(node.left, text)
        c2, k2 = _linear(node.right, text)
        sign = 1 if isinstance(node.op, ast.Add) else -1
        out = dict(c1)
        for n, v in c2.items():
            out[n] = out.get(n, 0) + sign * v
        return out, k1 + sign * k2
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Mult):
        c1, k1 = _linear(node.left, text)
        c2, k2 = _linear(node.right, text)
        if c1 and c2:
            raise ValueError("%r is not linear: a Dim times a Dim" % text)
        if c1:
            return {n: v * k2 for n, v in c1.items()}, k1 * k2
        return {n: v * k1 for n, v in c2.items()}, k1 * k2
    raise ValueError("%r is not a Dim name, a linear expression like '2*batch + 1', an int "
                     "or Dim.AUTO / Dim.DYNAMIC / Dim.STATIC" % text)


# --------------------------------------------------------------------------- spec building
class SpecBuilder:
    """TOML values -> ``dynamic_shapes`` / example inputs, with one Dim per name."""

    def __init__(self, dims_table: Dict[str, Any], where: str) -> None:
        self.bounds = dims_table
        self.where = where
        self.dims: Dict[str, Dim] = {}

    def dim(self, name: str) -> Dim:
        if name not in self.dims:
            b = self.bounds.get(name, {})
            if not isinstance(b, dict) or set(b) - {"min", "max"}:
                raise ProjectError("%s: [tool.symshape.dims] %s must be a table like "
                                   "{ min = 2, max = 128 }, got %r" % (self.where, name, b))
            self.dims[name] = Dim(name, min=b.get("min"), max=b.get("max"))
        return self.dims[name]

    def axis(self, v, path: str):
        if isinstance(v, bool):
            raise ProjectError("%s: %s: expected a Dim name, an expression, an int or "
                               "Dim.AUTO, got %r" % (self.where, path, v))
        if isinstance(v, int):
            return v
        if isinstance(v, str):
            try:
                kind, val = parse_axis(v)
            except ValueError as e:
                raise ProjectError("%s: %s: %s" % (self.where, path, e)) from None
            if kind != "linear":
                return val
            name, a, b = val
            d = self.dim(name)
            if a == 1 and b == 0:
                return d
            return (b - d) if a == -1 else a * d + b
        raise ProjectError("%s: %s: expected a Dim name, an expression, an int or Dim.AUTO, "
                           "got %r" % (self.where, path, v))

    def spec(self, v, path: str = "dynamic_shapes"):
        if isinstance(v, list):
            return tuple(self.spec(x, "%s[%d]" % (path, i)) for i, x in enumerate(v))
        if isinstance(v, dict):
            if v and all(isinstance(k, str) and re.fullmatch(r"-?\d+", k) for k in v):
                return {int(k): self.spec(x, "%s[%s]" % (path, k)) for k, x in v.items()}
            return {k: self.spec(x, "%s[%r]" % (path, k)) for k, x in v.items()}
        return self.axis(v, path)


def example_value(v, path: str, where: str):
    import numpy as np
    if isinstance(v, dict) and "shape" in v:
        extra = set(v) - {"shape", "dtype", "fill"}
        if extra:
            raise ProjectError("%s: %s: unknown key(s) %s; an array is { shape = [...], "
                               "dtype = \"float32\", fill = 1 }" % (where, path, sorted(extra)))
        shape = v["shape"]
        if not isinstance(shape, list) or not all(
                isinstance(n, int) and not isinstance(n, bool) and n >= 0 for n in shape):
            raise ProjectError("%s: %s: shape must be a list of sizes, got %r"
                               % (where, path, shape))
        try:
            dtype = np.dtype(v.get("dtype", "float32"))
        except TypeError:
            raise ProjectError("%s: %s: unknown dtype %r" % (where, path, v.get("dtype"))) \
                from None
        fill = v.get("fill", 1)
        try:
            return np.full(tuple(shape), fill, dtype=dtype)
        except (OverflowError, ValueError, TypeError) as e:
            raise ProjectError("%s: %s: fill = %r does not fit dtype %s (%s)"
                               % (where, path, fill, dtype, e)) from None
    if isinstance(v, dict):
        return {k: example_value(x, "%s[%r]" % (path, k), where) for k, x in v.items()}
    if isinstance(v, list):
        return [example_value(x, "%s[%d]" % (path, i), where) for i, x in enumerate(v)]
    if isinstance(v, (int, float, bool, str)):
        return v
    raise ProjectError("%s: %s: unsupported example value %r" % (where, path, v))


def shape_like_lists(decl) -> List[str]:
    """For an entry of pyproject.toml whose export failed: each example input written as a
    list of sizes (``[2, 16, 8]``), which is passed to the function as a Python list, and
    the array it likely means (``{ shape = [2, 16, 8] }``)."""
    if decl.origin != "toml":
        return []
    given = [("example_inputs[%d]" % j, v) for j, v in enumerate(decl.example_inputs or ())]
    given += [("example_inputs[%r]" % k, v) for k, v in (decl.example_kwargs or {}).items()]
    return ["%s is the list %s, which the function gets as a Python list; an array of that "
            "shape is written { shape = %s }" % (path, v, v)
            for path, v in given if isinstance(v, list) and v and
            all(isinstance(n, int) and not isinstance(n, bool) for n in v)]


# --------------------------------------------------------------------------- declarations
def declarations(pyproject: str, text: Optional[str] = None) -> List[Declaration]:
    """One Declaration per ``[[tool.symshape.exports]]`` entry (functions not imported yet:
    ``resolve`` does that).  Malformed entries come back with ``.error`` set.  ``text``
    stands for the file's content (an edit being verified)."""
    table = symshape_table(pyproject, text)
    if not table:
        return []
    rel = os.path.basename(pyproject)
    dims_table = table.get("dims", {})
    if not isinstance(dims_table, dict):
        raise ProjectError("%s: [tool.symshape.dims] must be a table of name = { min, max }"
                           % pyproject)
    exports = table.get("exports", [])
    if not isinstance(exports, list):
        raise ProjectError("%s: tool.symshape.exports must be an array of tables "
                           "([[tool.symshape.exports]])" % pyproject)
    try:
        if text is None:
            with open(pyproject, encoding="utf-8") as fh:
                text = fh.read()
        lay = layout(text)
    except (OSError, ValueError):
        lay = None
    out = []
    for i, entry in enumerate(exports):
        line = lay.export_line(i) if lay is not None else 1
        where = "%s [[tool.symshape.exports]] #%d" % (rel, i + 1)
        fn_name = entry.get("function") if isinstance(entry, dict) else None
        module, _, qual = (fn_name or "").partition(":")
        d = Declaration(None, None, None, pyproject, line, module or "?", qual or "?",
                        origin="toml", index=i)
        out.append(d)
        try:
            if not isinstance(entry, dict):
                raise ProjectError("%s: expected a table" % where)
            unknown = set(entry) - {"function", "example_inputs", "example_kwargs",
                                    "dynamic_shapes"}
            if unknown:
                raise ProjectError("%s: unknown key(s) %s" % (where, sorted(unknown)))
            if not isinstance(fn_name, str) or not module or not qual:
                raise ProjectError("%s: function = \"module:function\" is required, got %r"
                                   % (where, fn_name))
            ex = entry.get("example_inputs")
            if ex is None:
                raise ProjectError("%s: example_inputs = [...] is required" % where)
            builder = SpecBuilder(dims_table, where)
            if isinstance(ex, list):
                d.example_inputs = tuple(example_value(v, "example_inputs[%d]" % j, where)
                                         for j, v in enumerate(ex))
                d.example_kwargs = {}
            elif isinstance(ex, dict):
                d.example_inputs = ()
                d.example_kwargs = {k: example_value(v, "example_inputs[%r]" % k, where)
                                    for k, v in ex.items()}
            else:
                raise ProjectError("%s: example_inputs must be a list (positional) or a "
                                   "table (keyword arguments)" % where)
            kw = entry.get("example_kwargs")
            if kw is not None:
                if not isinstance(kw, dict):
                    raise ProjectError("%s: example_kwargs must be a table" % where)
                d.example_kwargs.update({k: example_value(v, "example_kwargs[%r]" % k, where)
                                         for k, v in kw.items()})
            if "dynamic_shapes" in entry:
                d.dynamic_shapes = builder.spec(entry["dynamic_shapes"])
        except UserError as e:
            d.error = str(e)
        except Exception as e:  # noqa: BLE001 - e.g. fill = 300 with dtype = "int8"
            d.error = "%s: %s: %s" % (where, type(e).__name__, e)
    return out


# --------------------------------------------------------------------------- layout
class Node:
    """A TOML value with its text span ``[start, end)``; children for arrays / tables."""

    __slots__ = ("kind", "start", "end", "value", "items")

    def __init__(self, kind: str, start: int, end: int, value=None, items=None) -> None:
        self.kind = kind            # string | int | other | array | table
        self.start, self.end = start, end
        self.value = value          # python value for scalars
        self.items = items          # array: [Node]; table: [(key, key_start, Node)]

    def child(self, key):
        if self.kind == "array" and isinstance(key, int) and -len(self.items) <= key < len(
                self.items):
            return self.items[key]
        if self.kind == "table":
            for k, _, n in self.items:
                if k == str(key):
                    return n
        return None

    def walk(self):
        yield self
        if self.kind == "array":
            for n in self.items:
                yield from n.walk()
        elif self.kind == "table":
            for _, _, n in self.items:
                yield from n.walk()


class Table:
    """A ``[header]`` / ``[[header]]`` section: its keys with their line and value node."""

    def __init__(self, name: str, array: bool, line: int, start: int) -> None:
        self.name, self.array, self.line, self.start = name, array, line, start
        self.end = start        # offset just past the last line of the section
        self.last_key_end = start   # offset just past the line of the last key
        self.keys: Dict[str, Tuple[int, int, Node]] = {}   # key -> (line, line start, value)


class Layout:
    def __init__(self, text: str, tables: List[Table]) -> None:
        self.text = text
        self.tables = tables

    def find(self, name: str) -> Optional[Table]:
        for t in self.tables:
            if t.name == name and not t.array:
                return t
        return None

    def exports(self) -> List[Table]:
        return [t for t in self.tables if t.array and t.name == "tool.symshape.exports"]

    def export_line(self, i: int) -> int:
        ex = self.exports()
        if i >= len(ex):
            return 1
        t = ex[i]
        if "dynamic_shapes" in t.keys:
            return t.keys["dynamic_shapes"][0]
        return t.line


_BARE = re.compile(r"[A-Za-z0-9_-]+")


_ESCAPES = {"b": "\b", "t": "\t", "n": "\n", "f": "\f", "r": "\r", '"': '"', "\\": "\\"}


def _unescape(body: str, multi: bool) -> str:
    """The value of a basic string's body: TOML escapes, and in a multi-line string a
    backslash ending a line removes it with the white space and newlines that follow."""
    out = []
    i = 0
    while i < len(body):
        c = body[i]
        if c != "\\":
            out.append(c)
            i += 1
            continue
        j = i + 1
        while multi and j < len(body) and body[j] in " \t":
            j += 1
        if multi and body[j:j + 1] == "\n":
            while j < len(body) and body[j] in " \t\n":
                j += 1
            i = j
            continue
        e = body[i + 1:i + 2]
        if e in _ESCAPES:
            out.append(_ESCAPES[e])
            i += 2
        elif e in ("u", "U"):
            digits = body[i + 2:i + (6 if e == "u" else 10)]
            if len(digits) != (4 if e == "u" else 8) or not all(
                    d in "0123456789abcdefABCDEF" for d in digits):
                raise ValueError("invalid \\%s escape in a string" % e)
            out.append(chr(int(digits, 16)))
            i += 2 + len(digits)
        else:
            raise ValueError("invalid escape \\%s in a string" % e)
    return "".join(out)


class _Scanner:
    def __init__(self, text: str) -> None:
        self.t = text
        self.i = 0

    def err(self, msg: str):
        line = self.t.count("\n", 0, self.i) + 1
        raise ValueError("line %d: %s" % (line, msg))

    def ws(self, newlines: bool = False) -> None:
        t = self.t
        while self.i < len(t):
            c = t[self.i]
            if c in " \t\r" or (newlines and c == "\n"):
                self.i += 1
            elif c == "#" and newlines:
                while self.i < len(t) and t[self.i] != "\n":
                    self.i += 1
            else:
                break

    def key(self) -> List[str]:
        parts = []
        while True:
            self.ws()
            c = self.t[self.i:self.i + 1]
            if c in ('"', "'"):
                parts.append(self.string().value)
            else:
                m = _BARE.match(self.t, self.i)
                if not m:
                    self.err("expected a key")
                parts.append(m.group())
                self.i = m.end()
            self.ws()
            if self.t[self.i:self.i + 1] == ".":
                self.i += 1
                continue
            return parts

    def string(self) -> Node:
        """A basic or literal string, single- or multi-line, decoded as TOML decodes it
        (escapes, the newline right after an opening triple quote, line-ending backslashes,
        CRLF read as LF): the value ``tomllib`` gives."""
        t, s = self.t, self.i
        q = t[s]
        multi = t.startswith(q * 3, s)
        i = start = s + (3 if multi else 1)
        while True:
            if i >= len(t) or (not multi and t[i] == "\n"):
                self.err("unterminated string")
            if q == '"' and t[i] == "\\":
                i += 2
            elif t[i] != q:
                i += 1
            elif not multi:
                end, self.i = i, i + 1
                break
            elif t.startswith(q * 3, i):
                run = 3
                while run < 5 and t.startswith(q, i + run):
                    run += 1        # up to two quotes of the content before the delimiter
                end, self.i = i + run - 3, i + run
                break
            else:
                i += 1
        body = t[start:end]
        if multi:
            body = body.replace("\r\n", "\n")
            if body.startswith("\n"):
                body = body[1:]
        try:
            return Node("string", s, self.i, _unescape(body, multi) if q == '"' else body)
        except ValueError as e:
            self.err(str(e))

    def value(self) -> Node:
        self.ws()
        t, s = self.t, self.i
        c = t[s:s + 1]
        if c in ('"', "'"):
            return self.string()
        if c == "[":
            return Node("array", s, *self._sequence("]", "an array", self.value))
        if c == "{":
            return Node("table", s, *self._sequence("}", "an inline table", self._pair))
        m = re.compile(r"[^\s,\]}#]+").match(t, s)
        if not m:
            self.err("expected a value")
        self.i = m.end()
        raw = m.group()
        try:
            return Node("int", s, self.i, int(raw.replace("_", ""), 0))
        except ValueError:
            return Node("other", s, self.i, raw)

    def _sequence(self, close: str, what: str, item) -> tuple:
        """(end, items) of an array or inline table, its opening bracket at ``self.i``."""
        self.i += 1
        items = []
        while True:
            self.ws(True)
            if self.t[self.i:self.i + 1] == close:
                self.i += 1
                return self.i, None, items
            items.append(item())
            self.ws(True)
            if self.t[self.i:self.i + 1] == ",":
                self.i += 1
            elif self.t[self.i:self.i + 1] != close:
                self.err("expected , or %s in %s" % (close, what))

    def _pair(self) -> tuple:
        """``key = value`` of an inline table: (dotted key, where the key starts, value)."""
        ks = self.i
        k = self.key()
        if self.t[self.i:self.i + 1] != "=":
            self.err("expected = in an inline table")
        self.i += 1
        return ".".join(k), ks, self.value()

    def rest_of_line(self) -> None:
        self.ws()
        t = self.t
        if self.i < len(t) and t[self.i] == "#":
            while self.i < len(t) and t[self.i] != "\n":
                self.i += 1
        if self.i < len(t) and t[self.i] != "\n":
            self.err("unexpected text after a value")
        if self.i < len(t):
            self.i += 1


def layout(text: str) -> Layout:
    """Scan a TOML document keeping the position of every table, key and value."""
    sc = _Scanner(text)
    tables: List[Table] = []
    cur = Table("", False, 1, 0)
    tables.append(cur)
    while sc.i < len(text):
        sc.ws()
        c = text[sc.i:sc.i + 1]
        line_start = text.rfind("\n", 0, sc.i) + 1
        line = text.count("\n", 0, sc.i) + 1
        if c in ("\n", ""):
            sc.i += 1
            continue
        if c == "#":
            sc.rest_of_line()
            continue
        if c == "[":
            array = text.startswith("[[", sc.i)
            sc.i += 2 if array else 1
            name = ".".join(sc.key())
            close = "]]" if array else "]"
            if not text.startswith(close, sc.i):
                sc.err("expected %s" % close)
            sc.i += len(close)
            sc.rest_of_line()
            cur.end = line_start
            cur = Table(name, array, line, line_start)
            cur.last_key_end = sc.i
            tables.append(cur)
            continue
        k = sc.key()
        if text[sc.i:sc.i + 1] != "=":
            sc.err("expected =")
        sc.i += 1
        node = sc.value()
        sc.rest_of_line()
        cur.keys[".".join(k)] = (line, line_start, node)
        cur.last_key_end = sc.i
    cur.end = len(text)
    return Layout(text, tables)
