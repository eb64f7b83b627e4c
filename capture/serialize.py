"""``ss.save`` / ``ss.load``: an ExportedProgram as versioned, human-readable JSON program
text, with its arrays as raw bytes beside it.

Two file formats hold the same program document::

    {"format": "symshape.ExportedProgram", "version": 1 or 2,
     "checksum": "sha256:<hex of the canonical JSON of 'program'>",
     "program": {"name", "call_signature", "graph", "signature", "constraints"}}

* the archive (``save``'s default, version 2; capture/archive.py): the document as text at
  the head of the file, each array's raw little-endian bytes after it at its alignment
  offset, described as ``{"dtype", "shape", "offset", "nbytes", "checksum"}``.  Loading
  reads each array with one copy, or maps it (``mmap_mode``);
* the JSON text file (``format="json"``, version 1, the only format before the archive):
  arrays inline as ``{"dtype", "shape", "data"}`` with ``data`` the base64 of the bytes.

An array whose memory layout matters also has ``"strides"`` and ``"align"``
(capture/layout.py).  Values are plain JSON where JSON has the type (null, bool, int,
finite float, str) and tagged one-key objects otherwise: ``{"tuple": [...]}``,
``{"list": [...]}``, ``{"expr": "(s0 + 1)"}`` (size expressions, in the Python syntax of
generated code), ``{"slice": [start, stop, step]}``, ``{"index": [...]}``,
``{"dtype": "float32"}``, ``{"node": "name"}``, ``{"scalar": ["float32", 1.5]}``,
``{"float": "nan"}``, ``{"complex": [re, im]}``, ``{"ellipsis": true}``,
``{"subgraph": {...}}``, ``{"cond_expr": ...}``, ``{"custom_op": "lib::name"}``,
``{"float_expr": [op, [args]]}`` (a float computed from sizes, ``d ** -0.5``),
``{"ufunc": "add"}`` (a NumPy ufunc, ``np.add.at``).  Dtypes
come from a whitelist of plain numeric and bool dtypes.  Nothing is pickled.

``load`` executes nothing from the file: every string that reaches generated code (node
names, parameter names, input paths, symbol names) is checked against a strict grammar,
expressions are parsed with ``ast`` into size expressions (never evaluated), and every op
must be in the op table.  Arrays are read only after the whole program has validated, and
only from inside the file.  A malformed or modified file, an unknown op or dtype, a
checksum mismatch or a newer format version raises ``UserError`` saying what is wrong.
Custom ops are stored by name and must be registered in the loading process.
"""
from __future__ import annotations

import ast
import base64
import contextvars
import hashlib
import inspect
import io
import json
import keyword
import math
import os
import re
import stat
import warnings
from typing import Any, Dict, List, Optional, Tuple

import numpy as np

from symshape import named_results

from symshape.specs import pytree
from symshape.algebra import relations as R
from symshape.errors import UserError
from symshape.algebra.expr import Expr, IntLike, OpAtom, Sym, add, atom_expr, format_py, mul, neg, sub
from symshape.contract.constraint_set import ConstraintSet, InputDesc, OfClass
from symshape.contract import saved
from symshape.sizes.symfloat import PY as _FLOAT_OPS, FloatExpr
from symshape.userframe import UserFrame

from . import archive, layout, node_check
from .ops import families
from . import control, decomp
from .ir import RESERVED, ArrRef, CondExpr, Graph, IndexAttr, Node, Subgraph
from .state import statesave
from .program import ExportedProgram, InputSpec, OutputSpec, Signature
from .ops.registry import OPS, defop
from .custom import lookup
from .ops import elementwise

families()          # every op's handler and op-table row, before any use
# the ops a saved program may hold beyond the families: cond / map / while_loop (control.py)
# and the core op names of lowered programs (decomp.py); each registers them as it loads
OP_SOURCES = (control, decomp)

FORMAT = "symshape.ExportedProgram"
# 1: one JSON text file, arrays inline as base64 (still written with format="json");
# 2: the same program text at the head of an archive, arrays as raw bytes after it
# (capture/archive.py)
TEXT_VERSION = 1
VERSION = 2
MMAP_MODES = (None, "r", "r+", "c")

DTYPES = ("bool", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64",
          "float16", "float32", "float64", "complex64", "complex128")
_PARAM_KINDS = {k.name: k for k in inspect._ParameterKind}
_SYM = re.compile(r"^([su])(0|[1-9][0-9]*)$")
_NODE_META = ("binds", "binds_value")


class SavedFrame(UserFrame):
    """A source location read from a file: its code text is the stored one."""

    @property
    def code(self) -> str:
        return self.__dict__.get("_code", "")


def _saved_frame(filename: str, lineno: int, function: str, code: str) -> SavedFrame:
    f = SavedFrame(filename, lineno, function)
    f.__dict__["_code"] = code
    return f


