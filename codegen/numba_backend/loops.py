"""``for_loop`` nodes (a Python ``for`` over a symbolic count, capture/loops.py) under
``backend="numba"``: the whole loop as one numba function where its body allows it.

The body subgraph is planned by the same planner as a program (``plan_body``).  When every
step of that plan is one of

- a kernel (elementwise chains and reductions, fused as in a program);
- a view ``x[t]`` (basic indices of sizes and slices), a 2-D transpose;
- ``matmul`` / ``dot`` of float vectors and matrices of static sizes, at most
  ``MATMUL_WORK`` multiply-adds (a loop nest here: a BLAS call from Python costs more);
- ``np.zeros`` / ``ones`` / ``empty`` / ``eye``;
- a write ``y[t, :] = v`` into a value no later step reads as it was (in place; a carried
  array so written is copied once before the loop, which then owns it);
- a loop inside the body (a function of the same module, ``_loop<k>``);

the loop is one ``@njit`` function (``LoopKernel.source``)::

    def loop(start, stop, step, <sizes>, <carried...>, <lifted...>, <rows...>, <consts>):
        k = 0
        for i in range(start, stop, step):
            add = np.empty((4,), float64); _k0(add, carried_0, lifted_x, 4, i)
            ...
            carried_0, ... = add, ...          # the body's carried outputs
            rows_0[k] = tanh                    # each appended value into its stacked row
            k += 1
        return (carried_0, ..., rows_0, ...)

so the Python interpreter runs nothing per iteration, and allocates little: an array of a
shape the index does not change is made before the loop, once where its value dies with
the iteration, twice (used in turn) where it is carried to the next iteration and dies
there (``_lifetimes``: not when a slot carries another slot's array, a swap or a shift
register, or what a loop inside the body returned).  The body's kernels are the serial
variants (the per-iteration work of a loop over time is small; a large one would want its
``prange`` variant, which a loop body does not use yet).  A 0-d carried value comes back
as a NumPy scalar, as the Python loop leaves it.

Anything else (a larger matmul, ``np.linalg``, an op without a numba form, a check on the
index) keeps the node a Python-level step of the driver: ``symshape.runtime.for_loop``
calls the body's NumPy code once per iteration (``plan_loop`` returns None).
"""
from __future__ import annotations

import hashlib
import importlib.util
import os
import sys
import tempfile
import warnings
from typing import Any, Dict, List, Optional

import numpy as np

from symshape.capture.ir import IndexAttr, Node
from symshape.algebra.expr import Expr, Sym, format_py

from ..loopnest.plan import Planner
from .kernels import NUMBA, NumbaEmitter
from .ops import HELPERS

#: numba options of the loop and its body's kernels (the kernels' own, serial)
OPTIONS = 'cache=True, nogil=True, error_model="numpy"'


def _py(e) -> str:
    return format_py(e, lambda s: s.name) if type(e) is Expr else repr(e)


def _syms(e) -> set:
    if type(e) is Expr:
        return set(e.free_symbols)
    if type(e) is Sym:
        return {e}
    return set()


def _shape_py(shape) -> str:
    parts = [_py(s) for s in shape]
    return "(%s,)" % parts[0] if len(parts) == 1 else "(%s)" % ", ".join(parts)


#: the most multiply-adds per iteration a matmul of the body runs as a loop nest (beyond
#: it, BLAS called from the Python loop is faster than the loop nest)
MATMUL_WORK = 1 << 15

#: a @ b by ranks, into ``o`` (the inner loop runs along b's rows: it vectorizes)
_MATMULS = {
    (1, 2): """def _mm12(a, b, o):
    o[:] = 0
    for k in range(b.shape[0]):
        ak = a[k]
        for j in range(b.shape[1]):
            o[j] += ak * b[k, j]""",
    (2, 2): """def _mm22(a, b, o):
    o[:, :] = 0
    for i in range(a.shape[0]):
        for k in range(b.shape[0]):
            aik = a[i, k]
            for j in range(b.shape[1]):
                o[i, j] += aik * b[k, j]""",
    (2, 1): """def _mm21(a, b, o):
    for i in range(a.shape[0]):
        s = o.dtype.type(0)
        for k in range(b.shape[0]):
            s += a[i, k] * b[k]
        o[i] = s""",
    (1, 1): """def _mm11(a, b, o):
    s = o.dtype.type(0)
    for k in range(b.shape[0]):
        s += a[k] * b[k]
    o[()] = s""",
}


