"""The seven wrong-result mutants of issue 34 that survived every proof, and one mutant per
op shape rule generalized since (wrong only outside the samples the old proofs used), each
killed by a proof now: ``python -m proofs.mutants`` applies each to the source, runs the proofs named
for it (``python -m proofs RULE...`` in a fresh process), requires that they fail, and
restores the file (also when interrupted).  Exit status 1 when a mutant survives.

Each mutant is wrong only outside the samples the old proofs used: the proofs that kill
them quantify over symbolic range ends, every rank / axis / placement up to a bound, a
grammar of numerators, symbolic polynomial coefficients, or the emitted check's text.
"""
from __future__ import annotations

import os
import subprocess
import sys
import time
from typing import List, NamedTuple, Tuple

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


class Mutant(NamedTuple):
    name: str
    path: str            # relative to the repository root
    old: str             # the exact source text replaced (must occur once)
    new: str
    rules: Tuple[str, ...]


MUTANTS: List[Mutant] = [
    Mutant("vr_min ignores the arguments after the third", "symshape/algebra/ranges.py",
           "    return reduce(min_step, args)\n",
           "    return reduce(min_step, list(args)[:3])\n",
           ("range.min",)),
    Mutant("x // k folded to 0 when x can equal k", "symshape/algebra/simplify.py",
           "if b.lower >= 0 and b.upper < den:", "if b.lower >= 0 and b.upper <= den:",
           ("fold.small_numerator",)),
    Mutant("Cauchy root bound without its + 1", "symshape/reasoning/symbolic.py",
           "    return 1 + max([E.ceildiv(abs(c), lead)",
           "    return max([E.ceildiv(abs(c), lead)",
           ("bounds.univariate",)),
    Mutant("no check for a range with only an upper end", "symshape/contract/writer.py",
           "if not is_inf(vr.lower) or not is_inf(vr.upper):", "if not is_inf(vr.lower):",
           ("check.emitted",)),
    Mutant("np.stack(..., axis=-1) normalised against the input rank",
           "capture/ops/shape.py", "ax = norm_axis(axis, nd + 1)", "ax = norm_axis(axis, nd)",
           ("shape.pad_tile_repeat_stack",)),
    Mutant("np.tile with more repetitions than axes", "capture/ops/shape.py",
           "shape = (1,) * (nd - x.ndim) + tuple(x.shape)", "shape = tuple(x.shape)",
           ("shape.pad_tile_repeat_stack",)),
    Mutant("non-adjacent advanced indices x[:, i, :, j] kept in place",
           "capture/ops/advanced.py", "    if not adjacent:\n        shape.extend(B)",
           "    if False:\n        shape.extend(B)", ("index.advanced",)),
    # op shape rules generalized to every rank up to 4 / every axis / symbolic offsets
    # (proofs/op_shape_rules.py): each mutant is wrong only where no old sample looked
    Mutant("a reduction over three or more axes reduces only two", "capture/ops/reduction.py",
           "        return tuple(sorted(axes))\n", "        return tuple(sorted(axes))[:2]\n",
           ("reduce.axes",)),
    Mutant("np.argmax(axis=None, keepdims=True) keeps one axis, not ndim",
           "capture/ops/reduction.py", "            shape = (1,) * x.ndim if keepdims else ()",
           "            shape = (1,) if keepdims else ()", ("reduce.arg",)),
    Mutant("np.cumsum / np.sort with axis=0 flatten (axis tested for truth)",
           "capture/ops/reduction.py",
           "    if axis is None:\n        return reshape(t, x, (-1,)), 0",
           "    if not axis:\n        return reshape(t, x, (-1,)), 0", ("reduce.flat_or_axis",)),
    Mutant("np.moveaxis drops the axes after the third", "capture/ops/shape.py",
           "    order = [n for n in range(x.ndim) if n not in src]",
           "    order = [n for n in range(x.ndim) if n not in src][:2]", ("shape.permute",)),
    Mutant("np.expand_dims with a tuple normalises against rank + 1", "capture/ops/shape.py",
           "    nd = x.ndim + len(axes)", "    nd = x.ndim + 1", ("shape.expand_dims",)),
    Mutant("np.squeeze with a negative axis removes nothing", "capture/ops/shape.py",
           "    drop = sorted(norm_axis(i, x.ndim) for i in _sizes(axis))",
           "    drop = sorted(i for i in _sizes(axis))", ("shape.squeeze",)),
    Mutant("np.squeeze(x, (0, 0)) squeezes the repeated axis once (the code before the fix)",
           "capture/ops/shape.py", "    if len(set(drop)) != len(drop):", "    if False:",
           ("shape.squeeze",)),
    Mutant("np.diagonal with a negative offset shortens the wrong axis", "capture/ops/shape.py",
           "else smin(n1 + offset, n2))", "else smin(n1, n2 + offset))", ("shape.diagonal",)),
    Mutant("x[i] accepts i below -n", "capture/ops/indexing.py",
           "        if not (v < n) or not (v >= -n):", "        if not (v < n):",
           ("index.basic",)),
    Mutant("np.take with a 2-D index keeps its first axis only", "capture/ops/advanced.py",
           "    shape = x.shape[:ax] + i.shape + x.shape[ax + 1:]",
           "    shape = x.shape[:ax] + i.shape[:1] + x.shape[ax + 1:]", ("index.take",)),
    Mutant("np.take_along_axis keeps the array's size on the axis", "capture/ops/advanced.py",
           "    shape.insert(ax, i.shape[ax])", "    shape.insert(ax, x.shape[ax])",
           ("index.take_along_axis",)),
    Mutant("N-D np.dot contracts b's first axis, not its second-to-last",
           "capture/ops/linalg.py", "[x.ndim - 1], [max(y.ndim - 2, 0)]",
           "[x.ndim - 1], [0]", ("linalg.dot",)),
    Mutant("np.tensordot(axes=0) contracts one axis", "capture/ops/linalg.py",
           "        n = int(axes)\n", "        n = int(axes) or 1\n", ("linalg.tensordot",)),
    Mutant("np.concatenate checks only the first three axes' sizes", "capture/ops/shape.py",
           "        for i in range(nd):\n            if i != ax and not",
           "        for i in range(min(nd, 3)):\n            if i != ax and not",
           ("concatenate.shape",)),
    Mutant("np.split at indices slices axis 1 for every axis past 0", "capture/ops/shape.py",
           "        out.append(getitem(t, x, (slice(None),) * ax + (slice(lo, hi),)))",
           "        out.append(getitem(t, x, (slice(None),) * min(ax, 1) + (slice(lo, hi),)))",
           ("split.sizes",)),
    Mutant("np.diff with axis <= -2 differences the last axis", "capture/ops/reduction.py",
           "    ax = norm_axis(axis, x.ndim)\n    n = int(n)",
           "    ax = axis % x.ndim if axis >= -1 else x.ndim - 1\n    n = int(n)",
           ("diff.length",)),
    Mutant("np.pad with one width pads two axes", "capture/ops/shape.py",
           "    if len(widths) == 1:\n        widths = widths * x.ndim",
           "    if len(widths) == 1:\n        widths = widths * 2",
           ("shape.pad_tile_repeat_stack",)),
    Mutant("reshape infers -1 from the constant sizes only", "capture/ops/shape.py",
           "        known = prod(s for i, s in enumerate(target) if i != holes[0])",
           "        known = prod(s for i, s in enumerate(target) if i != holes[0] and "
           "type(s) is int)", ("reshape.infer",)),
    Mutant("np.kron pads the shorter shape on the right", "capture/ops/linalg_calls.py",
           "    xs = (1,) * (nd - len(xs)) + xs", "    xs = xs + (1,) * (nd - len(xs))",
           ("linalg.kron",)),
    Mutant("np.convolve(mode='valid') assumes the first operand is the longer",
           "capture/ops/signal.py", "        return (sym_max(n, m) - _min(n, m) + 1,)",
           "        return (n - m + 1,)", ("signal.correlate",)),
    Mutant("np.histogram admits an empty edges array (count -1)",
           "capture/ops/statistics.py",
           "        if not (arr.shape[0] >= 1):\n            raise a.fail(",
           "        if False:\n            raise a.fail(", ("stats.histogram_bins",)),
    Mutant("-n keeps n's example value", "symshape/sizes/symint.py",
           "E.neg(self.expr), None if self.hint is None else -self.hint)",
           "E.neg(self.expr), None if self.hint is None else self.hint)", ("symint.operators",)),
    Mutant("np.vstack of an array's rows admits no rows", "capture/ops/shape.py",
           "    if x.ndim == 0 or not (x.shape[0] >= 1):", "    if x.ndim == 0:",
           ("shape.vstack",)),
    Mutant("np.outer takes b's first axis, not its size", "capture/ops/linalg.py",
           "(prod(x.shape), prod(y.shape))", "(prod(x.shape), y.shape[0])", ("linalg.outer",)),
    Mutant("np.inner contracts b's first axis", "capture/ops/linalg.py",
           '[x.ndim - 1], [y.ndim - 1], "np.inner"', '[x.ndim - 1], [0], "np.inner"',
           ("linalg.inner",)),
    Mutant("broadcasting three or more operands ignores the first one's extra axes",
           "capture/ops/elementwise.py",
           "    nd = max((len(s) for s in shapes), default=0)\n    out: List[Any] = []",
           "    nd = max((len(s) for s in shapes[-2:]), default=0)\n    out: List[Any] = []",
           ("broadcast.shapes",)),
    Mutant("implicit einsum output in order of appearance, not alphabetical",
           "capture/ops/linalg.py",
           'out = "".join(sorted(c for c in set(letters) if letters.count(c) == 1))',
           'out = "".join(c for c in letters if letters.count(c) == 1)',
           ("linalg.contract",)),
    Mutant("np.ravel of a 0-d array stays 0-d", "capture/ops/shape.py",
           "                        % (order, _frame()))\n    return reshape(t, x, (-1,))",
           "                        % (order, _frame()))\n    return x if x.ndim == 0 else "
           "reshape(t, x, (-1,))", ("shape.ravel",)),
    Mutant("np.atleast_1d of several arrays keeps their 0-d ones", "capture/ops/shape.py",
           "reshape(t, x, (1,)) if x.ndim == 0 else",
           "reshape(t, x, (1,)) if x.ndim == 0 and len(arys) == 1 else",
           ("shape.atleast_1d",)),
    Mutant("np.atleast_2d of a 0-d array is (1,)", "capture/ops/shape.py",
           "            x = reshape(t, x, (1, 1))", "            x = reshape(t, x, (1,))",
           ("shape.atleast_2d",)),
    Mutant("np.arange rounds toward zero for steps below -2", "capture/ops/creation.py",
           "    n = sym_ceildiv(span, step)\n",
           "    n = sym_ceildiv(span, step) if step >= -2 else span // step\n",
           ("arange.length",)),
    Mutant("np.broadcast_arrays of three or more arrays leaves them unbroadcast (meshgrid)",
           "capture/ops/elementwise.py", "x if tuple(map(to_expr, x.shape)) == want else",
           "x if tuple(map(to_expr, x.shape)) == want or len(xs) > 2 else",
           ("broadcast.shapes",)),
    Mutant("np.nanmax / np.percentile admit an empty reduced extent (the code before the fix)",
           "capture/ops/statistics.py", "    if a.what in _NEEDS_ELEMENTS:",
           "    if False:", ("stats.reduction",)),
    Mutant("a NaN-reduction over a tuple of axes keeps the last one", "capture/ops/npcall.py",
           "        norm.add(a)\n", "        norm.add(a)\n        if len(norm) == len(axes) > 1:\n"
           "            norm.discard(a)\n", ("stats.reduction",)),
    Mutant("np.nansum(x, (0, 0)) reduces the repeated axis once (the code before the fix)",
           "capture/ops/npcall.py", "    if len(norm) != len(axes):", "    if False:",
           ("stats.reduction",)),
    Mutant("np.average with weights admits an empty averaged extent (the code before the fix)",
           "capture/ops/statistics.py",
           "        if w is not None and i in reduced and not (x.shape[i] >= 1):",
           "        if False:", ("stats.average",)),
    Mutant("np.average admits an empty result (the code before the fix)",
           "capture/ops/statistics.py",
           "        if w is None and i not in reduced and not (x.shape[i] >= 1):",
           "        if False:",
           ("stats.average",)),
    Mutant("np.select broadcasts the choices but not the conditions",
           "capture/ops/selection.py",
           'shapes = _choices_shapes(a, "condlist") + _choices_shapes(a, "choicelist")',
           'shapes = _choices_shapes(a, "choicelist")', ("broadcast.shapes",)),
    Mutant("np.partition / argpartition admit a negative kth below -n", "capture/tracer.py",
           "        if not (-n <= k) or not (k < n):", "        if not (k < n):",
           ("select.partition",)),
    Mutant("np.nancumsum(axis=None) keeps the first axis only", "capture/ops/statistics.py",
           "        return (prod(x.shape),)",
           "        return (prod(x.shape[:1]),)", ("stats.scan",)),
    # the axis handling of the ops that keep the shape, proven on a symbolic rank
    Mutant("an axis equal to ndim is admitted (norm_axis's bound off by one)",
           "capture/ops/shape.py", "    if not -ndim <= a < ndim:",
           "    if not -ndim <= a <= ndim:", ("shape.flip", "shape.roll", "reduce.flat_or_axis")),
    Mutant("np.flip tests each axis for a repeat against the first one only",
           "capture/ops/shape.py", "        if a in seen:\n", "        if a in seen[:1]:\n",
           ("shape.flip",)),
    Mutant("np.roll pairs several shifts with one axis only when they are one",
           "capture/ops/shape.py", "    return m is None or n == m or n == 1 or m == 1",
           "    return m is None or n == m or n == 1", ("shape.roll",)),
    # the solver's dispatch and fact refresh, proven on the grammar of guards
    Mutant("refresh_facts drops every fact the ranges do not refute", "symshape/reasoning/solver.py",
           "            if type(g) is not bool and decide_ranges(env, g) is True:\n"
           "                g = True",
           "            if type(g) is not bool and decide_ranges(env, g) is not False:\n"
           "                g = True", ("solve.refresh_facts",)),
    Mutant("learn narrows the range of a * s + k <= 0 by one too many", "symshape/reasoning/solver.py",
           "                refine(env, s, le_to_range(a, e.const))",
           "                refine(env, s, le_to_range(a, e.const + 1))", ("solve.dispatch",)),
    # issue 46: the Z3 encoding of Min / Max was proven at arity 3 only
    Mutant("the Z3 encoding of Min / Max ignores the arguments after the third",
           "symshape/reasoning/z3bridge.py", "    return functools.reduce(min_step, args)\n",
           "    return functools.reduce(min_step, args[:3])\n", ("z3bridge.minmax_encoding",)),
    # issue 46: a rule refusing what NumPy accepts passed every proof of "admitted => NumPy"
    Mutant("np.vstack of an array's rows asks for two rows (over-restrictive)",
           "capture/ops/shape.py", "    if x.ndim == 0 or not (x.shape[0] >= 1):",
           "    if x.ndim == 0 or not (x.shape[0] >= 2):", ("shape.vstack",)),
    # issue 46: le_to_range / ne_to_range were proven on coefficients from small lists
    Mutant("le_to_range one too high for coefficients above 3", "symshape/reasoning/solver.py",
           "return ValueRange(NEG_INT_OO, (-k) // a)",
           "return ValueRange(NEG_INT_OO, (-k) // a + (1 if a > 3 else 0))",
           ("solve.le_to_range",)),
    Mutant("ne_to_range drops one too many at an upper end above 100", "symshape/reasoning/solver.py",
           "return ValueRange(r.lower, v - 1)",
           "return ValueRange(r.lower, v - (2 if v > 100 else 1))", ("solve.ne_to_range",)),
    Mutant("vr_mod without wrap starts one high for moduli above 7", "symshape/algebra/ranges.py",
           "return ValueRange(a.lower % m, a.upper % m)",
           "return ValueRange(a.lower % m + (1 if m > 7 and a.lower % m < a.upper % m else 0), "
           "a.upper % m)", ("range.mod_nowrap",)),
    Mutant("decide_ranges takes e <= 0 for an upper end of 1", "symshape/reasoning/decision.py",
           "        return True if b.upper <= 0 else", "        return True if b.upper <= 1 else",
           ("decide.by_range",)),
    Mutant("range_constraints prints a root's declared range, not its range under the guards",
           "symshape/contract/exact_ranges.py",
           "    state[0][s.expr] = exact_range(state[1], s.expr)",
           "    state[0][s.expr] = state[1].ranges[s]", ("contract.range_constraints",)),
]