# =========================================================================== saving
class _Enc:
    def __init__(self, entries: Optional[list] = None) -> None:
        self.where = "program"
        # (placed array, its description) for an archive (None: arrays go inline, base64)
        self.entries = entries

    def fail(self, msg: str):
        raise UserError("ss.save: cannot save the program: %s: %s" % (self.where, msg))

    # values ------------------------------------------------------------------
    def value(self, v):
        t = type(v)
        if v is None or t is bool or t is int or t is str:
            return v
        if t is float:
            return v if math.isfinite(v) else {"float": repr(v)}
        if t is complex:
            return {"complex": [self.value(v.real), self.value(v.imag)]}
        if t is tuple:
            return {"tuple": [self.value(x) for x in v]}
        if t is list:
            return {"list": [self.value(x) for x in v]}
        if t is Expr:
            return {"expr": format_py(v)}
        if t is Node:
            return {"node": v.name}
        if t is slice:
            return {"slice": [self.value(v.start), self.value(v.stop), self.value(v.step)]}
        if t is IndexAttr:
            return {"index": [self.index_item(x) for x in v.items]}
        if v is Ellipsis:
            return {"ellipsis": True}
        if isinstance(v, np.dtype):
            return {"dtype": self.dtype(v)}
        if isinstance(v, np.generic):
            return {"scalar": [self.dtype(v.dtype), self.value(v.item())]}
        if t is Subgraph:
            return {"subgraph": self.subgraph(v)}
        if t is CondExpr:
            return {"cond_expr": self.cond(v.cond)}
        if t is FloatExpr:
            return {"float_expr": [v.op, [self.value(a) for a in v.args]]}
        if t is np.ufunc and getattr(np, v.__name__, None) is v:
            return {"ufunc": v.__name__}         # np.add.at(x, idx, 1): NumPy's own ufunc
        if isinstance(v, (np.random.Generator, np.random.RandomState)):
            # a generator held as model state: its kind, never its state (a loaded program
            # draws from a generator the caller gives ss.load, or a fresh one)
            return {"generator": _generator_kind(v)}
        self.fail("a value of type %s cannot be saved (%r)" % (t.__name__, v))

    def index_item(self, x):
        if isinstance(x, ArrRef):
            return {"arr": x.i}
        return self.value(x)

    def dtype(self, dt) -> str:
        dt = np.dtype(dt)
        if dt.name not in DTYPES:
            self.fail("dtype %s is not one of the plain numeric / bool dtypes a saved program "
                      "may use" % dt)
        return dt.name

    def cond(self, c):
        if isinstance(c, R.BoolOp):
            return {"bool": c.op, "args": [self.cond(a) for a in c.args]}
        if isinstance(c, R.Rel):
            return {"rel": c.op, "expr": format_py(c.expr)}
        if type(c) is bool:
            return c
        self.fail("unexpected condition %r" % (c,))

    def frame(self, f):
        if f is None:
            return None
        return {"file": f.filename, "line": f.lineno, "function": f.function, "code": f.code}

    def array(self, arr: np.ndarray):
        arr = np.asarray(arr)
        name = self.dtype(arr.dtype)
        cover = layout.covering(arr) if layout.needs_layout(arr) else None
        out = {"dtype": name, "shape": list(arr.shape)}
        if cover is not None:
            # the view's own layout (capture/layout.py): bit-identical results after load
            data, strides, align = cover
            extra = {"strides": strides, "align": align}
        else:
            data, align, extra = layout.plain(arr), 0, {}
        if self.entries is None:
            out["data"] = base64.b64encode(data).decode("ascii")
        else:
            raw = data.reshape(-1).view(np.uint8)
            self.entries.append((archive.Placed(raw, align), out))
            # offset and checksum are filled in once every array is placed (save)
            out.update(offset=None, nbytes=int(raw.nbytes), checksum=None)
        out.update(extra)
        return out

    # graphs ------------------------------------------------------------------
    def node(self, n: Node):
        self.where = "node %s (%s)" % (n.name, n.op)
        out: Dict[str, Any] = {"name": n.name, "op": n.op}
        out["inputs"] = [self.value(x) for x in n.inputs]
        attrs = {}
        for k, v in n.attrs.items():
            if not isinstance(k, str):
                self.fail("attribute name %r is not a str" % (k,))
            if k == "fn" and "::" in n.op:
                op = lookup(n.op)
                entry = {"custom_op": n.op}
                if op is not None and op.mutates_args:
                    entry["mutates_args"] = list(op.mutates_args)
                attrs[k] = entry
                continue
            attrs[k] = self.value(v)
        out["attrs"] = attrs
        out["dtype"] = None if n.dtype is None else (
            "object" if n.dtype == np.dtype(object) else self.dtype(n.dtype))
        out["shape"] = None if n.shape is None else [self.value(s) for s in n.shape]
        out["source"] = self.frame(n.frame)
        meta = {}
        if "binds" in n.meta:
            meta["binds"] = [[s.name, int(a)] for s, a in n.meta["binds"]]
        if "binds_value" in n.meta:
            meta["binds_value"] = n.meta["binds_value"].name
        if meta:
            out["meta"] = meta
        if n.op == "constant":
            v, now = n.meta["value"], getattr(self, "live", {}).get(n.name)
            if isinstance(now, np.ndarray) and isinstance(v, np.ndarray) and \
                    now.shape == v.shape and now.dtype == v.dtype:
                v = now
            out["value"] = self.array(v)
        return out

    def graph(self, g: Graph):
        return {"nodes": [self.node(n) for n in g.nodes],
                "outputs": [self.value(o) for o in g.outputs],
                "out_spec": self.spec(g.out_spec)}

    def spec(self, s):
        if s == ("leaf",):
            return None
        if s[0] == "dict":
            return {"dict": [[self.value(k), self.spec(c)] for k, c in zip(s[1], s[2])]}
        if s[0] == "namedtuple" and named_results.is_users(s[1]):
            # the user's own type: a file never names what loading would have to import, so
            # a loaded program returns the same items as a plain tuple
            return {"tuple": [self.spec(c) for c in s[2]]}
        if s[0] == "namedtuple":         # NumPy's result type, saved by its class name
            return {"namedtuple": [s[1], [self.spec(c) for c in s[2]]]}
        if s[0] in ("tuple", "list"):
            return {s[0]: [self.spec(c) for c in s[1]]}
        self.fail("unknown output structure %r" % (s,))

    def subgraph(self, sub):
        where = self.where
        out = {"name": sub.name, "inputs": [n.name for n in sub.inputs],
               "checks": [[self.cond(c), text] for c, text in sub.checks],
               "graph": self.graph(sub.graph)}
        self.where = where
        return out

    # program -----------------------------------------------------------------
    def constraints(self, cs: ConstraintSet):
        self.where = "constraints"
        return saved.encode(cs, self, configured_label)

    def call_signature(self, sig: Optional[inspect.Signature]):
        if sig is None:
            return None
        out = []
        for p in sig.parameters.values():
            e: Dict[str, Any] = {"name": p.name, "kind": p.kind.name}
            if p.default is not p.empty and _plain_json(p.default):
                e["default"] = p.default
            out.append(e)
        return out

    def signature(self, s):
        self.where = "graph_signature"
        return {"inputs": [{"kind": x.kind, "name": x.name, "target": x.target,
                            "path": x.path} for x in s.input_specs],
                "outputs": [dict({"kind": x.kind, "name": x.name, "target": x.target},
                                 **({"mutation": "rebind"} if x.mutation == "rebind" else {}))
                            for x in s.output_specs]}

    def program(self, ep):
        # state as it is now (a program that rebound ``self.m`` on earlier calls saves the
        # new array, as ``ep.state`` shows it), where it still fits its node
        by_path = {sp.path: sp.name for sp in ep.graph_signature.input_specs
                   if sp.kind in ("CONSTANT", "STATE") and sp.path}
        self.live = {by_path[p]: a for p, a in ep.state.items() if p in by_path}
        out = {"name": ep.name,
               "call_signature": self.call_signature(ep.call_signature),
               "graph": self.graph(ep.graph),
               "signature": self.signature(ep.graph_signature),
               "constraints": self.constraints(ep.constraints)}
        if ep.state_program is not None:
            self.where = "state"
            out["state"] = statesave.encode(ep.state_program, self.value)
        return out


def _plain_json(v) -> bool:
    t = type(v)
    if v is None or t in (bool, int, str):
        return True
    if t is float:
        return math.isfinite(v)
    return False


def _canonical(program) -> str:
    return json.dumps(program, sort_keys=True, separators=(",", ":"), ensure_ascii=True,
                      allow_nan=False)


def _digest(program) -> str:
    return "sha256:" + hashlib.sha256(_canonical(program).encode("ascii")).hexdigest()


def dumps(ep) -> str:
    """The JSON text file ``save(ep, path, format="json")`` writes (arrays inline, base64)."""
    return _document(ep, None)


def _document(ep, entries: Optional[list]) -> str:
    return _text(_program(ep, entries), TEXT_VERSION)


def _program(ep, entries: Optional[list]) -> dict:
    """The program as JSON data; with ``entries`` (a list to fill with (placed array, its
    description)), arrays go to an archive's data section instead of inline base64."""
    if not isinstance(ep, ExportedProgram):
        raise UserError("ss.save: expected an ExportedProgram (from ss.export), got %s"
                        % type(ep).__name__)
    return _Enc(entries).program(ep)


def _text(program: dict, version: int) -> str:
    """The signed document holding ``program``, as the file's text."""
    doc = {"format": FORMAT, "version": version, "checksum": _digest(program),
           "program": program}
    return _pretty(doc, "") + "\n"


def _pretty(v, indent: str, width: int = 100) -> str:
    """JSON with every object / array that fits on one line written on one line."""
    flat = json.dumps(v, ensure_ascii=False, allow_nan=False)
    if len(flat) + len(indent) <= width or not isinstance(v, (dict, list)) or not v:
        return flat
    inner = indent + " "
    if isinstance(v, dict):
        items = ["%s%s: %s" % (inner, json.dumps(k, ensure_ascii=False),
                               _pretty(x, inner, width)) for k, x in v.items()]
        return "{\n%s\n%s}" % (",\n".join(items), indent)
    items = ["%s%s" % (inner, _pretty(x, inner, width)) for x in v]
    return "[\n%s\n%s]" % (",\n".join(items), indent)


def save(ep, path, *, format: Optional[str] = None) -> None:
    """Write ``ep`` to ``path``: a file name, or a binary or text file object.

    ``format="archive"`` (the default, except for a text file object) writes the program
    as JSON text followed by each array's raw bytes (capture/archive.py), so saving and
    loading run at disk speed and ``load`` can map the arrays.  ``format="json"`` writes
    one JSON text file with the arrays inline as base64 (readable by older symshape
    versions; slow for large weights).  A file name is written atomically, through a
    temporary file renamed over it (keeping an existing file's permissions; a symbolic
    link is followed): a failed save leaves the old file untouched, and a program loaded
    from it with ``mmap_mode`` keeps working while it is replaced."""
    if format not in (None, "archive", "json"):
        raise UserError("ss.save: format must be 'archive' or 'json', got %s" % _short(format))
    stream = hasattr(path, "write")
    text_stream = stream and _is_text_stream(path)
    if format is None:
        format = "json" if text_stream else "archive"
    if format == "archive" and text_stream:
        raise UserError("ss.save: the archive format is binary but %s is a text file object; "
                        "open it in binary mode ('wb') or pass format='json'"
                        % type(path).__name__)
    if format == "json":
        text = dumps(ep)
        if stream:
            path.write(text if text_stream else text.encode("utf-8"))
        else:
            _write_atomically(path, lambda fh: fh.write(text.encode("utf-8")))
        return
    arrays: list = []
    program = _program(ep, arrays)
    archive.place([placed for placed, _ in arrays])
    for placed, described in arrays:
        described["offset"] = placed.offset
        described["checksum"] = archive.PLACEHOLDER
    # checksums are computed while the arrays are written; they do not change the text's
    # size, so the data section can be written first
    text_size = len(_text(program, VERSION).encode("utf-8"))

    def finish() -> bytes:
        for placed, described in arrays:
            described["checksum"] = placed.checksum
        return _text(program, VERSION).encode("utf-8")

    def write(fh) -> None:
        archive.write(fh, [placed for placed, _ in arrays], text_size, finish)
    if stream:
        write(path)
    else:
        _write_atomically(path, write)


