"""Graph -> fused groups: which nodes each generated kernel computes, in which order.

The plan
--------
Nodes are classified (``classify.py``) as *pointwise*, *view*, *reduction* or *library*
for a target.  A pointwise node is *materialized* when an output, a library op or a view
handed to a library op needs it as an array; every other pointwise node and every view
is inlined into the kernels that read it (recomputed per consumer kernel, never stored).

Walking the graph in order, each materialized pointwise node and each reduction is a
*root*, added to the latest kernel it can join, else to a new kernel:
  * a *pointwise kernel* has a domain shape D and writes every root of shape D at each
    element of D;
  * a *reduction kernel* has a domain D and reduced axes A and runs per *row* (an index
    of the kept axes): each reduction over (D, A) is one phase accumulating the inlined
    producer along the row; a final phase writes the pointwise roots of shape D, which
    may read the row's reductions (softmax and layer norm are one kernel each), and the
    pointwise roots of the row's shape (``x.sum() / n``), computed once per row.  A
    pointwise kernel becomes a reduction kernel when a reduction over its domain joins
    it (``y = 2*x`` returned beside ``y.sum(-1)``).
A root joins a kernel only if (invariant) every array it loads is produced by an earlier
step, and every reduction of the same kernel it reads is read at the row's own index:
the target's emitter decides by trying (``build()`` raises ``NoFuse``).  Values whose
coordinates do not vary along the row are computed once per row (hoisted).  How the
loops run (threads and warps, or ``prange``) is the target's: ``cuda/kernels.py``,
``numba_backend/kernels.py``.
"""
from __future__ import annotations

from typing import Any, Dict, List, Optional, Set, Tuple

from symshape.capture.ir import Graph, Node
from symshape.errors import InternalError

from .classify import Target, classify
from .sizes import Ranges


class NoFuse(Exception):
    """A root cannot join this kernel."""


def same_shape(a, b) -> bool:
    """Are shapes ``a`` and ``b`` the same sizes (symbolic sizes compared exactly)?"""
    return len(a) == len(b) and all(type(x) is type(y) and x == y for x, y in zip(a, b))


def norm_axes(node: Node) -> Tuple[int, ...]:
    """The axes reduction ``node`` reduces, sorted (None: all of them)."""
    ax = node.attrs.get("axis")
    nd = len(node.inputs[0].shape)
    return tuple(range(nd)) if ax is None else tuple(sorted(ax))



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
        """``pointwise`` or ``reduce``."""
        return "pointwise" if self.axes is None else "reduce"

    def copy_with(self, node: Node, role: str, axes) -> "KernelSpec":
        """This group with root ``node`` added in ``role`` (reducing ``axes``)."""
        k = KernelSpec(self.shape, axes, self.pos)
        k.roots = self.roots + [(node, role)]
        return k

    def reductions(self) -> List[Node]:
        """The reductions of the row, in phase order."""
        return [n for n, r in self.roots if r == "reduce"]

    def outs(self) -> List[Node]:
        """The pointwise roots (of the domain's shape or the row's)."""
        return [n for n, r in self.roots if r != "reduce"]

    def row_shapes(self) -> Tuple[tuple, tuple]:
        """The shape of a row value with keepdims, and without."""
        axes = set(self.axes or ())
        keep = tuple(1 if k in axes else s for k, s in enumerate(self.shape))
        drop = tuple(s for k, s in enumerate(self.shape) if k not in axes)
        return keep, drop


class Plan:
    """Steps in execution order: ('py', node) runs the node's library call (NumPy's, or
    CuPy's), ('kernel', kernel) runs a generated kernel (the target's record)."""

    def __init__(self) -> None:
        self.steps: List[Tuple[str, Any]] = []
        self.kernels: List[Any] = []
        self.contig: Set[Node] = set()      # inputs / library results kernels load
        self.kinds: Dict[Node, str] = {}


class Planner:
    """Forms the fused groups of ``graph`` for one target: ``target`` classifies the
    nodes, ``emitter(spec, planner).build()`` writes a group's kernel (or, without
    ``written``, only checks that the group can be one)."""

    def __init__(self, graph: Graph, ranges: Dict, extra_outputs, emitter,
                 target: Target) -> None:
        self.emitter = emitter
        self.graph = graph
        self.rg = Ranges(ranges)
        self.users = graph.users()
        self.kind: Dict[Node, str] = {n: classify(n, self.rg, target) for n in graph.nodes}
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
        """The plan: library steps and kernels in execution order."""
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
            raise InternalError("node %s cannot form a kernel: %s" % (n.name, e))
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
            if k.kind == "reduce":     # the target's split-row companion (None: none)
                k.split = self.emitter(obj, self).build(written=written,
                                                        index=len(plan.kernels), split=True)
            plan.kernels.append(k)
            plan.steps.append(("kernel", k))
            for b in k.loads:
                if self.kind[b] in ("input", "lib"):
                    plan.contig.add(b)
        return plan