#: creation ops a loop body may make arrays with (fresh arrays, as in NumPy)
_CREATION = ("zeros", "ones", "empty", "eye")


def _work(sa, sb) -> int:
    m = sa[0] if len(sa) == 2 else 1
    n = sb[1] if len(sb) == 2 else 1
    return m * sa[-1] * n


class LoopKernel:
    """One loop as a numba module: ``source``, ``key`` (its hash), ``sizes`` (the size
    symbols of the program it takes, by name), ``consts`` (the constants of its bodies,
    its last arguments)."""

    def __init__(self, source: str, sizes: List[str], consts: List[Node]) -> None:
        self.source = source
        self.sizes = sizes
        self.consts = consts
        self.key = hashlib.sha1(source.encode()).hexdigest()[:20]


class _NoLoop(Exception):
    """The body has a step one numba function cannot run."""


def plan_body(node: Node, ranges):
    """The numba plan of the body of ``node`` (a ``for_loop``): its kernels and steps."""
    sub = node.attrs["body"]
    return Planner(sub.graph, ranges, [], NumbaEmitter, NUMBA).run()


def plan_loop(node: Node, ranges) -> Optional[LoopKernel]:
    """The loop of ``node`` as one numba function, or None where its body has a step that
    only NumPy runs (the node stays a Python loop over the body's NumPy code)."""
    try:
        mod = _Module()
        w = _LoopWriter(node, ranges, mod, "loop")
        sizes = w.write()
        return LoopKernel(mod.render(), sorted(s.name for s in sizes), w.consts)
    except _NoLoop:
        return None


class _Module:
    """What the functions of one loop module share: kernels, dtypes, matmul helpers and
    the loop functions (a loop inside the body is a function of its own)."""

    def __init__(self) -> None:
        self.kernels: List[str] = []
        self.dtypes: Dict[str, np.dtype] = {}
        self.helpers: set = set()
        self.functions: List[str] = []
        self.loops = 0

    def render(self) -> str:
        parts = ['"""symshape numba loop, generated: edits are overwritten."""',
                 "import numpy as np", "from numba import njit", HELPERS, ""]
        parts += ["%s = np.%s" % (k, dt.name) for k, dt in sorted(self.dtypes.items())]
        for ranks in sorted(self.helpers):
            parts += ["", "@njit(%s)" % OPTIONS, _MATMULS[ranks]]
        for src in self.kernels + self.functions:
            parts += ["", "@njit(%s)" % OPTIONS, src]
        return "\n".join(parts + [""])