def _is_text_stream(f) -> bool:
    if isinstance(f, io.TextIOBase):
        return True
    if isinstance(f, (io.RawIOBase, io.BufferedIOBase)):
        return False
    return "b" not in getattr(f, "mode", "b")


def _write_atomically(path, write) -> None:
    """Write through a temporary file next to ``path``, then rename it over ``path``."""
    p = os.path.realpath(os.fspath(path))
    tmp = "%s.%d-%s.tmp" % (p, os.getpid(), os.urandom(4).hex())
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666)
    try:
        with os.fdopen(fd, "wb") as fh:
            write(fh)
        try:
            os.chmod(tmp, stat.S_IMODE(os.stat(p).st_mode))
        except OSError:
            pass                        # no old file (or not ours to read): default mode
        os.replace(tmp, p)
    except BaseException:
        try:
            os.remove(tmp)
        except OSError:
            pass
        raise


# =========================================================================== loading
class _Bad(Exception):
    pass


def _is_name(s) -> bool:
    return isinstance(s, str) and s.isidentifier() and not keyword.iskeyword(s)


class _Pending:
    """An array in an archive's data section, described but not yet read (arrays are read
    or mapped only once the whole program is known to be valid)."""

    def __init__(self, dtype, shape, strides, align, offset, nbytes, checksum) -> None:
        self.dtype, self.shape, self.strides, self.align = dtype, shape, strides, align
        self.offset, self.nbytes, self.checksum = offset, nbytes, checksum


