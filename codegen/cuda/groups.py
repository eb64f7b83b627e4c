"""Graph -> fused groups: which nodes each generated kernel computes.

The plan
--------
Nodes are classified by the op traits table as *pointwise* (ops with a C template:
elementwise ufuncs, ``where``, ``clip``, ``astype``, ``copy``, ``round``), *view* (kind
``view``: basic ``getitem``, ``expand_dims``, ``squeeze``, ``permute_dims``,
``broadcast_to``, ``reshape``), *reduction* (reductions with a C combine: ``sum`` /
``mean`` / ``prod`` / ``max`` / ``min`` / ``any`` / ``all`` over axes; ``var`` / ``std``
have none) or *library* (everything else: ``matmul`` / ``einsum`` go to cuBLAS through
CuPy, the rest to the CuPy call NumPy would make).  A pointwise node is *materialized*
when an output, a library op or a view handed to a library op needs it as an array; every
other pointwise node and every view is inlined into the kernels that read it (recomputed
per consumer kernel, never stored).

Walking the graph in order, each materialized pointwise node and each reduction is a
*root*, added to the latest kernel it can join, else to a new kernel:
  * a *pointwise kernel* has a domain shape D: one thread per element of D (grid-stride
    loop; 16 bytes per array per thread in its 128-bit variant), writing every root of
    shape D;
  * a *reduction kernel* has a domain D and reduced axes A: a group of threads per row (an
    index of the non-reduced axes): a warp for short rows, a block for long ones, a lane
    per row when the last axis is kept (coalesced), chunks of a row across blocks for few
    long rows (its split companion); ``kernels.py`` describes each.  Each reduction over
    (D, A) is one phase: the group's threads accumulate the inlined producer (from
    registers when the row fits them), then warp shuffles and one barrier combine them
    and every thread holds the row's result.  A final phase writes the
    pointwise roots of shape D, which may read the row's reductions (softmax and layer
    norm are one kernel each), and the pointwise roots of the row's shape (``x.sum() / n``),
    computed once per row.  A pointwise kernel becomes a reduction kernel when a reduction
    over its domain joins it (``y = 2*x`` returned beside ``y.sum(-1)``).
A root joins a kernel only if (invariant) every array it loads is produced by an earlier
step, and every reduction of the same kernel it reads is read at the block's own row.
Values whose coordinates do not vary along the row are computed once per row (hoisted).
"""
from __future__ import annotations

from typing import Any, Dict, List, Optional, Set, Tuple

import numpy as np

from symshape.capture.ir import Graph, IndexAttr, Node
from symshape.capture.ops.traits import VIEW, traits_of
from symshape.errors import InternalError
from symshape.algebra.expr import Expr, OpAtom, mod, smax, smin, sub
from symshape.algebra.infinity import INT_OO
from symshape.algebra.ranges import ValueRange, bound

from ..fusion import numel
from . import cops
from .cops import Operand, ctype



class NoFuse(Exception):
    """A root cannot join this kernel."""


def same_shape(a, b) -> bool:
    return len(a) == len(b) and all(type(x) is type(y) and x == y for x, y in zip(a, b))


def norm_axes(node: Node) -> Tuple[int, ...]:
    ax = node.attrs.get("axis")
    nd = len(node.inputs[0].shape)
    return tuple(range(nd)) if ax is None else tuple(sorted(ax))


# --------------------------------------------------------------------------- ranges
class Ranges:
    """Value ranges of the program's symbols (unknown symbols: [0, int_oo])."""

    def __init__(self, ranges: Dict) -> None:
        self.ranges = dict(ranges)

    def of(self, s) -> ValueRange:
        return self.ranges.get(s) or ValueRange(0, INT_OO)

    def bound(self, e) -> ValueRange:
        return bound(e, self.of)

    def simplify(self, e):
        """Min / Max at the top of ``e`` decided by the ranges (``Max(s0 - 1, 0)`` is
        ``s0 - 1`` when ``s0 >= 1``)."""
        if type(e) is not Expr:
            return e
        atom = e.as_atom()
        if atom is None or not isinstance(atom, OpAtom) or atom.kind not in ("Min", "Max"):
            return e
        args = list(atom.args)
        for a in args:
            if all(b is a or self._le(a, b) if atom.kind == "Min" else
                   b is a or self._le(b, a) for b in args):
                return a
        return e

    def _le(self, a, b) -> bool:
        return self.bound(sub(b, a)).lower >= 0