class _LoopWriter:
    """Writes the function of one loop into ``mod`` (raises _NoLoop when the body does
    not fit)."""

    def __init__(self, node: Node, ranges, mod: _Module, fname: str) -> None:
        self.mod = mod
        self.fname = fname
        self.node = node
        self.ranges = ranges
        sub = node.attrs["body"]
        self.sub = sub
        start, stop, step, carried, lifted, row_shapes = node.inputs
        self.nc = len(carried)
        self.carried, self.lifted, self.row_shapes = carried, lifted, row_shapes
        self.phs = list(sub.inputs)
        self.outs = list(sub.graph.outputs)
        self.syms: set = set()
        self.lines: List[str] = []
        # constants of the body (and of loops inside it): arguments after the rows
        self.consts = [n for n in sub.graph.nodes if n.op == "constant"]
        self.pre: List[str] = []            # lines before the loop: buffers it reuses
        self.escaping: set = set()
        self.pingpong = False
        self.pos = 0
        self._refuse_shapes()

    def _refuse_shapes(self) -> None:
        sub, nc = self.sub, self.nc
        if sub.checks or not all(type(x) is Node for x in
                                 tuple(self.carried) + tuple(self.lifted) + tuple(self.outs)):
            raise _NoLoop()
        if any(n.meta.get("binds") or "binds_value" in n.meta for n in sub.graph.nodes):
            raise _NoLoop()
        for c, ph, o in zip(self.carried, self.phs[1:1 + nc], self.outs[:nc]):
            # a carried value keeps its dtype and rank (numba types it once)
            if ph.dtype != o.dtype or c.dtype != ph.dtype or ph.shape is None or \
                    o.shape is None or len(ph.shape) != len(o.shape):
                raise _NoLoop()
        for o in self.outs:
            if o.dtype is None or o.dtype.kind not in "biuf" or o.shape is None:
                raise _NoLoop()
        name = self.phs[0].name
        if not (name[:1] == "u" and name[1:].isdigit()):
            raise _NoLoop()

    # ------------------------------------------------------------------ the body
    def _dt(self, dt: np.dtype) -> str:
        name = "_dt_" + dt.name
        self.mod.dtypes[name] = dt
        return name

    def _size(self, e) -> str:
        self.syms |= _syms(e)
        return _py(e)

    def _kernel(self, k) -> None:
        if k.empty_max:
            raise _NoLoop()
        i = len(self.mod.kernels)
        self.mod.kernels.append(k.source.replace("def kernel(", "def _k%d(" % i, 1)
                            .replace("RANGE(", "range("))
        for n in k.outputs:
            self._allocate(n)
        args = []
        for kind, v in k.args:
            if kind in ("out", "in"):
                if v is self.phs[0]:
                    raise _NoLoop()
                args.append(v.name)
            else:
                args.append(self._size(v))
        self.lines.append("_k%d(%s)" % (i, ", ".join(args)))

    def _allocate(self, n: Node) -> None:
        """The array a kernel (or a matmul) writes ``n`` into: of a shape that does not
        change with the index, one buffer made before the loop when the value dies with its
        iteration, two used in turn when it is carried to the next one (and dies there);
        else a new array per iteration."""
        syms = set()
        for d in n.shape:
            syms |= _syms(d)
            self._size(d)
        new = "np.empty(%s, %s)" % (_shape_py(n.shape) if n.shape else "()",
                                    self._dt(n.dtype))
        if any(sym.name == self.phs[0].name for sym in syms):
            self.lines.append("%s = %s" % (n.name, new))
        elif n not in self.escaping:
            self.pre.append("%s = %s" % (n.name, new))
        elif self.pingpong:
            self.pre.append("_b0_%s = %s" % (n.name, new))
            self.pre.append("_b1_%s = %s" % (n.name, new))
            self.lines.append("%s = _b0_%s if _k %% 2 == 0 else _b1_%s" % (
                n.name, n.name, n.name))
        else:
            self.lines.append("%s = %s" % (n.name, new))

    def _lifetimes(self, plan) -> None:
        """Which values may outlive their iteration (``escaping``: what the carried values
        are, or views of, or writes into; what a loop inside the body is given), and
        whether every carried value dies in the iteration after the one that made it
        (``pingpong``: each slot carries a new array or its own array written in place)."""
        alias = ("setitem", "setitem_owned", "getitem", "permute_dims")
        esc = set(self.outs[:self.nc])
        for kind, obj in plan.steps:
            if kind == "py" and obj.op == "for_loop":
                esc.update(obj.input_nodes())
        todo = list(esc)
        while todo:
            n = todo.pop()
            if n.op in alias and n.inputs and type(n.inputs[0]) is Node and \
                    n.inputs[0] not in esc:
                esc.add(n.inputs[0])
                todo.append(n.inputs[0])
        self.escaping = esc
        made = {n for kind, k in plan.steps if kind == "kernel" for n in k.outputs}
        self.pingpong = True
        for ph, o in zip(self.phs[1:1 + self.nc], self.outs[:self.nc]):
            root, writes_only = o, True
            while root.op in alias and type(root.inputs[0]) is Node:
                writes_only = writes_only and root.op not in ("getitem", "permute_dims")
                root = root.inputs[0]
            if not ((root is ph and writes_only) or root in made or
                    root.op in _CREATION + ("matmul", "dot")):
                self.pingpong = False

    def _index(self, index) -> str:
        """A basic index of ints, sizes and slices as numba subscript source."""
        if type(index) is not IndexAttr:
            raise _NoLoop()
        for it in index.items:
            if it is None or it is Ellipsis or not (
                    isinstance(it, (int, slice)) or type(it) in (Expr, Sym)):
                raise _NoLoop()
            for s in ((it.start, it.stop, it.step) if isinstance(it, slice) else (it,)):
                if s is not None:
                    self._size(s)
        return index.render(_py)

    def _step(self, n: Node, reads, fresh: set) -> None:
        """A step of the body's plan that is not a kernel: a view, a small matmul, a write
        in place (anything else: _NoLoop)."""
        if n.op in ("setitem", "setitem_owned"):
            self._setitem(n, reads, fresh)
        elif n.op == "getitem" and len(n.inputs) == 1 and type(n.inputs[0]) is Node:
            # a view (x[t]) a library step reads: numba slices the same way (one element:
            # numba gives a scalar, the steps after it read a 0-d array)
            idx = self._index(n.attrs.get("index"))
            if n.shape:
                self.lines.append("%s = %s[%s]" % (n.name, n.inputs[0].name, idx))
            else:
                self.lines.append("%s = np.empty((), %s)" % (n.name, self._dt(n.dtype)))
                self.lines.append("%s[()] = %s[%s]" % (n.name, n.inputs[0].name, idx))
        elif n.op in ("matmul", "dot"):
            self._matmul(n)
            fresh.add(n)
        elif n.op in _CREATION and not n.inputs:
            self._creation(n)
            fresh.add(n)
        elif n.op == "permute_dims" and n.attrs.get("axes") == (1, 0) and \
                type(n.inputs[0]) is Node:
            self.lines.append("%s = %s.T" % (n.name, n.inputs[0].name))
        elif n.op == "for_loop":
            self._inner_loop(n)
        elif n.op == "tuple_get" and type(n.inputs[0]) is Node and \
                n.inputs[0].op == "for_loop":
            self.lines.append("%s = %s[%d]" % (n.name, n.inputs[0].name,
                                               int(n.attrs["index"])))
        else:
            raise _NoLoop()

    def _matmul(self, n: Node) -> None:
        """``a @ b`` of float vectors / matrices of static sizes small enough that a loop
        nest in the body beats a BLAS call from Python each iteration."""
        if n.attrs or len(n.inputs) != 2 or not all(type(x) is Node for x in n.inputs):
            raise _NoLoop()
        a, b = n.inputs
        if n.dtype is None or n.dtype.name not in ("float32", "float64") or \
                not all(x.dtype is not None and x.dtype.kind in "biuf" and
                        np.can_cast(x.dtype, n.dtype, "safe") for x in (a, b)):
            raise _NoLoop()
        ranks = (len(a.shape), len(b.shape))
        dims = tuple(a.shape) + tuple(b.shape)
        if ranks not in _MATMULS or not all(type(d) is int for d in dims):
            raise _NoLoop()
        if _work(a.shape, b.shape) > MATMUL_WORK:
            raise _NoLoop()
        self.mod.helpers.add(ranks)
        self._allocate(n)               # (the helper writes every element)
        self.lines.append("_mm%d%d(%s, %s, %s)" % (ranks + (a.name, b.name, n.name)))

    def _inner_loop(self, n: Node) -> None:
        """A loop inside the body: a function of the module of its own, called with its
        rows allocated here."""
        self.mod.loops += 1
        fname = "_loop%d" % self.mod.loops
        inner = _LoopWriter(n, self.ranges, self.mod, fname)
        sizes = inner.write()
        self.consts += [c for c in inner.consts if c not in self.consts]
        self.syms |= sizes
        start, stop, step, carried, lifted, row_shapes = n.inputs
        bounds = ", ".join(self._size(v) for v in (start, stop, step))
        rows = []
        for j, (shape, o) in enumerate(zip(row_shapes, inner.outs[inner.nc:])):
            rows.append("%s_rows%d" % (n.name, j))
            self.lines.append("%s = np.empty((len(range(%s)),) + %s, %s)" % (
                rows[-1], bounds, _shape_py(tuple(self._size(d) for d in shape))
                if len(shape) else "()", self._dt(o.dtype)))
        args = [bounds] + sorted(s.name for s in sizes) + \
            [x.name for x in tuple(carried) + tuple(lifted)] + rows + \
            [c.name for c in inner.consts]
        self.lines.append("%s = %s(%s)" % (n.name, fname, ", ".join(args)))

    def _creation(self, n: Node) -> None:
        """``np.zeros`` / ``ones`` / ``empty`` of sizes, ``np.eye`` of static sizes."""
        attrs = dict(n.attrs)
        dt = attrs.pop("dtype", None)
        if dt is None or np.dtype(dt) != n.dtype or n.dtype.kind not in "biuf":
            raise _NoLoop()
        if n.op == "eye":
            N, M, k = attrs.pop("N", None), attrs.pop("M", None), attrs.pop("k", 0)
            if attrs or not all(type(v) is int for v in (N, M, k)):
                raise _NoLoop()
            self.lines.append("%s = np.eye(%d, %d, %d, %s)" % (n.name, N, M, k, self._dt(n.dtype)))
            return
        shape = attrs.pop("shape", None)
        if attrs or type(shape) is not tuple:
            raise _NoLoop()
        for d in shape:
            self._size(d)
        self.lines.append("%s = np.%s(%s, %s)" % (n.name, n.op, _shape_py(shape) if shape
                                                  else "()", self._dt(n.dtype)))

    def _setitem(self, n: Node, reads, fresh: set) -> None:
        """``y[t, :] = v`` in place: ``y`` is a value of this iteration (or a carried
        array the loop owns) that only kernels before this step read (their loads)."""
        if len(n.inputs) != 2 or type(n.inputs[1]) is not Node:
            raise _NoLoop()
        target, value = n.inputs
        pos = self.pos
        if target not in fresh or value.dtype != n.dtype or target in self.outs or \
                any(p != pos and (kind != "kernel" or p > pos)
                    for p, kind in reads.get(target, ())):
            raise _NoLoop()
        idx = self._index(n.attrs.get("index"))
        v = value.name + ("[()]" if not value.shape else "")
        self.lines.append("%s = %s" % (n.name, target.name))
        self.lines.append("%s[%s] = %s" % (n.name, idx, v))
        fresh.add(n)

    def _owned(self, plan) -> set:
        """Carried inputs the loop may write in place: slot j carries out, to no other
        slot, a new array of the iteration (a kernel's, a creation's, a matmul's) or the
        slot's own array written (never a view of an input, or what a loop inside the body
        passed through)."""
        nc = self.nc
        made = {n for kind, k in plan.steps if kind == "kernel" for n in k.outputs}
        owned = set()
        for ph, o in zip(self.phs[1:1 + nc], self.outs[:nc]):
            if self.outs[:nc].count(o) != 1:
                continue
            root = o
            while root.op in ("setitem", "setitem_owned") and type(root.inputs[0]) is Node:
                root = root.inputs[0]
            if root is ph or root in made or root.op in _CREATION + ("matmul", "dot"):
                owned.add(ph)
        return owned

    def write(self) -> set:
        """Write the loop's function into the module; the size symbols it takes."""
        plan = plan_body(self.node, self.ranges)
        reads: Dict[Node, list] = {}       # node -> (step position, kind) of its readers
        for pos, (kind, obj) in enumerate(plan.steps):
            for x in (obj.input_nodes() if kind == "py" else obj.loads):
                reads.setdefault(x, []).append((pos, kind))
        owned = self._owned(plan)
        fresh = set(owned)
        self._lifetimes(plan)
        for pos, (kind, obj) in enumerate(plan.steps):
            self.pos = pos
            if kind == "py":
                self._step(obj, reads, fresh)
            else:
                self._kernel(obj)
                fresh.update(obj.outputs)
        copied = [ph for ph in self.phs[1:1 + self.nc] if ph in owned and
                  any(s[0] == "py" and s[1].op in ("setitem", "setitem_owned") and
                      s[1].inputs[0] is ph
                      for s in plan.steps)]
        self.mod.functions.append(self._function(copied))
        return {s for s in self.syms if s.name != self.phs[0].name}

    def _function(self, copied: List[Node]) -> str:
        nc, phs, outs = self.nc, self.phs, self.outs
        index = phs[0].name
        sizes = sorted({s.name for s in self.syms} - {index})
        carried = [p.name for p in phs[1:1 + nc]]
        rows = ["_rows%d" % j for j in range(len(outs) - nc)]
        params = ["_start", "_stop", "_step"] + sizes + [p.name for p in phs[1:]] + rows + \
            [c.name for c in self.consts]
        body = ["def %s(%s):" % (self.fname, ", ".join(params))]
        for ph in copied:
            body.append("    %s = %s.copy()" % (ph.name, ph.name))
        body.extend("    " + ln for ln in self.pre)
        body.append("    _k = 0")
        body.append("    for %s in range(_start, _stop, _step):" % index)
        body.extend("        " + ln for ln in self.lines)
        if nc:
            body.append("        %s = %s" % (", ".join(carried) + ("," if nc == 1 else ""),
                                             ", ".join(o.name for o in outs[:nc]) +
                                             ("," if nc == 1 else "")))
        for r, o in zip(rows, outs[nc:]):
            body.append("        %s[_k] = %s%s" % (r, o.name, "[()]" if not o.shape else ""))
        body.append("        _k += 1")
        ret = carried + rows
        body.append("    return (%s%s)" % (", ".join(ret), "," if len(ret) == 1 else ""))
        return "\n".join(body)


