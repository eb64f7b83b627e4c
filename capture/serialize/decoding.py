"""Reading a program document back into a graph, a signature and a contract: every string
checked against a strict grammar, expressions parsed (never evaluated), ops looked up in
the op table."""
from __future__ import annotations

import ast
import base64
import inspect
import keyword
import math
import re
from typing import Dict, List, Optional, Tuple

import numpy as np

from symshape import named_results

from symshape.specs import pytree
from symshape.algebra import relations as R
from symshape.errors import UserError
from symshape.algebra.expr import Expr, IntLike, OpAtom, Sym, add, atom_expr, mul, neg, sub
from symshape.contract.constraint_set import ConstraintSet, InputDesc, OfClass
from symshape.contract import saved
from symshape.sizes.symfloat import PY as _FLOAT_OPS, FloatExpr

from .. import archive, layout, node_check
from ..ops import families
from .. import control, decomp
from ..ir import RESERVED, ArrRef, CondExpr, Graph, IndexAttr, Node, Subgraph
from ..state import statesave
from ..program import ExportedProgram, InputSpec, OutputSpec, Signature
from ..ops.registry import OPS, defop
from ..custom import lookup
from ..ops import elementwise
from .formats import (DTYPES, GENERATOR_CLASSES, NODE_META, PARAM_KINDS, SYM_NAME, GeneratorSlot,
                      SavedDefault, SavedFrame, saved_frame, short_value, state_generator)
from .saving import plain_json

families()          # every op's handler and op-table row, before any use
# the ops a saved program may hold beyond the families: cond / map / while_loop (control.py)
# and the core op names of lowered programs (decomp.py); each registers them as it loads
OP_SOURCES = (control, decomp)

# =========================================================================== loading
class Malformed(Exception):
    pass


def _is_name(s) -> bool:
    return isinstance(s, str) and s.isidentifier() and not keyword.iskeyword(s)


class PendingArray:
    """An array in an archive's data section, described but not yet read (arrays are read
    or mapped only once the whole program is known to be valid)."""

    def __init__(self, dtype, shape, strides, align, offset, nbytes, checksum) -> None:
        self.dtype, self.shape, self.strides, self.align = dtype, shape, strides, align
        self.offset, self.nbytes, self.checksum = offset, nbytes, checksum


