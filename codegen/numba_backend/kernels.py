"""Fused groups -> numba loop nests: the numba target of the shared loop-nest code.

The groups and their order are the shared planner's (``loopnest/plan.py``), over this
backend's classes of nodes (``NUMBA``: what ``ops.py`` translates; the rest runs as
NumPy's calls).  Coordinates, views and broadcasting map as ``loopnest/index.py`` says
and values are found by ``loopnest/values.py``'s walk (this emitter supplies the Python
spelling of sizes, loads, expressions and locals); a load is ``a[c0, c1]`` on the array
as the caller passed it, so any strides work without a copy (numba compiles one
specialization per layout: C, F or any).

A *pointwise* kernel is a loop nest over its domain (C order) writing every root.  A
*reduce* kernel loops over the kept axes outside and, for each row, runs one inner loop
per reduction (its phase: a float sum / mean / max / min writes the row's values into a
scratch row, a vectorized loop, and a helper compiled with reassociation allowed reduces
it, also vectorized; other reductions accumulate in the loop), then one loop writing the
roots of the domain's shape, which may read the row's reductions (softmax and layer norm
are one kernel each), then the roots of the row's shape.  Values that do not vary along
the row are computed once per row.  Every size is an argument:
one compilation per dtypes, ranks and layouts serves every shape.
"""
from __future__ import annotations

import hashlib
from typing import Any, List, Optional, Set


import numpy as np

from symshape.capture.ir import Node

from ..fusion import numel
from ..loopnest.classify import Operand, Target
from ..loopnest.index import Idx
from ..loopnest.plan import KernelSpec, NoFuse, Planner
from ..loopnest.reductions import no_identity
from ..loopnest.values import LoopEmitter
from . import ops
from .ops import Reduction

#: the vector width (float32 lanes) the reordered sums of a row may use (AVX-512: 16
#: running sums, then a tree over them): the accuracy contract's order
LANES = 16


class NumbaKernel:
    """One generated kernel: ``source`` (the function's Python, parameters named
    canonically so equal groups of different programs share one compilation), ``args``
    (('out'|'in', Node) | ('size'|'scalar', expression)), the work it does (elements)."""

    def __init__(self) -> None:
        self.kind = ""
        self.source = ""
        self.key = ""
        self.args: List[tuple] = []
        self.loads: List[Node] = []
        self.outputs: List[Node] = []
        self.work: Any = 1
        self.inner: Any = 1
        self.summary = ""
        self.empty_max: List[str] = []
        self.same_element: List[Node] = []
        self.split = None

    def __repr__(self) -> str:
        return "NumbaKernel(%s: %s)" % (self.kind, self.summary)


def _ix(coords: List[Idx]) -> str:
    return ", ".join(c.text for c in coords) if coords else "()"