class _Dec:
    def __init__(self, source: str, in_archive: bool = False) -> None:
        self.source = source
        self.where: List[str] = ["program"]
        self.syms: Dict[str, Sym] = {}
        self.used_syms: set = set()
        # whether arrays may live in an archive's data section (not in a JSON text file)
        self.in_archive = in_archive
        self.pending: List[Tuple[Node, _Pending]] = []

    # errors -------------------------------------------------------------------
    def fail(self, msg: str):
        raise _Bad("%s: %s" % (".".join(self.where), msg))

    def at(self, key):
        dec = self

        class _Scope:
            def __enter__(self):
                dec.where.append(str(key) if not isinstance(key, int) else "[%d]" % key)

            def __exit__(self, *exc):
                dec.where.pop()
                return False
        return _Scope()

    def expect(self, v, types, what: str):
        if not isinstance(v, types) or (isinstance(v, bool) and bool not in
                                         (types if isinstance(types, tuple) else (types,))):
            self.fail("expected %s, got %s" % (what, _jtype(v)))
        return v

    def obj(self, v, keys: Tuple[str, ...], optional: Tuple[str, ...] = ()) -> dict:
        self.expect(v, dict, "an object")
        missing = [k for k in keys if k not in v]
        if missing:
            self.fail("missing key %r" % missing[0])
        extra = [k for k in v if k not in keys and k not in optional]
        if extra:
            self.fail("unexpected key %r" % extra[0])
        return v

    def lst(self, v, what: str = "a list") -> list:
        return self.expect(v, list, what)

    def text(self, v, what: str = "a string") -> str:
        return self.expect(v, str, what)

    def integer(self, v, what: str = "an integer") -> int:
        if type(v) is not int:
            self.fail("expected %s, got %s" % (what, _jtype(v)))
        return v

    def name(self, v, what: str = "a name") -> str:
        if not _is_name(v):
            self.fail("expected %s (a Python identifier), got %s" % (what, _short(v)))
        return v

    # symbols and expressions --------------------------------------------------------
    def sym(self, v) -> Sym:
        if not isinstance(v, str) or not _SYM.match(v):
            self.fail("expected a size symbol like 's0' or 'u1', got %s" % _short(v))
        got = self.syms.get(v)
        if got is None:
            m = _SYM.match(v)
            got = self.syms[v] = Sym(int(m.group(2)), m.group(1) == "u")
        self.used_syms.add(got)
        return got

    def expr(self, text) -> IntLike:
        self.text(text, "an expression string")
        if len(text) > 100000:
            self.fail("expression too long")
        try:
            tree = ast.parse(text, mode="eval")
            return self._expr(tree.body)
        except _Bad:
            raise
        except (SyntaxError, ValueError, RecursionError, ZeroDivisionError, TypeError,
                MemoryError, OverflowError):
            self.fail("malformed size expression %s" % _short(text))

    def _expr(self, n) -> IntLike:
        if isinstance(n, ast.Constant) and type(n.value) is int:
            return n.value
        if isinstance(n, ast.Name):
            return self.sym(n.id).expr
        if isinstance(n, ast.UnaryOp) and isinstance(n.op, (ast.USub, ast.UAdd)):
            v = self._expr(n.operand)
            return neg(v) if isinstance(n.op, ast.USub) else v
        if isinstance(n, ast.BinOp):
            a, b = self._expr(n.left), self._expr(n.right)
            if isinstance(n.op, ast.Add):
                return add(a, b)
            if isinstance(n.op, ast.Sub):
                return sub(a, b)
            if isinstance(n.op, ast.Mult):
                return mul(a, b)
            if isinstance(n.op, (ast.FloorDiv, ast.Mod)):
                if type(b) is int and b == 0:
                    self.fail("division by zero in a size expression")
                if type(a) is int and type(b) is int:
                    return a // b if isinstance(n.op, ast.FloorDiv) else a % b
                kind = "FloorDiv" if isinstance(n.op, ast.FloorDiv) else "Mod"
                return atom_expr(OpAtom(kind, (a, b)))
        if isinstance(n, ast.Call) and isinstance(n.func, ast.Name) and \
                n.func.id in ("min", "max") and not n.keywords and len(n.args) >= 2:
            args = tuple(self._expr(a) for a in n.args)
            return atom_expr(OpAtom("Min" if n.func.id == "min" else "Max", args))
        self.fail("unsupported syntax in a size expression: %s" % type(n).__name__)

    def cond(self, v):
        if type(v) is bool:
            return v
        self.expect(v, dict, "a condition")
        if "rel" in v:
            self.obj(v, ("rel", "expr"))
            if v["rel"] not in (R.EQ, R.NE, R.LE):
                self.fail("unknown relation %s" % _short(v["rel"]))
            with self.at("expr"):
                e = self.expr(v["expr"])
            if type(e) is not Expr:
                self.fail("a relation needs a non-constant expression")
            return R.Rel(v["rel"], e)
        self.obj(v, ("bool", "args"))
        if v["bool"] not in ("and", "or"):
            self.fail("unknown boolean operator %s" % _short(v["bool"]))
        args = self.lst(v["args"])
        if len(args) < 2:
            self.fail("a boolean operator needs two or more arguments")
        out = []
        for i, a in enumerate(args):
            with self.at(i):
                out.append(self.cond(a))
        return R.BoolOp(v["bool"], tuple(out))

    # values -------------------------------------------------------------------------
    def dtype(self, v, allow_object: bool = False) -> np.dtype:
        if allow_object and v == "object":
            return np.dtype(object)
        if not isinstance(v, str) or v not in DTYPES:
            self.fail("unknown dtype %s (allowed: %s)" % (_short(v), ", ".join(DTYPES)))
        return np.dtype(v)

    def value(self, v, nodes: Optional[Dict[str, Node]] = None):
        if v is None or type(v) in (bool, int, str):
            return v
        if type(v) is float:
            return v
        if isinstance(v, list):
            self.fail("unexpected JSON array (values are tagged: {\"tuple\": [...]})")
        self.expect(v, dict, "a value")
        if len(v) != 1:
            self.fail("a tagged value has exactly one key, got %s" % sorted(v))
        (tag, body), = v.items()
        read = _VALUE_TAGS.get(tag)
        if read is None:
            self.fail("unknown value tag %s" % _short(tag))
        return read(self, tag, body, nodes)

    def _tag_tuple_list(self, tag, body, nodes):
        items = []
        for i, x in enumerate(self.lst(body)):
            with self.at(i):
                items.append(self.value(x, nodes))
        return tuple(items) if tag == "tuple" else items

    def _tag_expr(self, tag, body, nodes):
        return self.expr(body)

    def _tag_node(self, tag, body, nodes):
        if nodes is None:
            self.fail("a node reference is not allowed here")
        self.text(body)
        got = nodes.get(body)
        if got is None:
            self.fail("reference to node %s, which is not defined before this point"
                      % _short(body))
        return got

    def _tag_float(self, tag, body, nodes):
        if body not in ("nan", "inf", "-inf"):
            self.fail("unknown float %s" % _short(body))
        return float(body)

    def _tag_complex(self, tag, body, nodes):
        parts = self.lst(body)
        if len(parts) != 2:
            self.fail("a complex number has two parts")
        re_, im = (self.value(p) for p in parts)
        if type(re_) is not float or type(im) is not float:
            self.fail("complex parts must be floats")
        return complex(re_, im)

    def _tag_slice(self, tag, body, nodes):
        parts = self.lst(body)
        if len(parts) != 3:
            self.fail("a slice has three parts")
        vals = [self.value(p) for p in parts]
        for p in vals:
            if p is not None and type(p) is not int and type(p) is not Expr:
                self.fail("slice bounds are ints, sizes or null")
        return slice(*vals)

    def _tag_index(self, tag, body, nodes):
        items = []
        for i, x in enumerate(self.lst(body)):
            with self.at(i):
                if isinstance(x, dict) and set(x) == {"arr"}:
                    items.append(ArrRef(self.integer(x["arr"])))
                    continue
                it = self.value(x)
                if not (it is None or it is Ellipsis or type(it) in (int, Expr, slice)):
                    self.fail("an index item is an int, a size, a slice, null or ...")
                items.append(it)
        return IndexAttr(items)

    def _tag_ellipsis(self, tag, body, nodes):
        if body is not True:
            self.fail("expected true")
        return Ellipsis

    def _tag_dtype(self, tag, body, nodes):
        return self.dtype(body)

    def _tag_scalar(self, tag, body, nodes):
        parts = self.lst(body)
        if len(parts) != 2:
            self.fail("a scalar is [dtype, value]")
        dt = self.dtype(parts[0])
        val = self.value(parts[1])
        if type(val) not in (bool, int, float, complex):
            self.fail("a scalar's value must be a number")
        try:
            with np.errstate(all="ignore"):
                return dt.type(val)
        except (OverflowError, ValueError, TypeError):
            self.fail("value %r does not fit dtype %s" % (val, dt))

    def _tag_subgraph(self, tag, body, nodes):
        return self.subgraph(body)

    def _tag_cond_expr(self, tag, body, nodes):
        return CondExpr(self.cond(body))

    def _tag_ufunc(self, tag, body, nodes):
        u = vars(np).get(self.text(body)) if isinstance(body, str) else None
        if type(u) is not np.ufunc or u.__name__ != body:
            self.fail("%s is not a NumPy ufunc" % _short(body))
        return u

    def _tag_float_expr(self, tag, body, nodes):
        parts = self.lst(body)
        if len(parts) != 2 or not (parts[0] == "neg" or parts[0] in _FLOAT_OPS):
            self.fail("a float expression is [op, [args]] with op one of neg, %s"
                      % ", ".join(sorted(_FLOAT_OPS)))
        args = []
        for i, a in enumerate(self.lst(parts[1])):
            with self.at(i):
                a = self.value(a)
                if type(a) not in (int, float, Expr, FloatExpr):
                    self.fail("a float expression's argument is a number, a size or a "
                              "float expression")
                args.append(a)
        if len(args) != (1 if parts[0] == "neg" else 2):
            self.fail("%s takes %d arguments" % (parts[0], 1 if parts[0] == "neg" else 2))
        if parts[0] == "pow" and type(args[0]) in (int, Expr) and not (
                type(args[1]) in (float, FloatExpr) or
                (type(args[1]) is int and abs(args[1]) <= 64)):
            # integer powers are exact Python ints: a huge exponent would never finish
            self.fail("an integer power's exponent is a float or an int in [-64, 64]")
        return FloatExpr(parts[0], tuple(args))

    def _tag_generator(self, tag, body, nodes):
        if body not in _GENERATOR_CLASSES:
            self.fail("a generator is 'Generator' or 'RandomState'")
        return _GeneratorSlot(body)

    def array(self, v):
        if isinstance(v, dict) and "offset" in v:
            return self.stored_array(v)
        self.obj(v, ("dtype", "shape", "data"), ("strides", "align"))
        dt = self.dtype(v["dtype"])
        shape = self.shape(v["shape"])
        try:
            raw = base64.b64decode(self.text(v["data"]), validate=True)
        except (ValueError, TypeError):
            self.fail("array data is not valid base64")
        if "strides" in v:
            strides, align = self.strides_align(v, shape)
            n = layout.covered_elements(shape, strides)
            if n == 0 or len(raw) != n * dt.itemsize:
                self.fail("array data has %d bytes; its layout covers %d elements of %s"
                          % (len(raw), n, dt))
            return layout.rebuild(raw, dt, tuple(shape), strides, align)
        n = math.prod(shape)
        if len(raw) != n * dt.itemsize:
            self.fail("array data has %d bytes; shape %s of %s needs %d"
                      % (len(raw), tuple(shape), dt, n * dt.itemsize))
        if n == 0:
            return np.zeros(shape, dt)
        # C order on a 64-byte boundary: the layout a plain saved array stands for
        return layout.rebuild(raw, dt, tuple(shape), layout.c_strides(shape), 0)

    def shape(self, v) -> list:
        shape = self.lst(v)
        if len(shape) > 64:
            self.fail("an array has at most 64 axes, this one has %d" % len(shape))
        for s in shape:
            if type(s) is not int or s < 0:
                self.fail("array sizes are non-negative integers")
        return shape

    def strides_align(self, v, shape) -> Tuple[list, int]:
        strides = self.lst(v["strides"])
        align = v.get("align", 0)
        if len(strides) != len(shape) or any(type(s) is not int or s < 0 or s > 2 ** 40
                                              for s in strides):
            self.fail("array strides are one non-negative integer per axis")
        if type(align) is not int or not 0 <= align < layout.ALIGN:
            self.fail("array alignment is an integer in [0, %d)" % layout.ALIGN)
        return strides, align

    def stored_array(self, v) -> _Pending:
        """An array in the archive's data section; its bytes are checked against the file
        once the whole program is valid (_Store.fill)."""
        self.obj(v, ("dtype", "shape", "offset", "nbytes", "checksum"), ("strides", "align"))
        dt = self.dtype(v["dtype"])
        shape = self.shape(v["shape"])
        if not self.in_archive:
            self.fail("the array refers to the data section of an archive, but this file is "
                      "JSON text, not an archive")
        offset, nbytes = v["offset"], v["nbytes"]
        if type(offset) is not int or offset < 0:
            self.fail("offset is a non-negative integer")
        if type(nbytes) is not int or nbytes < 0:
            self.fail("nbytes is a non-negative integer")
        if not archive.checksum_ok(v["checksum"]):
            self.fail("checksum %s is not '%s:' and 32 hex digits"
                      % (_short(v["checksum"]), archive.CHECKSUM))
        if "strides" in v:
            strides, align = self.strides_align(v, shape)
            n = layout.covered_elements(shape, strides)
        else:
            strides, align = layout.c_strides(shape), 0
            n = math.prod(shape)
        if nbytes != n * dt.itemsize:
            self.fail("the array has %d bytes, but shape %s of %s needs %d"
                      % (nbytes, tuple(shape), dt, n * dt.itemsize))
        if offset % layout.ALIGN != align:
            self.fail("offset %d is not at the array's alignment offset %d (mod %d)"
                      % (offset, align, layout.ALIGN))
        return _Pending(dt, tuple(shape), strides, align, offset, nbytes, v["checksum"])

    def frame(self, v) -> Optional[SavedFrame]:
        if v is None:
            return None
        self.obj(v, ("file", "line", "function", "code"))
        return _saved_frame(self.text(v["file"]), self.integer(v["line"]),
                            self.text(v["function"]), self.text(v["code"]))

    # graphs -------------------------------------------------------------------------
    def graph(self, v, top: bool = False) -> Graph:
        self.obj(v, ("nodes", "outputs", "out_spec"))
        g = Graph()
        nodes: Dict[str, Node] = {}
        with self.at("nodes"):
            for i, nv in enumerate(self.lst(v["nodes"])):
                with self.at(i):
                    n = self.node(nv, nodes)
                if n.name in nodes:
                    self.fail("two nodes are named %r" % n.name)
                nodes[n.name] = n
                g.nodes.append(n)
                _reserve(g, n.name)
        with self.at("outputs"):
            outs = []
            for i, o in enumerate(self.lst(v["outputs"])):
                with self.at(i):
                    val = self.value(o, nodes)
                    if isinstance(val, (IndexAttr, slice, np.dtype, Subgraph, CondExpr)):
                        self.fail("an output is a node, a size or a Python scalar")
                    outs.append(val)
        g.outputs = outs
        with self.at("out_spec"):
            g.out_spec = self.spec(v["out_spec"])
        if pytree.count_leaves(g.out_spec) != len(g.outputs):
            self.fail("out_spec has %d leaves but there are %d outputs"
                      % (pytree.count_leaves(g.out_spec), len(g.outputs)))
        g._decoded_nodes = nodes
        return g

    def spec(self, v):
        if v is None:
            return ("leaf",)
        self.expect(v, dict, "an output structure")
        if len(v) != 1:
            self.fail("an output structure has one key")
        (kind, body), = v.items()
        if kind == "dict":
            keys, children = [], []
            for i, pair in enumerate(self.lst(body)):
                with self.at(i):
                    pair = self.lst(pair)
                    if len(pair) != 2:
                        self.fail("a dict entry is [key, structure]")
                    k = self.value(pair[0])
                    try:
                        hash(k)
                    except TypeError:
                        self.fail("unhashable dict key")
                    keys.append(k)
                    children.append(self.spec(pair[1]))
            return ("dict", tuple(keys), tuple(children))
        if kind == "namedtuple":
            return self.named_spec(body)
        if kind not in ("tuple", "list"):
            self.fail("unknown container %s" % _short(kind))
        out = []
        for i, c in enumerate(self.lst(body)):
            with self.at(i):
                out.append(self.spec(c))
        return (kind, tuple(out))

    def named_spec(self, body):
        """``["SVDResult", [children]]``: the name resolves only among NumPy's own result
        types (``symshape.named_results``), never by importing what the file names."""
        body = self.lst(body)
        if len(body) != 2:
            self.fail("a named-tuple structure is [type name, [structures]]")
        name, children = body
        t = named_results.resolve(name)
        if t is None:
            self.fail("unknown result type %s (known: %s)"
                      % (_short(name), ", ".join(sorted(named_results.by_name()))))
        out = []
        with self.at(1):
            for i, c in enumerate(self.lst(children)):
                with self.at(i):
                    out.append(self.spec(c))
        if len(out) != len(t._fields):
            self.fail("%s has %d fields (%s), the structure lists %d"
                      % (name, len(t._fields), ", ".join(t._fields), len(out)))
        return ("namedtuple", name, tuple(out))

    def node(self, v, nodes: Dict[str, Node]) -> Node:
        self.obj(v, ("name", "op", "inputs", "attrs", "dtype", "shape", "source"),
                 ("meta", "value"))
        name = self.name(v["name"], "a node name")
        op = self.text(v["op"], "an op name")
        # inputs are named after the function's parameters; other nodes avoid the names
        # generated code relies on
        if name.startswith("_") or (name in RESERVED and op != "input") or \
                name in ("np", "_rt", "_ndarray"):
            self.fail("node name %r is reserved" % name)
        _ensure_op(op, self)
        with self.at(name):
            with self.at("inputs"):
                inputs = []
                for i, x in enumerate(self.lst(v["inputs"])):
                    with self.at(i):
                        inputs.append(self.value(x, nodes))
            with self.at("attrs"):
                attrs = {}
                self.expect(v["attrs"], dict, "an object")
                for k, x in v["attrs"].items():
                    if not _is_name(k):
                        self.fail("attribute name %s is not a Python identifier" % _short(k))
                    with self.at(k):
                        if k == "fn" and "::" in op:
                            attrs[k] = self.custom_fn(x, op)
                        else:
                            attrs[k] = self.value(x, nodes)
                if "::" in op:
                    self.custom_attrs(op, attrs, len(inputs))
                if isinstance(attrs.get("source"), _GeneratorSlot):
                    attrs["source"] = _state_generator(attrs["source"].kind,
                                                       attrs.get("path"), self.source)
            wrong = node_check.problem(op, tuple(inputs), attrs)
            if wrong is not None:
                self.fail("node %r (op %s): %s" % (name, op, wrong))
            with self.at("dtype"):
                dtype = None if v["dtype"] is None else self.dtype(v["dtype"], True)
            with self.at("shape"):
                shape = None
                if v["shape"] is not None:
                    shape = []
                    for i, s in enumerate(self.lst(v["shape"])):
                        with self.at(i):
                            d = self.value(s)
                            if type(d) is int and d < 0 or type(d) not in (int, Expr):
                                self.fail("a size is a non-negative int or a size expression")
                            shape.append(d)
                    shape = tuple(shape)
            with self.at("source"):
                frame = self.frame(v["source"])
            n = Node(name, op, tuple(inputs), attrs, dtype, shape, frame)
            if op == "input":
                if not isinstance(attrs.get("path"), str):
                    self.fail("an input node needs a 'path' attribute")
            if op == "constant":
                if "value" not in v:
                    self.fail("a constant node needs its 'value'")
                if not isinstance(attrs.get("target"), str):
                    self.fail("a constant node needs a 'target' attribute")
                with self.at("value"):
                    arr = self.array(v["value"])
                if dtype != arr.dtype or shape != tuple(arr.shape):
                    self.fail("the constant's data (%s%s) does not match the node (%s%s)"
                              % (arr.dtype, tuple(arr.shape), dtype, shape))
                n.meta["value"] = arr
                if isinstance(arr, _Pending):
                    self.pending.append((n, arr))
            elif "value" in v:
                self.fail("only constant nodes carry a 'value'")
            if "meta" in v:
                with self.at("meta"):
                    self.meta(v["meta"], n)
        return n

    def meta(self, v, n: Node) -> None:
        self.obj(v, (), _NODE_META)
        if "binds" in v:
            binds = []
            for pair in self.lst(v["binds"]):
                pair = self.lst(pair)
                if len(pair) != 2:
                    self.fail("a binding is [symbol, axis]")
                s = self.sym(pair[0])
                axis = self.integer(pair[1])
                if n.shape is None or not 0 <= axis < len(n.shape):
                    self.fail("binding axis %d is out of range" % axis)
                binds.append((s, axis))
            n.meta["binds"] = binds
        if "binds_value" in v:
            n.meta["binds_value"] = self.sym(v["binds_value"])

    def custom_fn(self, v, op: str):
        self.obj(v, ("custom_op",), ("mutates_args",))
        if v["custom_op"] != op:
            self.fail("the node calls custom op %s but is labelled %s"
                      % (_short(v["custom_op"]), op))
        got = lookup(op)
        want = tuple(v.get("mutates_args", ()))
        if tuple(got.mutates_args) != want:
            self.fail("custom op %r was saved with mutates_args=%r, but the op registered in "
                      "this process has mutates_args=%r" % (op, want, tuple(got.mutates_args)))
        return got.runtime

    def custom_attrs(self, op: str, attrs: dict, n_inputs: int) -> None:
        params = attrs.get("params")
        if "fn" not in attrs or type(params) is not tuple:
            self.fail("a custom op node needs 'fn' and 'params' attributes")
        if len(params) != n_inputs:
            self.fail("'params' has %d entries for %d inputs" % (len(params), n_inputs))
        for p in params:
            if not (p == "" or p == "*" or _is_name(p)):
                self.fail("bad call slot %s" % _short(p))

    def subgraph(self, v):
        self.obj(v, ("name", "inputs", "checks", "graph"))
        name = self.name(v["name"], "a subgraph name")
        if name.startswith("_") or name in RESERVED:
            self.fail("subgraph name %r is reserved" % name)
        with self.at("graph"):
            g = self.graph(v["graph"])
        nodes = g._decoded_nodes
        inputs = []
        for x in self.lst(v["inputs"]):
            n = nodes.get(self.text(x))
            if n is None or n.op != "input":
                self.fail("subgraph input %s is not an input node of the subgraph" % _short(x))
            inputs.append(n)
        checks = []
        for pair in self.lst(v["checks"]):
            pair = self.lst(pair)
            if len(pair) != 2:
                self.fail("a check is [condition, text]")
            checks.append((self.cond(pair[0]), self.text(pair[1])))
        g.lifted = []
        return Subgraph(name, g, inputs, checks)

    # program ------------------------------------------------------------------------
    def constraints(self, v, input_nodes: List[Node]) -> ConstraintSet:
        def descs(items: list) -> list:
            if len(items) != len(input_nodes):
                self.fail("%d input descriptions for %d input nodes"
                          % (len(items), len(input_nodes)))
            out = []
            for i, (e, node) in enumerate(zip(items, input_nodes)):
                with self.at(i):
                    out.append(self.input_desc(e, node))
            return out
        return saved.decode(v, self, descs, SavedDefault)

    def input_desc(self, e, node: Node) -> InputDesc:
        self.expect(e, dict, "an object")
        kind = e.get("kind")
        path = self.text(e.get("path"), "an input path")
        place = _check_path(path, self)
        if node.attrs.get("path") != path:
            self.fail("input path %r does not match the graph's input node %s (path %r)"
                      % (path, node.name, node.attrs.get("path")))
        if kind == "array":
            self.obj(e, ("path", "kind", "dims", "dtype"))
            dims = []
            for d in self.lst(e["dims"]):
                x = self.value(d)
                if type(x) is int and x < 0 or type(x) not in (int, Expr):
                    self.fail("a dim is a non-negative int or a size expression")
                dims.append(x)
            if node.shape is None or len(node.shape) != len(dims):
                self.fail("input %s has rank %d, but its node has shape %s"
                          % (path, len(dims), node.shape))
            return InputDesc(path, place, dims=tuple(dims), dtype=self.dtype(e["dtype"]))
        if kind == "symint":
            self.obj(e, ("path", "kind", "sym"))
            s = self.value(e["sym"])
            if type(s) not in (int, Expr):
                self.fail("a symbolic int input needs a size expression")
            return InputDesc(path, place, sym=s)
        if kind == "generator":
            # a random generator argument: only NumPy's own two classes, never a name
            # that would import anything
            self.obj(e, ("path", "kind", "class"))
            cls = _GENERATOR_CLASSES.get(e["class"]) if isinstance(e["class"], str) else None
            if cls is None or node.attrs.get("generator") != e["class"]:
                self.fail("a generator input is a 'Generator' or 'RandomState' matching its "
                          "node")
            return InputDesc(path, place, value=OfClass(cls))
        if kind == "scalar":
            self.obj(e, ("path", "kind", "value"))
            val = self.value(e["value"])
            if not (val is None or isinstance(val, (bool, int, float, complex, str,
                                                     np.generic))):
                self.fail("a specialized input is a Python or NumPy scalar")
            return InputDesc(path, place, value=val)
        self.fail("unknown input kind %s" % _short(kind))

    def call_signature(self, v) -> Optional[inspect.Signature]:
        if v is None:
            return None
        params = []
        for i, p in enumerate(self.lst(v)):
            with self.at(i):
                self.obj(p, ("name", "kind"), ("default",))
                name = self.name(p["name"], "a parameter name")
                kind = _PARAM_KINDS.get(p["kind"])
                if kind is None:
                    self.fail("unknown parameter kind %s" % _short(p["kind"]))
                if "default" in p and not _plain_json(p["default"]):
                    self.fail("a parameter default is null, a bool, a number or a string")
                params.append((name, kind, p.get("default", inspect.Parameter.empty)))
        # a default that could not be stored made its parameter required: then earlier
        # positional parameters cannot keep theirs
        last_required = max([i for i, (_, k, d) in enumerate(params)
                             if d is inspect.Parameter.empty and
                             k in (inspect.Parameter.POSITIONAL_ONLY,
                                   inspect.Parameter.POSITIONAL_OR_KEYWORD)], default=-1)
        out = []
        for i, (name, kind, d) in enumerate(params):
            if i < last_required and kind in (inspect.Parameter.POSITIONAL_ONLY,
                                              inspect.Parameter.POSITIONAL_OR_KEYWORD):
                d = inspect.Parameter.empty
            out.append(inspect.Parameter(name, kind, default=d))
        try:
            return inspect.Signature(out)
        except ValueError as e:
            self.fail("invalid call signature: %s" % e)

    def signature(self, v, graph: Graph):
        self.obj(v, ("inputs", "outputs"))
        nodes = {n.name: n for n in graph.nodes}
        sig = Signature.__new__(Signature)
        sig.input_specs = []
        for i, s in enumerate(self.lst(v["inputs"])):
            with self.at("inputs"), self.at(i):
                self.obj(s, ("kind", "name", "target", "path"))
                n = nodes.get(s["name"])
                if s["kind"] in ("CONSTANT", "STATE"):
                    if n is None or n.op != "constant" or s["target"] != n.attrs["target"]:
                        self.fail("constant %s is not a constant node of the graph"
                                  % _short(s["name"]))
                    if s["path"] is not None:
                        n.meta["state"] = s["path"]
                elif s["kind"] == "USER_INPUT":
                    if n is None or n.op != "input":
                        self.fail("user input %s is not an input node of the graph"
                                  % _short(s["name"]))
                else:
                    self.fail("unknown input kind %s" % _short(s["kind"]))
                for k in ("target", "path"):
                    if s[k] is not None:
                        self.text(s[k])
                sig.input_specs.append(InputSpec(s["kind"], s["name"], s["target"], s["path"]))
        sig.output_specs = []
        for i, s in enumerate(self.lst(v["outputs"])):
            with self.at("outputs"), self.at(i):
                self.obj(s, ("kind", "name", "target"), ("mutation",))
                self.text(s["name"])
                rebind = s.get("mutation") == "rebind"
                if "mutation" in s and not rebind:
                    self.fail("unknown mutation kind %s" % _short(s["mutation"]))
                if rebind:
                    if s["kind"] != "STATE_MUTATION" or not isinstance(s["target"], str):
                        self.fail("a rebind is a STATE_MUTATION with a path")
                elif s["kind"] == "USER_INPUT_MUTATION":
                    final = nodes.get(s["name"])
                    target = nodes.get(s["target"]) if isinstance(s["target"], str) else None
                    if final is None or target is None or target.op != "input":
                        self.fail("input mutation %s -> %s does not name graph nodes"
                                  % (_short(s["name"]), _short(s["target"])))
                elif s["kind"] == "STATE_MUTATION":
                    final = nodes.get(s["name"])
                    state = [n for n in graph.constants if n.attrs["target"] == s["target"]]
                    if final is None or len(state) != 1:
                        self.fail("state mutation %s -> %s does not name graph nodes"
                                  % (_short(s["name"]), _short(s["target"])))
                elif s["kind"] != "USER_OUTPUT":
                    self.fail("unknown output kind %s" % _short(s["kind"]))
                elif s["target"] is not None:
                    self.fail("a user output has no target")
                sig.output_specs.append(OutputSpec(s["kind"], s["name"], s["target"],
                                                   "rebind" if rebind else None))
        consts = [s.name for s in sig.input_specs if s.kind in ("CONSTANT", "STATE")]
        if consts != [n.name for n in graph.constants]:
            self.fail("the signature's constants do not match the graph's constant nodes")
        users = [s.name for s in sig.input_specs if s.kind == "USER_INPUT"]
        if users != [n.name for n in graph.inputs]:
            self.fail("the signature's user inputs do not match the graph's input nodes")
        return sig

    def program(self, v):
        self.obj(v, ("name", "call_signature", "graph", "signature", "constraints"),
                 ("state",))
        name = self.text(v["name"], "the program name")
        with self.at("call_signature"):
            call_sig = self.call_signature(v["call_signature"])
        with self.at("graph"):
            graph = self.graph(v["graph"], top=True)
        if call_sig is not None:
            for p in call_sig.parameters:
                _reserve(graph, p)
        with self.at("signature"):
            sig = self.signature(v["signature"], graph)
        with self.at("constraints"):
            cs = self.constraints(v["constraints"], graph.inputs)
        params = set(call_sig.parameters) if call_sig is not None else None
        for d in cs.inputs:
            root = re.match(r"^[A-Za-z_][A-Za-z0-9_]*", d.path).group(0)
            if params is not None and root not in params:
                self.where = ["program", "constraints", "inputs"]
                self.fail("input %s is reached from %r, which is not a parameter of the call "
                          "signature" % (d.path, root))
        missing = sorted((s for s in self.used_syms if s not in cs.ranges), key=lambda s: s.key)
        if missing:
            self.where = ["program", "constraints", "ranges"]
            self.fail("size symbol %s is used but has no range" % missing[0].name)
        if getattr(cs, "configured", None) and call_sig is not None:
            # the parameter keeps a default that stands for the one the program was exported
            # with: leaving it out works, passing anything else is refused
            if not set(cs.configured) <= set(call_sig.parameters):
                self.where = ["program", "constraints", "configured"]
                self.fail("a configured parameter is not a parameter of the call signature")
            call_sig = call_sig.replace(parameters=[
                p.replace(default=cs.configured[p.name]) if p.name in cs.configured else p
                for p in call_sig.parameters.values()])
        state = None
        if "state" in v:
            with self.at("state"):
                try:
                    state = statesave.decode(self.obj(v["state"], (
                        "arrays", "guards", "effects", "slots", "arg_roots", "initial")),
                        {n.name: n for n in graph.nodes},
                        lambda x: self.value(x, {n.name: n for n in graph.nodes}))
                except (ValueError, TypeError, KeyError, IndexError, UserError) as e:
                    self.fail("invalid state record (%s)" % _short(str(e)))
        _forget_decoded(graph)
        ep = ExportedProgram(graph, sig, cs, call_sig, name, None)
        ep.state_program = state
        return ep