# --------------------------------------------------------------------------- classify
def slice_start(start, n, step: int, rg: Ranges):
    """Python's normalized start of ``slice(start, ., step)`` on an axis of size n."""
    if step > 0:
        if start is None:
            return 0
        sign = _sign(start, rg)
        if sign is None:
            return None
        return rg.simplify(smin(start, n) if sign >= 0 else smax(start + n, 0))
    if start is None:
        return rg.simplify(sub(n, 1))
    sign = _sign(start, rg)
    if sign is None:
        return None
    return rg.simplify(smin(start, sub(n, 1)) if sign >= 0 else smax(start + n, -1))


def norm_index(v, n, rg: Ranges):
    sign = _sign(v, rg)
    if sign is None:
        return mod(v, n)          # -n <= v < n, so v % n is the index
    return v if sign >= 0 else v + n


def _sign(v, rg: Ranges) -> Optional[int]:
    if type(v) is int:
        return 1 if v >= 0 else -1
    r = rg.bound(v)
    if r.lower >= 0:
        return 1
    if r.upper < 0:
        return -1
    return None


def _scalar_ok(x) -> bool:
    return x is None or type(x) in (bool, int, float) or type(x) is Expr or \
        isinstance(x, (np.bool_, np.integer, np.floating))


def operand_of(x, text: str = "x") -> Optional[Operand]:
    if x is None:
        return None
    if type(x) is Node:
        return Operand(text, x.dtype)
    if type(x) is Expr:
        return Operand(text, int, value=x)
    if type(x) is bool or isinstance(x, np.bool_):
        return Operand(text, np.dtype(bool), value=bool(x))
    if type(x) is int:
        return Operand(text, int, value=x)
    if type(x) is float:
        return Operand(text, float, value=x)
    if isinstance(x, (np.integer, np.floating)):
        return Operand(text, x.dtype, value=x.item())
    return None


def pointwise_expr(node: Node, ops: List[Optional[Operand]], helpers: set) -> Optional[str]:
    """C text of pointwise ``node`` on ``ops`` (the traits table's C template)."""
    return cops.pointwise_expr(node.op, ops, node.dtype, node.attrs, helpers)


def classify(node: Node, rg: Ranges) -> str:
    """'input' | 'const' | 'pw' | 'view' | 'red' | 'lib'."""
    if node.op == "input":
        return "input"
    if node.op == "constant":
        return "const"
    if node.shape is None or "binds" in node.meta or "binds_value" in node.meta or \
            ctype(node.dtype) is None:
        return "lib"
    ins = node.input_nodes()
    if any(i.shape is None or ctype(i.dtype) is None for i in ins):
        return "lib"
    t = traits_of(node.op)
    if t is None:
        return "lib"
    if t.kind == VIEW:
        return "view" if len(node.inputs) == 1 and type(node.inputs[0]) is Node and \
            _view_ok(node, rg) else "lib"
    if t.reduce is not None and t.reduce.c_combine is not None:
        return "red" if cops.reduction_supported(node) else "lib"
    if t.c is not None:
        if not all(type(x) is Node or _scalar_ok(x) for x in node.inputs):
            return "lib"
        ops = [operand_of(x) for x in node.inputs]
        try:
            return "pw" if pointwise_expr(node, ops, set()) is not None else "lib"
        except Exception:
            return "lib"
    return "lib"


def _view_ok(node: Node, rg: Ranges) -> bool:
    src = node.inputs[0]
    if node.op == "getitem":
        idx = node.attrs.get("index")
        if type(idx) is not IndexAttr:
            return False
        dim = 0
        for it in idx.items:
            if it is None:
                continue
            if dim >= len(src.shape):
                return False
            n = src.shape[dim]
            if isinstance(it, slice):
                step = 1 if it.step is None else it.step
                if type(step) is not int or step == 0:
                    return False
                if slice_start(it.start, n, step, rg) is None:
                    return False
            elif type(it) not in (int, Expr):
                return False
            dim += 1
        return True
    if node.op == "reshape":
        return numel(src.shape) == numel(node.shape) or \
            rg.bound(sub(numel(src.shape), numel(node.shape))) == ValueRange(0, 0)
    return True


# --------------------------------------------------------------------------- plan
class KernelSpec:
    """A kernel being planned: its domain, reduced axes (None: pointwise) and roots."""

    def __init__(self, shape: tuple, axes: Optional[tuple], pos: int) -> None:
        self.shape = shape
        self.axes = axes
        self.pos = pos
        # (node, role): 'reduce' a reduction over (shape, axes); 'out' a pointwise node of
        # the domain's shape; 'rowout' a pointwise node of the reductions' shape, written
        # once per row
        self.roots: List[Tuple[Node, str]] = []

    @property
    def kind(self) -> str:
        return "pointwise" if self.axes is None else "reduce"

    def copy_with(self, node: Node, role: str, axes) -> "KernelSpec":
        k = KernelSpec(self.shape, axes, self.pos)
        k.roots = self.roots + [(node, role)]
        return k

    def reductions(self) -> List[Node]:
        return [n for n, r in self.roots if r == "reduce"]

    def outs(self) -> List[Node]:
        return [n for n, r in self.roots if r != "reduce"]

    def row_shapes(self) -> Tuple[tuple, tuple]:
        """The shape of a row value with keepdims, and without."""
        axes = set(self.axes or ())
        keep = tuple(1 if k in axes else s for k, s in enumerate(self.shape))
        drop = tuple(s for k, s in enumerate(self.shape) if k not in axes)
        return keep, drop