class NumbaEmitter(LoopEmitter):
    """Writes one group as a numba function (``build(written=None)``: only checks that
    the group can be one kernel, raising NoFuse when not)."""

    DIV = "//"

    def __init__(self, spec: KernelSpec, planner: Planner) -> None:
        super().__init__(spec, planner)
        self.par_loop_done = False
        self.elsewhere: Set[Node] = set()     # arrays loaded away from the element written

    # ---------------------------------------------------------------- names and sizes
    def size(self, e) -> str:
        """A size as an argument ``n<k>`` (-1, 0 and 1 as literals)."""
        if type(e) is int and -1 <= e <= 1:
            return str(e)
        name = self.sizes.get(e)
        if name is None:
            name = self.sizes[e] = "n%d" % len(self.sizes)
            self.index_exprs.append(e)
        return name

    def buffer(self, n: Node) -> str:
        """The parameter ``a<k>`` holding array ``n``."""
        name = self.bufs.get(n)
        if name is None:
            name = self.bufs[n] = "a%d" % len(self.bufs)
            self.loads.append(n)
        return name

    # ---------------------------------------------------------------- values
    # (``Emitter.value`` walks the graph: views, memos, the row's reductions; these
    # write the Python it asks for)
    def pointwise_text(self, n: Node, args: List[Optional[Operand]]) -> str:
        """The Python expression computing ``n`` (NoFuse: none)."""
        text = ops.pointwise_expr(n.op, args, n.dtype, n.attrs)
        if text is None:
            raise NoFuse("no numba form for %s" % n.op)
        return text

    def load_text(self, n: Node, coords: List[Idx], row: bool) -> str:
        """``a[c0, c1]``: any strides work (numba compiles one variant per layout)."""
        if [c.text for c in coords] != [c.text for c in self.dom]:
            self.elsewhere.add(n)
        return "%s[%s]" % (self.buffer(n), _ix(coords))

    def emit(self, dt, text: str, row: bool, note: str = "") -> str:
        """A local ``v<k> = text`` (in ``pre`` when computed once per row)."""
        v = self.fresh()
        (self.pre if row else self.body).append("%s = %s" % (v, text))
        return v

    # ---------------------------------------------------------------- assembly
    def build(self, written: Optional[Set[Node]] = None, index: int = 0,
              split: bool = False) -> Optional[NumbaKernel]:
        """The kernel (``written=None``: only check that the group can be one kernel)."""
        if split:
            return None
        spec = self.spec
        out_nodes = [n for n, r in spec.roots if r != "reduce" or
                     (written is not None and n in written)]
        self.out_names = {n: "o%d" % i for i, n in enumerate(out_nodes)}
        lines = self._pointwise() if spec.axes is None else self._reduce()
        if written is None:
            return None
        k = NumbaKernel()
        k.kind = "pointwise" if spec.axes is None else "reduce"
        k.outputs = out_nodes
        k.loads = list(self.loads)
        params = [self.out_names[n] for n in out_nodes] + \
            [self.bufs[n] for n in self.loads] + list(self.sizes.values()) + \
            list(self.scalars.values())
        k.args = [("out", n) for n in out_nodes] + [("in", n) for n in self.loads] + \
            [("size", e) for e in self.sizes] + [("scalar", e) for e in self.scalars]
        k.source = "def kernel(%s):\n%s" % (", ".join(params),
                                            "".join("    %s\n" % l for l in lines))
        k.key = hashlib.sha1(k.source.encode()).hexdigest()[:20]
        k.work = numel(spec.shape)
        if spec.axes is None:
            # an array read only at the element each iteration writes may hold the output
            k.same_element = [n for n in self.loads if n not in self.elsewhere]
        if spec.axes is not None:
            k.inner = numel([spec.shape[a] for a in spec.axes])
            k.empty_max = no_identity(spec)
        k.summary = "; ".join(("%s %s" % (role if role != "out" else "write", n.name))
                              for n, role in spec.roots)
        return k

    def _loops(self, axes: List[int]) -> List[str]:
        """``for`` headers over the real axes among ``axes`` (the first loop of the kernel
        is ``RANGE``: ``prange`` in the parallel variant)."""
        S = self.spec.shape
        out = []
        for a in axes:
            if type(S[a]) is int and S[a] == 1:
                continue
            rng = "range"
            if not self.par_loop_done:
                rng, self.par_loop_done = "RANGE", True
            out.append("for c%d in %s(%s):" % (a, rng, self.size(S[a])))
        return out

    def _nest(self, heads: List[str], inner: List[str], depth: int = 0) -> List[str]:
        pad = "    " * depth
        out = [pad + "    " * i + h for i, h in enumerate(heads)]
        return out + [pad + "    " * len(heads) + l for l in inner]

    def _pointwise(self) -> List[str]:
        spec = self.spec
        heads = self._loops(list(range(self.nd)))
        for n, _ in spec.roots:
            v = self.value(n, self.dom)
            self.body.append("%s[%s] = %s" % (self.out_names[n], _ix(self.dom), v))
        return self._nest(heads, self.body or ["pass"])

    def _reduce(self) -> List[str]:
        spec = self.spec
        axes = list(spec.axes)
        kept = [a for a in range(self.nd) if a not in spec.axes]
        outer = self._loops(kept)
        self.par_loop_done = True      # only a loop over rows runs in parallel
        row: List[str] = []
        count = self.size(numel([spec.shape[a] for a in axes]))
        self.red_vars, self.row_memo = {}, {}
        self.scratch: List[tuple] = []     # (node, row variable, axis) kept by earlier phases
        for r in spec.reductions():
            row += self._phase(r, axes, count)
            if r in self.out_names:
                row.append("%s[%s] = %s" % (self.out_names[r],
                                           ", ".join(self.row_coords(r)) or "()",
                                           self.red_vars[r]))
        outs = [n for n, role in spec.roots if role == "out"]
        if outs:
            self._fresh_phase()
            for n in outs:
                v = self.value(n, self.dom)
                self.body.append("%s[%s] = %s" % (self.out_names[n], _ix(self.dom), v))
            row += self.pre
            self.pre = []
            row += self._nest(self._loops(axes), self.body)
        for n, role in spec.roots:
            if role == "rowout":
                coords = self.row_out_coords(n)
                v = self.value(n, coords)
                row += self.pre
                self.pre = []
                row.append("%s[%s] = %s" % (self.out_names[n], _ix(coords), v))
        return self._nest(outer, row or ["pass"])

    def _fresh_phase(self) -> None:
        """A new loop over the row: no values of the last loop are in scope, except the
        scratch rows of earlier phases (which hold their values at every element)."""
        self.memo, self.body = {}, []
        key = tuple(c.text for c in self.dom)
        for n, buf, axis in self.scratch:
            self.memo[(n, key)] = "%s[c%d]" % (buf, axis)

    def _phase(self, r: Node, axes: List[int], count: str) -> List[str]:
        """One reduction over the row: its accumulation loop(s), then its result
        ``red_vars[r]``."""
        red = Reduction(r.op, r.inputs[0].dtype, r.dtype)
        src = r.inputs[0]
        S = self.spec.shape
        real = [a for a in axes if not (type(S[a]) is int and S[a] == 1)]
        vec = red.acc.kind == "f" and real and r.op in ("sum", "mean", "max", "min")
        acc = self.fresh("acc")
        self._fresh_phase()
        out: List[str] = []
        if not vec:
            v = self.value(src, self.dom)
            ld = red.load(Operand(v, src.dtype))
            if ld is None:
                raise NoFuse("no numba form for the %s of %s" % (r.op, src.dtype))
            self.body.append("%s = %s" % (acc, red.combine(acc, ld)))
            out += self.pre
            self.pre = []
            out.append("%s = %s" % (acc, red.identity()))
            out += self._nest(self._loops(axes), self.body)
            nan = None
        else:
            # the row's values along the last reduced axis go to a scratch row (a loop
            # LLVM vectorizes), which a helper compiled with reassociation allowed
            # reduces (vectorized too); NaN for max / min is tracked here, where no
            # fast-math flag lets the compiler assume it away
            last = real[-1]
            n_last = self.size(S[last])
            v = self.value(src, self.dom)
            ld = red.load(Operand(v, src.dtype))
            if ld is None:
                raise NoFuse("no numba form for the %s of %s" % (r.op, src.dtype))
            buf, nan = self.fresh("row"), None
            self.body.append("%s[c%d] = %s" % (buf, last, ld))
            if r.op in ("max", "min"):
                nan = self.fresh("nan")
                self.body.append("%s = %s | (%s[c%d] != %s[c%d])" % (nan, nan, buf, last,
                                                                      buf, last))
            out += self.pre
            self.pre = []
            out.append("%s = %s" % (acc, red.identity()))
            out.append("%s = np.empty(%s, %s)" % (buf, n_last, ops.npname(red.acc)))
            if nan:
                out.append("%s = False" % nan)
            helper = {"sum": "_rsum", "mean": "_rsum", "max": "_rmax", "min": "_rmin"}[r.op]
            inner = self._nest(self._loops([last]), self.body) + [
                "%s = %s" % (acc, red.combine(acc, "%s(%s, %s, %s)" % (
                    helper, buf, n_last, red.identity())))]
            out += self._nest(self._loops([a for a in axes if a != last]), inner)
            if len(real) == 1 and np.dtype(src.dtype) == red.acc:
                # the row holds src's values: later phases read them instead of
                # recomputing (softmax: the output divides the sum phase's exponentials)
                self.scratch.append((src, buf, last))
        res = self.fresh("r")
        out.append("%s = %s" % (res, red.finish(acc, count)))
        if nan:
            out.append("%s = %s if %s else %s" % (res, ops.literal(float("nan"), r.dtype), nan,
                                                  res))
        self.red_vars[r] = res
        return out


# --------------------------------------------------------------------------- planning
def _computes(node: Node, args: List[Optional[Operand]]) -> bool:
    return ops.pointwise_expr(node.op, args, node.dtype, node.attrs) is not None


#: what this backend's loop nests translate
NUMBA = Target(dtype=ops.supported_dtype, reduction=ops.reduction_supported,
               pointwise=_computes)


def plan_program(ep):
    """The fused kernels and library steps of ``ep`` (``Plan`` of ``NumbaKernel``)."""
    # the final values of mutated inputs are written back: they are outputs too
    extra = [final for _, final in ep.mutation_pairs]
    return Planner(ep.graph, ep.constraints.ranges, extra, NumbaEmitter, NUMBA).run()