# --------------------------------------------------------------------------- loading
_LOADED: Dict[str, Any] = {}


def load_loop(k: LoopKernel, directory: str):
    """The numba dispatcher of ``k``'s loop: its module written once into ``directory``
    (numba's cache keeps the machine code beside it) and imported."""
    got = _LOADED.get(k.key)
    if got is not None:
        return got
    name = "ssnbloop_%s" % k.key
    path = os.path.join(directory, name + ".py")
    try:
        with open(path) as fh:
            same = fh.read() == k.source
    except OSError:
        same = False
    if not same:
        fd, tmp = tempfile.mkstemp(dir=directory, suffix=".tmp")
        with os.fdopen(fd, "w") as fh:
            fh.write(k.source)
        os.replace(tmp, path)
    spec = importlib.util.spec_from_file_location(name, path)
    mod = importlib.util.module_from_spec(spec)
    sys.modules[name] = mod              # numba's cache locates functions by module
    spec.loader.exec_module(mod)
    got = _LOADED[k.key] = mod.loop
    return got


def loop_error_type():
    """numba's compilation error (what a loop function that numba cannot type raises on
    its first call)."""
    from numba.core.errors import NumbaError
    return NumbaError


_WARNED: set = set()


def loop_failed(where: str, error: BaseException) -> None:
    """Warn once per loop that its numba function did not compile (the driver then runs
    the Python loop over the body's NumPy code)."""
    if where not in _WARNED:
        _WARNED.add(where)
        warnings.warn("symshape: backend='numba' could not compile the loop at %s as one "
                      "numba function (%s); it runs as a Python loop"
                      % (where, str(error).splitlines()[0] if str(error) else
                         type(error).__name__), RuntimeWarning, stacklevel=3)