#: value tag -> the _Dec method reading its body (``value``)
_VALUE_TAGS = {
    "tuple": _Dec._tag_tuple_list,
    "list": _Dec._tag_tuple_list,
    "expr": _Dec._tag_expr,
    "node": _Dec._tag_node,
    "float": _Dec._tag_float,
    "complex": _Dec._tag_complex,
    "slice": _Dec._tag_slice,
    "index": _Dec._tag_index,
    "ellipsis": _Dec._tag_ellipsis,
    "dtype": _Dec._tag_dtype,
    "scalar": _Dec._tag_scalar,
    "subgraph": _Dec._tag_subgraph,
    "cond_expr": _Dec._tag_cond_expr,
    "ufunc": _Dec._tag_ufunc,
    "float_expr": _Dec._tag_float_expr,
    "generator": _Dec._tag_generator,
}


def _forget_decoded(g: Graph) -> None:
    g.__dict__.pop("_decoded_nodes", None)
    for n in g.nodes:
        for v in n.attrs.values():
            if isinstance(v, Subgraph):
                _forget_decoded(v.graph)


def _reserve(g: Graph, name: str) -> None:
    """Keep later ``fresh_name`` calls (e.g. run_decompositions) away from ``name``."""
    g._names[name] = max(g._names.get(name, 0), 1)
    m = re.match(r"^(.*)_([0-9]+)$", name)
    if m:
        g._names[m.group(1)] = max(g._names.get(m.group(1), 0), int(m.group(2)) + 1)