class Decoder:
    def __init__(self, source: str, in_archive: bool = False) -> None:
        self.source = source
        self.where: List[str] = ["program"]
        self.syms: Dict[str, Sym] = {}
        self.used_syms: set = set()
        # whether arrays may live in an archive's data section (not in a JSON text file)
        self.in_archive = in_archive
        self.pending: List[Tuple[Node, PendingArray]] = []

    # errors -------------------------------------------------------------------
    def fail(self, msg: str):
        raise Malformed("%s: %s" % (".".join(self.where), msg))

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
            self.fail("expected %s (a Python identifier), got %s" % (what, short_value(v)))
        return v

    # symbols and expressions --------------------------------------------------------
    def sym(self, v) -> Sym:
        if not isinstance(v, str) or not SYM_NAME.match(v):
            self.fail("expected a size symbol like 's0' or 'u1', got %s" % short_value(v))
        got = self.syms.get(v)
        if got is None:
            m = SYM_NAME.match(v)
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
        except Malformed:
            raise
        except (SyntaxError, ValueError, RecursionError, ZeroDivisionError, TypeError,
                MemoryError, OverflowError):
            self.fail("malformed size expression %s" % short_value(text))

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
                self.fail("unknown relation %s" % short_value(v["rel"]))
            with self.at("expr"):
                e = self.expr(v["expr"])
            if type(e) is not Expr:
                self.fail("a relation needs a non-constant expression")
            return R.Rel(v["rel"], e)
        self.obj(v, ("bool", "args"))
        if v["bool"] not in ("and", "or"):
            self.fail("unknown boolean operator %s" % short_value(v["bool"]))
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
            self.fail("unknown dtype %s (allowed: %s)" % (short_value(v), ", ".join(DTYPES)))
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
            self.fail("unknown value tag %s" % short_value(tag))
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
                      % short_value(body))
        return got

    def _tag_float(self, tag, body, nodes):
        if body not in ("nan", "inf", "-inf"):
            self.fail("unknown float %s" % short_value(body))
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
            self.fail("%s is not a NumPy ufunc" % short_value(body))
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
        if body not in GENERATOR_CLASSES:
            self.fail("a generator is 'Generator' or 'RandomState'")
        return GeneratorSlot(body)

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

    def stored_array(self, v) -> PendingArray:
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
                      % (short_value(v["checksum"]), archive.CHECKSUM))
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
        return PendingArray(dt, tuple(shape), strides, align, offset, nbytes, v["checksum"])

    def frame(self, v) -> Optional[SavedFrame]:
        if v is None:
            return None
        self.obj(v, ("file", "line", "function", "code"))
        return saved_frame(self.text(v["file"]), self.integer(v["line"]),
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
            self.fail("unknown container %s" % short_value(kind))
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
                      % (short_value(name), ", ".join(sorted(named_results.by_name()))))
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
                        self.fail("attribute name %s is not a Python identifier" % short_value(k))
                    with self.at(k):
                        if k == "fn" and "::" in op:
                            attrs[k] = self.custom_fn(x, op)
                        else:
                            attrs[k] = self.value(x, nodes)
                if "::" in op:
                    self.custom_attrs(op, attrs, len(inputs))
                if isinstance(attrs.get("source"), GeneratorSlot):
                    attrs["source"] = state_generator(attrs["source"].kind,
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
                if isinstance(arr, PendingArray):
                    self.pending.append((n, arr))
            elif "value" in v:
                self.fail("only constant nodes carry a 'value'")
            if "meta" in v:
                with self.at("meta"):
                    self.meta(v["meta"], n)
        return n

    def meta(self, v, n: Node) -> None:
        self.obj(v, (), NODE_META)
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
                      % (short_value(v["custom_op"]), op))
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
                self.fail("bad call slot %s" % short_value(p))

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
                self.fail("subgraph input %s is not an input node of the subgraph" % short_value(x))
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
            cls = GENERATOR_CLASSES.get(e["class"]) if isinstance(e["class"], str) else None
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
        self.fail("unknown input kind %s" % short_value(kind))

    def call_signature(self, v) -> Optional[inspect.Signature]:
        if v is None:
            return None
        params = []
        for i, p in enumerate(self.lst(v)):
            with self.at(i):
                self.obj(p, ("name", "kind"), ("default",))
                name = self.name(p["name"], "a parameter name")
                kind = PARAM_KINDS.get(p["kind"])
                if kind is None:
                    self.fail("unknown parameter kind %s" % short_value(p["kind"]))
                if "default" in p and not plain_json(p["default"]):
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

    def input_spec(self, s, nodes: dict) -> InputSpec:
        """One entry of the signature's inputs, checked against the graph's nodes."""
        self.obj(s, ("kind", "name", "target", "path"))
        n = nodes.get(s["name"])
        if s["kind"] in ("CONSTANT", "STATE"):
            if n is None or n.op != "constant" or s["target"] != n.attrs["target"]:
                self.fail("constant %s is not a constant node of the graph"
                          % short_value(s["name"]))
            if s["path"] is not None:
                n.meta["state"] = s["path"]
        elif s["kind"] == "USER_INPUT":
            if n is None or n.op != "input":
                self.fail("user input %s is not an input node of the graph"
                          % short_value(s["name"]))
        else:
            self.fail("unknown input kind %s" % short_value(s["kind"]))
        for k in ("target", "path"):
            if s[k] is not None:
                self.text(s[k])
        return InputSpec(s["kind"], s["name"], s["target"], s["path"])

    def output_spec(self, s, nodes: dict, graph: Graph) -> OutputSpec:
        """One entry of the signature's outputs, checked against the graph's nodes."""
        self.obj(s, ("kind", "name", "target"), ("mutation",))
        self.text(s["name"])
        rebind = s.get("mutation") == "rebind"
        if "mutation" in s and not rebind:
            self.fail("unknown mutation kind %s" % short_value(s["mutation"]))
        if rebind:
            if s["kind"] != "STATE_MUTATION" or not isinstance(s["target"], str):
                self.fail("a rebind is a STATE_MUTATION with a path")
        elif s["kind"] == "USER_INPUT_MUTATION":
            final = nodes.get(s["name"])
            target = nodes.get(s["target"]) if isinstance(s["target"], str) else None
            if final is None or target is None or target.op != "input":
                self.fail("input mutation %s -> %s does not name graph nodes"
                          % (short_value(s["name"]), short_value(s["target"])))
        elif s["kind"] == "STATE_MUTATION":
            final = nodes.get(s["name"])
            state = [n for n in graph.constants if n.attrs["target"] == s["target"]]
            if final is None or len(state) != 1:
                self.fail("state mutation %s -> %s does not name graph nodes"
                          % (short_value(s["name"]), short_value(s["target"])))
        elif s["kind"] != "USER_OUTPUT":
            self.fail("unknown output kind %s" % short_value(s["kind"]))
        elif s["target"] is not None:
            self.fail("a user output has no target")
        return OutputSpec(s["kind"], s["name"], s["target"], "rebind" if rebind else None)

    def signature(self, v, graph: Graph):
        self.obj(v, ("inputs", "outputs"))
        nodes = {n.name: n for n in graph.nodes}
        sig = Signature.__new__(Signature)
        sig.input_specs = []
        for i, s in enumerate(self.lst(v["inputs"])):
            with self.at("inputs"), self.at(i):
                sig.input_specs.append(self.input_spec(s, nodes))
        sig.output_specs = []
        for i, s in enumerate(self.lst(v["outputs"])):
            with self.at("outputs"), self.at(i):
                sig.output_specs.append(self.output_spec(s, nodes, graph))
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
                        "arrays", "guards", "effects", "slots", "arg_roots", "initial"),
                        ("returns", "check_points")),
                        {n.name: n for n in graph.nodes},
                        lambda x: self.value(x, {n.name: n for n in graph.nodes}))
                except (ValueError, TypeError, KeyError, IndexError, UserError) as e:
                    self.fail("invalid state record (%s)" % short_value(str(e)))
        _forget_decoded(graph)
        ep = ExportedProgram(graph, sig, cs, call_sig, name, None)
        ep.state_program = state
        return ep