def loop_lines(node: Node, r, ns: Dict[str, Any], ranges, directory: str) -> Optional[List[str]]:
    """The driver's lines running ``node`` as one numba call (None: the body does not
    fit, the caller emits the Python loop)."""
    k = plan_loop(node, ranges)
    if k is None:
        return None
    fn = load_loop(k, directory)
    i = sum(1 for key in ns if key.startswith("_L") and key[2:].isdigit())
    ns["_L%d" % i] = fn
    ns.setdefault("_LOOP_SOURCES", []).append(k.source)
    start, stop, step, carried, lifted, row_shapes = node.inputs
    sub = node.attrs["body"]
    lines = ["# _L%d: the loop at %s as one numba function" % (i, node.source or node.name)]
    count = "len(range(%s, %s, %s))" % (r.value(start), r.value(stop), r.value(step))
    rows = []
    for j, (shape, o) in enumerate(zip(row_shapes, sub.graph.outputs[len(carried):])):
        dt = "_dt_" + o.dtype.name
        ns[dt] = o.dtype
        rows.append("_L%d_rows%d" % (i, j))
        lines.append("%s = np.empty((%s,) + %s, %s)" % (
            rows[-1], count, r.value(tuple(shape)), dt))
    args = [r.value(start), r.value(stop), r.value(step)] + k.sizes + \
        [r.value(x) for x in tuple(carried) + tuple(lifted)] + rows
    for c in k.consts:
        # (the name the NumPy code of the body gives it too)
        ns[c.name] = np.asarray(c.meta["value"])
        args.append(c.name)
    call = "_L%d(%s)" % (i, ", ".join(args))
    outs = sub.graph.outputs[:len(carried)]
    if any(not o.shape for o in outs):
        # a 0-d carried value is a NumPy scalar after the loop, as NumPy's arithmetic on
        # 0-d arrays (and so the Python loop) leaves it
        lines.append("_L%d_out = %s" % (i, call))
        parts = ["_L%d_out[%d]%s" % (i, j, "" if j < len(outs) and outs[j].shape else "[()]")
                 for j in range(len(outs))] + \
            ["_L%d_out[%d]" % (i, j) for j in range(len(outs), len(sub.graph.outputs))]
        call = "(%s,)" % ", ".join(parts)
    lines.append("%s = %s" % (node.name, call))
    return lines