def run_mutant(m: Mutant, python: str = sys.executable) -> Tuple[bool, str, float]:
    """Apply ``m``, run its proofs, restore the file: (killed, last output line, seconds)."""
    path = os.path.join(ROOT, m.path)
    with open(path) as f:
        original = f.read()
    if original.count(m.old) != 1:
        raise RuntimeError("%s: the mutated text occurs %d times in %s"
                           % (m.name, original.count(m.old), m.path))
    t0 = time.perf_counter()
    try:
        with open(path, "w") as f:
            f.write(original.replace(m.old, m.new))
        r = subprocess.run([python, "-m", "proofs", *m.rules], cwd=ROOT, capture_output=True,
                           text=True, timeout=600)
    finally:
        with open(path, "w") as f:
            f.write(original)
    out = (r.stdout + r.stderr).strip().splitlines()
    fail = next((l for l in out if l.startswith("FAIL")), out[-1] if out else "")
    return r.returncode != 0, fail, time.perf_counter() - t0


def main() -> int:
    survivors = 0
    for m in MUTANTS:
        killed, line, secs = run_mutant(m)
        survivors += not killed
        print("%-8s %-58s %5.1fs  %s" % ("killed" if killed else "SURVIVED", m.name, secs,
                                          line[:160]))
    print("mutants: %d killed, %d survived" % (len(MUTANTS) - survivors, survivors))
    return 1 if survivors else 0


if __name__ == "__main__":
    sys.exit(main())