#: value tag -> the Decoder method reading its body (``value``)
_VALUE_TAGS = {
    "tuple": Decoder._tag_tuple_list,
    "list": Decoder._tag_tuple_list,
    "expr": Decoder._tag_expr,
    "node": Decoder._tag_node,
    "float": Decoder._tag_float,
    "complex": Decoder._tag_complex,
    "slice": Decoder._tag_slice,
    "index": Decoder._tag_index,
    "ellipsis": Decoder._tag_ellipsis,
    "dtype": Decoder._tag_dtype,
    "scalar": Decoder._tag_scalar,
    "subgraph": Decoder._tag_subgraph,
    "cond_expr": Decoder._tag_cond_expr,
    "ufunc": Decoder._tag_ufunc,
    "float_expr": Decoder._tag_float_expr,
    "generator": Decoder._tag_generator,
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


def _check_path(path: str, dec: Decoder) -> tuple:
    """An input path is ``name`` followed by ``[int]`` / ``['str']`` subscripts; returns
    ``(name, keys)``."""
    try:
        node = ast.parse(path, mode="eval").body
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        dec.fail("malformed input path %s" % short_value(path))
    keys = []
    while isinstance(node, ast.Subscript):
        k = node.slice
        if not isinstance(k, ast.Constant) or type(k.value) not in (int, str):
            dec.fail("malformed input path %s" % short_value(path))
        keys.append(k.value)
        node = node.value
    if not isinstance(node, ast.Name) or not _is_name(node.id):
        dec.fail("malformed input path %s" % short_value(path))
    canonical = node.id + "".join("[%r]" % k for k in reversed(keys))
    if canonical != path:
        dec.fail("input path %s is not in canonical form (%s)" % (short_value(path), canonical))
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


def _ensure_op(name: str, dec: Decoder) -> None:
    if ensure_op(name):
        return
    if "::" in name:
        raise UserError(
            "ss.load(%s): the program uses the custom op %r, which is not registered in this "
            "process. Define it (or import the module that does) before loading:\n"
            "    @ss.custom_op(%r)\n    def ...\n    @....register_fake\n    def ..."
            % (dec.source, name, name))
    dec.fail("unknown op %s (not in the op table of this symshape)" % short_value(name))


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


def reject_constant(name: str):
    raise Malformed("%s is not valid JSON (only finite numbers are allowed)" % name)