def _check_path(path: str, dec: _Dec) -> tuple:
    """An input path is ``name`` followed by ``[int]`` / ``['str']`` subscripts; returns
    ``(name, keys)``."""
    try:
        node = ast.parse(path, mode="eval").body
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        dec.fail("malformed input path %s" % _short(path))
    keys = []
    while isinstance(node, ast.Subscript):
        k = node.slice
        if not isinstance(k, ast.Constant) or type(k.value) not in (int, str):
            dec.fail("malformed input path %s" % _short(path))
        keys.append(k.value)
        node = node.value
    if not isinstance(node, ast.Name) or not _is_name(node.id):
        dec.fail("malformed input path %s" % _short(path))
    canonical = node.id + "".join("[%r]" % k for k in reversed(keys))
    if canonical != path:
        dec.fail("input path %s is not in canonical form (%s)" % (_short(path), canonical))
    return node.id, tuple(reversed(keys))


def ensure_op(name: str) -> bool:
    """Make sure the op table has ``name`` (NumPy ufunc ops are registered on first use)."""
    if name in ("input", "constant") or name in OPS:
        return True
    if "::" in name:
        return False
    # NumPy's own namespace only: a crafted name (``object``, ``float_``) must not reach
    # numpy's module __getattr__, which warns from inside symshape about deprecated names
    u = vars(np).get(name)
    if isinstance(u, np.ufunc) and u.__name__ == name and u.signature is None:
        elementwise._ensure_ufunc_op(u)
        return True
    m = re.match(r"^([a-z0-9_]+)_([0-9]+)$", name)
    if m:
        u = vars(np).get(m.group(1))
        i = int(m.group(2))
        if isinstance(u, np.ufunc) and u.__name__ == m.group(1) and i < u.nout and u.nout > 1:
            elementwise._SEEN.add(name)
            defop(name, "np.%s(*{inputs})[%d]" % (u.__name__, i),
                  doc="output %d of np.%s" % (i, u.__name__))
            return True
    return False