class Plan:
    """Steps in execution order: ('py', node) runs the node's NumPy call on CuPy,
    ('kernel', Kernel) launches a generated kernel."""

    def __init__(self) -> None:
        self.steps: List[Tuple[str, Any]] = []
        self.kernels: List["Kernel"] = []
        self.contig: Set[Node] = set()      # inputs / library results kernels load
        self.kinds: Dict[Node, str] = {}


class Planner:
    def __init__(self, graph: Graph, ranges: Dict, extra_outputs=(), emitter=None) -> None:
        # the kernel writer (kernels.Emitter, which builds on this module)
        self.emitter = emitter
        self.graph = graph
        self.rg = Ranges(ranges)
        self.users = graph.users()
        self.kind: Dict[Node, str] = {n: classify(n, self.rg) for n in graph.nodes}
        outs = {o for o in graph.outputs if type(o) is Node} | set(extra_outputs)
        self.outputs = outs
        self.needs_array: Dict[Node, bool] = {}
        for n in reversed(graph.nodes):
            self.needs_array[n] = n in outs or any(
                self.kind[u] == "lib" or (self.kind[u] == "view" and self.needs_array[u])
                for u in self.users[n])
        self.pos: Dict[Node, int] = {}
        self.steps: List[Tuple[str, Any]] = []
        self.specs: List[KernelSpec] = []

    def run(self) -> Plan:
        for n in self.graph.nodes:
            k = self.kind[n]
            if k in ("input", "const"):
                self.pos[n] = -1
            elif k == "lib" or (k == "view" and self.needs_array[n]):
                self.steps.append(("py", n))
                self.pos[n] = len(self.steps) - 1
            elif k == "pw" and self.needs_array[n]:
                self._add_root(n, "out")
            elif k == "red" and (self.users[n] or n in self.outputs):
                self._add_root(n, "reduce")
        return self._finish()

    # ---------------------------------------------------------------- merging
    def _add_root(self, n: Node, role: str) -> None:
        if role == "reduce":
            shape, axes = tuple(n.inputs[0].shape), norm_axes(n)
        else:
            shape, axes = tuple(n.shape), None
        for spec in reversed(self.specs):
            r = role
            if not same_shape(spec.shape, shape):
                if role == "out" and spec.axes is not None and \
                        any(same_shape(shape, rs) for rs in spec.row_shapes()):
                    r = "rowout"
                else:
                    continue
            if role == "reduce" and spec.axes is not None and spec.axes != axes:
                continue
            new_axes = axes if role == "reduce" else spec.axes
            trial = spec.copy_with(n, r, new_axes)
            try:
                self.emitter(trial, self).build()
            except NoFuse:
                continue
            idx = self.specs.index(spec)
            self.specs[idx] = trial
            step = self.steps.index(("kernel", spec))
            self.steps[step] = ("kernel", trial)
            self.pos[n] = trial.pos
            return
        spec = KernelSpec(shape, axes, len(self.steps)).copy_with(n, role, axes)
        try:
            self.emitter(spec, self).build()
        except NoFuse as e:       # classification guarantees a lone root always fits
            raise InternalError("cupy backend: node %s cannot form a kernel: %s" % (n.name, e))
        self.specs.append(spec)
        self.steps.append(("kernel", spec))
        self.pos[n] = spec.pos

    # ---------------------------------------------------------------- final code
    def _finish(self) -> Plan:
        # which reductions other kernels (or the driver) read from memory
        written: Set[Node] = {n for n, na in self.needs_array.items() if na}
        for spec in self.specs:
            em = self.emitter(spec, self)
            em.build()
            written |= set(em.loads)
        plan = Plan()
        plan.kinds = self.kind
        for kind, obj in self.steps:
            if kind == "py":
                plan.steps.append(("py", obj))
                continue
            k = self.emitter(obj, self).build(written=written, index=len(plan.kernels))
            if k.kind == "reduce":
                k.split = self.emitter(obj, self).build(written=written, index=len(plan.kernels),
                                                   split=True)
            plan.kernels.append(k)
            plan.steps.append(("kernel", k))
            for b in k.loads:
                if self.kind[b] in ("input", "lib"):
                    plan.contig.add(b)
        return plan