def _ensure_op(name: str, dec: _Dec) -> None:
    if ensure_op(name):
        return
    if "::" in name:
        raise UserError(
            "ss.load(%s): the program uses the custom op %r, which is not registered in this "
            "process. Define it (or import the module that does) before loading:\n"
            "    @ss.custom_op(%r)\n    def ...\n    @....register_fake\n    def ..."
            % (dec.source, name, name))
    dec.fail("unknown op %s (not in the op table of this symshape)" % _short(name))


def _jtype(v) -> str:
    if v is None:
        return "null"
    if isinstance(v, bool):
        return "a boolean"
    if isinstance(v, (int, float)):
        return "a number"
    if isinstance(v, str):
        return "a string"
    if isinstance(v, list):
        return "an array"
    if isinstance(v, dict):
        return "an object"
    return type(v).__name__


def _short(v) -> str:
    text = repr(v)
    return text if len(text) <= 60 else text[:57] + "..."


def _reject_constant(name: str):
    raise _Bad("%s is not valid JSON (only finite numbers are allowed)" % name)


def loads(text: str, source: str = "<string>"):
    """The ExportedProgram in ``text`` (the content of a saved JSON text file)."""
    return _decode(_parse(text, source), source)


def _parse(text: str, source: str) -> dict:
    """The checked top-level document: format, version and checksum."""
    what = "ss.load(%s)" % source
    try:
        doc = json.loads(text, parse_constant=_reject_constant)
    except json.JSONDecodeError as e:
        raise UserError("%s: the file is not valid JSON: %s" % (what, e)) from None
    except _Bad as e:
        raise UserError("%s: %s" % (what, e)) from None
    except RecursionError:
        raise UserError("%s: the file nests lists or objects too deeply to be a saved "
                        "program" % what) from None
    except ValueError as e:        # e.g. an integer with thousands of digits
        raise UserError("%s: the file is not a saved program: %s" % (what, e)) from None
    if not isinstance(doc, dict) or doc.get("format") != FORMAT:
        raise UserError("%s: not a saved symshape program (the top-level object must have "
                        "\"format\": %r)" % (what, FORMAT))
    version = doc.get("version")
    if type(version) is not int or version < 1:
        raise UserError("%s: invalid format version %s" % (what, _short(version)))
    if version > VERSION:
        raise UserError("%s: the file has format version %d, newer than this symshape "
                        "supports (up to %d); upgrade symshape to load it"
                        % (what, version, VERSION))
    extra = sorted(set(doc) - {"format", "version", "checksum", "program"})
    if extra:
        raise UserError("%s: unexpected top-level key %r" % (what, extra[0]))
    if "program" not in doc or "checksum" not in doc:
        raise UserError("%s: the file has no %s" % (
            what, "'program'" if "program" not in doc else "'checksum'"))
    try:
        got = _digest(doc["program"])
    except (TypeError, ValueError) as e:
        raise UserError("%s: the program is not plain JSON data: %s" % (what, e)) from None
    if doc["checksum"] != got:
        raise UserError("%s: checksum mismatch: the file says %s but its program hashes to %s; "
                        "the file was modified or damaged after it was saved"
                        % (what, _short(doc["checksum"]), got))
    return doc


def _decode(doc: dict, source: str, store: Optional["_Store"] = None):
    """The program of a checked document; ``store`` gives the arrays of an archive."""
    what = "ss.load(%s)" % source
    dec = _Dec(source, store is not None)
    try:
        ep = dec.program(doc["program"])
    except _Bad as e:
        raise UserError("%s: invalid program: %s" % (what, e)) from None
    except (RecursionError, MemoryError, OverflowError, ValueError, TypeError, KeyError,
            IndexError, AttributeError) as e:
        # every field is validated above; this is the net under that validation, so that a
        # crafted file can only ever give a UserError
        raise UserError("%s: invalid program (%s: %s)" % (what, type(e).__name__,
                                                          _short(str(e)))) from None
    if store is not None:
        store.fill(ep, dec.pending, what)
    ep._loaded = True
    if ep.state_program is not None:        # the loaded program's own store of its state
        ep.state_program.scope = statesave.store_scope(ep.state_program)
    # the generated code must build (it is made from the validated graph, nothing else)
    try:
        ep._build()
    except UserError as e:
        raise UserError("%s: invalid program: %s" % (what, e)) from None
    except Exception as e:
        raise UserError("%s: invalid program: it does not compile (%s: %s)"
                        % (what, type(e).__name__, e)) from None
    return ep


class _Store:
    """The arrays of an opened archive: read into memory, or mapped (``mmap_mode``)."""

    def __init__(self, arc: "archive.Archive", fh, mmap_mode: Optional[str],
                 verify: bool) -> None:
        self.archive, self.fh, self.mmap_mode, self.verify = arc, fh, mmap_mode, verify
        self._map = None
        self._sum: Optional[str] = None

    def fill(self, ep, pending: List[Tuple[Node, _Pending]], what: str) -> None:
        """Give every constant node its array (the program is valid by now)."""
        try:
            self.archive.check_spans([(p.offset, p.nbytes, _label(n)) for n, p in pending])
        except archive.BadArchive as e:
            raise UserError("%s: not a valid saved program archive: %s" % (what, e)) from None
        written = {s.target for s in ep.graph_signature.output_specs
                   if s.kind == "STATE_MUTATION"}
        for node, p in pending:
            mode = self.mmap_mode
            if mode == "r" and node.attrs["target"] in written:
                mode = None     # read-only map: state the program writes lives in memory
            self._sum = None        # set by a read that summed the bytes as it went
            try:
                buf = self._bytes(p, mode)
            except archive.BadArchive as e:
                raise UserError("%s: %s: %s" % (what, _label(node), e)) from None
            except (OSError, ValueError) as e:
                raise UserError("%s: cannot read %s: %s" % (what, _label(node), e)) from None
            if self.verify and (self._sum or archive.blocksum(buf)) != p.checksum:
                raise UserError(
                    "%s: the data of %s does not match its checksum: the file was modified "
                    "or damaged after it was saved. (A program loaded with mmap_mode='r+' "
                    "writes its state into the file: load such a file with verify=False, or "
                    "save the program again with ss.save.)" % (what, _label(node)))
            node.meta["value"] = layout.place(buf, p.dtype, p.shape, p.strides)

    def _bytes(self, p: _Pending, mode: Optional[str]) -> np.ndarray:
        """The array's bytes: mapped, or read into memory at the saved alignment offset
        (in a mapping they are there already: the file placed them so)."""
        if mode is not None:
            if self._map is None:
                self._map = archive.open_map(self.fh, mode)
            return self.archive.mapped(self._map, p.offset, p.nbytes)
        buf = archive.aligned_empty(p.nbytes, p.align)
        self._sum = self.archive.read_into(p.offset, buf, summing=self.verify)
        return buf


def _label(node: Node) -> str:
    path = node.meta.get("state")
    return "state %r" % path if path else "constant %r" % node.attrs.get("target")


def load(path, *, mmap_mode: Optional[str] = None, verify: Optional[bool] = None,
         generators: Optional[dict] = None):
    """``generators``: path -> ``Generator`` / ``RandomState`` for the generators a saved
    program drew from as model state (``{"self.rng": np.random.default_rng(0)}``); the ones
    not given are fresh and unseeded."""
    if generators is not None and not isinstance(generators, dict):
        raise UserError("ss.load: generators must be a dict of path -> generator")
    token = _LOAD_GENERATORS.set(dict(generators or {}))
    seen = _LOAD_SEEN.set(set())
    try:
        ep = _load(path, mmap_mode=mmap_mode, verify=verify)
        unknown = sorted(map(str, set(generators or {}) - _LOAD_SEEN.get()))
        if unknown:
            valid = sorted(_LOAD_SEEN.get())
            raise UserError("ss.load: generators names %s, which the program does not draw "
                            "from; %s" % (", ".join(map(repr, unknown)),
                                          "its generators are at %s" % ", ".join(
                                              map(repr, valid)) if valid else
                                          "it draws from no generator held as state"))
        return ep
    finally:
        _LOAD_GENERATORS.reset(token)
        _LOAD_SEEN.reset(seen)


def _load(path, *, mmap_mode: Optional[str] = None, verify: Optional[bool] = None):
    """The ExportedProgram saved at ``path`` (a file name, or a binary or text file object).

    ``mmap_mode`` maps the arrays of an archive from disk instead of reading them, so a
    program larger than memory opens at once and pages in what it touches:
    ``'r'`` maps them read-only (state the program writes is read into memory, so
    ``module()`` still writes it in place; the file never changes), ``'r+'`` maps them
    writable and ``module()``'s state writes go to the file, ``'c'`` (copy on write) maps
    them and state writes stay in this process's memory.  ``verify`` checks every array
    against its block checksum (default: on when reading, off when mapping, where it would
    read the whole file).  The program text is always checked against its SHA-256."""
    if mmap_mode not in MMAP_MODES:
        raise UserError("ss.load: mmap_mode must be None, 'r', 'r+' or 'c', got %s"
                        % _short(mmap_mode))
    if verify is None:
        verify = mmap_mode is None
    if hasattr(path, "read"):
        source = repr(getattr(path, "name", "<file>"))
        if mmap_mode is not None:
            raise UserError("ss.load(%s): mmap_mode needs a file name; a file object cannot be "
                            "mapped" % source)
        if _is_text_stream(path):
            return loads(path.read(), source)
        fh = path
        if not (hasattr(fh, "seekable") and fh.seekable()) or fh.tell() != 0:
            fh = io.BytesIO(fh.read())      # offsets in the file count from its start
        head = fh.read(len(archive.MAGIC))
        fh.seek(0)
        if archive.is_archive(head):
            return _load_archive(fh, source, None, verify)
        return _load_json_bytes(fh.read(), source, None)
    p = os.fspath(path)
    source = repr(p)
    try:
        fh = open(p, "r+b" if mmap_mode == "r+" else "rb")
    except PermissionError as e:
        if mmap_mode != "r+":
            raise
        raise UserError("ss.load(%s, mmap_mode='r+'): the file cannot be opened for writing "
                        "(%s); use mmap_mode='c' to keep state writes in memory"
                        % (source, e.strerror)) from None
    with fh:
        head = fh.read(len(archive.MAGIC))
        if archive.is_archive(head):
            fh.seek(0)
            return _load_archive(fh, source, mmap_mode, verify)
        data = head + fh.read()
    return _load_json_bytes(data, source, mmap_mode)


def _load_json_bytes(data: bytes, source: str, mmap_mode: Optional[str]):
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as e:
        raise UserError("ss.load(%s): the file is not a saved archive and not UTF-8 text, so "
                        "not a saved program (%s)" % (source, e)) from None
    if mmap_mode is not None:
        warnings.warn("ss.load(%s): mmap_mode=%r has no effect on a JSON text file (its arrays "
                      "are inline text, read into memory); save the program again with "
                      "ss.save to get an archive whose arrays can be mapped"
                      % (source, mmap_mode), UserWarning, stacklevel=4)
    return loads(text, source)


def _load_archive(fh, source: str, mmap_mode: Optional[str], verify: bool):
    what = "ss.load(%s)" % source
    try:
        arc = archive.Archive(fh)
    except archive.BadArchive as e:
        raise UserError("%s: not a valid saved program archive: %s" % (what, e)) from None
    except OSError as e:
        raise UserError("%s: cannot read the archive: %s" % (what, e)) from None
    try:
        text = arc.text.decode("utf-8")
    except UnicodeDecodeError as e:
        raise UserError("%s: the archive's program text is not UTF-8 (%s)"
                        % (what, e)) from None
    doc = _parse(text, source)
    return _decode(doc, source, _Store(arc, fh, mmap_mode, verify))


class SavedDefault:
    """A loaded program's stand-in for a function or object default it was exported with."""

    __slots__ = ("label",)

    def __init__(self, label: str) -> None:
        self.label = label

    def __repr__(self) -> str:
        return self.label


def configured_label(default) -> str:
    """How a configured default is named in a saved file (never its code)."""
    if isinstance(default, SavedDefault):
        return default.label
    mod = getattr(default, "__module__", None)
    name = getattr(default, "__qualname__", None) or getattr(default, "__name__", None)
    if isinstance(name, str):
        return "%s.%s" % (mod, name) if isinstance(mod, str) else name
    return "<%s object>" % type(default).__name__


_GENERATOR_CLASSES = {"Generator": np.random.Generator, "RandomState": np.random.RandomState}


class _GeneratorSlot:
    """A saved draw's generator, before the loader binds it to a live one."""

    __slots__ = ("kind",)

    def __init__(self, kind: str) -> None:
        self.kind = kind


def _generator_kind(v) -> str:
    return "RandomState" if isinstance(v, np.random.RandomState) else "Generator"


# path -> generator, given to ss.load(generators=...) for the duration of one load
_LOAD_GENERATORS: "contextvars.ContextVar[dict]" = contextvars.ContextVar(
    "symshape_load_generators", default={})
# the generator paths the program being loaded draws from (to refuse unknown names)
_LOAD_SEEN: "contextvars.ContextVar[set]" = contextvars.ContextVar("symshape_load_seen")


def _state_generator(kind: str, path, source: str):
    """The generator a loaded program draws from for the state at ``path``: the caller's
    (ss.load(..., generators={path: rng})), else a fresh, unseeded one."""
    given = _LOAD_GENERATORS.get()
    if isinstance(path, str):
        _LOAD_SEEN.get(set()).add(path)
    gen = given.get(path) if isinstance(path, str) else None
    if gen is None:
        return np.random.RandomState() if kind == "RandomState" else np.random.default_rng()
    if not isinstance(gen, _GENERATOR_CLASSES[kind]):
        raise UserError("ss.load(%s): generators[%r] must be a %s (the program was saved "
                        "drawing from one), got %s" % (source, path, kind, type(gen).__name__))
    return gen
