"""Op shape rules proven for every rank up to a bound, every axis (negative ones included)
and every offset / count argument of a range, with every size symbolic.

Each case traces a one-op NumPy program with the real tracer (``op_rules.Contract``): each
input axis is its own named ``Dim(min=0)`` (``min=1`` only where the op's domain says so),
so the sizes are Z3 integers >= 0; the claim is that every output size the engine computed
equals NumPy's documented shape (``proofs/numpy_shapes.py``, written from NumPy's docs, not
from ``capture/ops``) and that every input the contract admits satisfies NumPy's own
conditions (equal sizes, divisibility, non-empty extents), for every point of the contract.
Offsets and positions that NumPy takes as Python ints (split points, slice bounds, integer
indices, pad widths) are traced as symbolic int inputs, so they are quantified too; counts
that fix the number of outputs (sections, repetitions, ``n`` of ``np.diff``) run over a range.
"""
from __future__ import annotations

import itertools
from typing import Callable, Dict, List, Sequence

import numpy as np
import z3

import symshape as ss

from . import numpy_shapes as N
from . import bounded, proves
from .converse import admits_numpy_inputs
from .op_rules import Contract
from .pyint import require

#: the highest rank every rule here is proven for (3 where a rule says so)
MAX_RANK = 4
DYN = ss.Dim.DYNAMIC
SIZES = (3, 4, 5, 6)
#: how many calls on inputs of their own one traced program holds (``_check_many``)
BATCH = 16
#: as many, for calls whose sizes go through // and % (Z3's converse query grows harder)
SMALL_BATCH = 4


def _dims(prefix: str, rank: int, lo: int = 0, static: Dict[int, int] = None) -> tuple:
    static = static or {}
    return tuple(static[i] if i in static else ss.Dim("%s%d" % (prefix, i), min=lo)
                 for i in range(rank))


def _check(f, arrays: Sequence, spec: Callable, what: str, ints: Sequence = (),
           lo: int = 0, names: Sequence[str] = "xyz", not_one: bool = False) -> None:
    """Trace ``f(*arrays, *ints)`` (arrays as ``(shape, static axes)``, ints symbolic) and
    prove the output shapes are ``spec(P, input shapes, int values)``'s for every point of
    the contract, and NumPy's conditions hold there; and conversely that the contract
    admits every input NumPy accepts (``proofs/converse.py``; ``not_one``: the symbolic
    sizes other than 1, a broadcasting sweep tracing its size-1 axes as static 1s)."""
    args, shapes = [], {}
    for name, (shape, static) in zip(names, arrays):
        args.append(np.ones(shape))
        shapes[name] = _dims(name, len(shape), lo, static)
    for k, v in enumerate(ints):
        args.append(v)
        shapes["k%d" % k] = DYN
    tr = Contract(f, tuple(args), shapes)
    ins = tr.ins
    for sh, (shape, static) in zip(ins, arrays):
        free = [d for i, d in enumerate(sh) if i not in (static or {})]
        require(all(not z3.is_int_value(d) for d in free),
                "%s: the trace specialised an input size: %s", what, sh)

    def full(P, ins_):
        out, ok = spec(P, [tuple(s) for s in ins_[:len(arrays)]], ins_[len(arrays):])
        return out, [z3.BoolVal(c) if isinstance(c, bool) else c for c in ok]
    admits_numpy_inputs(tr, arrays, spec, ints, lo, what, not_one)
    if any(o for o in tr.outs):
        tr.prove(full, what)
        return
    # every output is a scalar (np.argmax(x)): nothing of the code's to compare but the
    # rank; NumPy's conditions must still hold on the contract
    want, ok = full(tr.P, ins)
    require([len(w) for w in want] == [len(o) for o in tr.outs],
            "%s: ranks %s, NumPy's are %s", what, [len(o) for o in tr.outs],
            [len(w) for w in want])
    tr.P.prove(z3.And(*ok), tr.hyps, what=what)


def _check_all(cases: Sequence, arrays: Sequence, what: str, ints: Sequence = (),
               not_one: bool = False) -> None:
    """``_check`` of several calls on the same inputs as one program returning all their
    results (one trace, one proof): ``cases`` are ``(f, spec)`` pairs as for ``_check``.
    Only for calls that record no guard, so that the contract is each call's own."""
    g, _, spec, _ = _group(cases, arrays, ints)
    _check(_prog(g, len(arrays), len(ints)), arrays, spec, "%s (%d calls)" % (what, len(cases)),
           ints=ints, not_one=not_one)


def _check_many(cases: Sequence, what: str, not_one: bool = False) -> None:
    """``_check`` of several calls, each on inputs of its own, as one program of all their
    inputs returning all their results (one trace, one proof, one converse query):
    ``cases`` are ``(f, arrays, spec, ints)`` as for ``_check``.  Each call's sizes are
    symbols of its own, so the contract is the conjunction of each call's own (a guard one
    call records mentions its own sizes only) and the claims -- NumPy's shapes and
    conditions, and the converse -- are each call's, proven for all of them at once."""
    arrays: List = []
    ints: List = []
    cuts = []
    for _, arr, _, iv in cases:
        cuts.append((len(arrays), len(arrays) + len(arr), len(ints), len(ints) + len(iv)))
        arrays += list(arr)
        ints += list(iv)
    n = len(arrays)

    def g(*a):
        out = []
        for (f, _, _, _), (i, j, k, m) in zip(cases, cuts):
            r = f(*a[i:j], *a[n + k:n + m])
            out.extend(r if isinstance(r, (tuple, list)) else [r])
        return tuple(out)

    def spec(P, ins, v):
        shapes, ok = [], []
        for (_, _, sp, _), (i, j, k, m) in zip(cases, cuts):
            o, c = sp(P, ins[i:j], v[k:m])
            shapes += o
            ok += c
        return shapes, ok
    names = ["a%d_" % i for i in range(n)]
    params = ", ".join(names + ["k%d" % i for i in range(len(ints))])
    prog = eval("lambda %s: g(%s)" % (params, params), {"g": g})  # noqa: S307
    _check(prog, arrays, spec, "%s (%d calls)" % (what, len(cases)), ints=ints, names=names,
           not_one=not_one)


def _group(cases: Sequence, arrays: Sequence, ints: Sequence = ()) -> tuple:
    """Several calls on the same inputs (``(f, spec)`` pairs as for ``_check_all``) as one
    ``_check_many`` case: one function returning all their results, one spec."""
    fns = [f for f, _ in cases]

    def f(*a):
        out = []
        for fn in fns:
            r = fn(*a)
            out.extend(r if isinstance(r, (tuple, list)) else [r])
        return tuple(out)

    def spec(P, ins, v):
        shapes, ok = [], []
        for _, sp in cases:
            o, c = sp(P, ins, v)
            shapes += o
            ok += c
        return shapes, ok
    return f, list(arrays), spec, tuple(ints)


def _chunks(items: Sequence, size: int) -> List:
    """``items`` in consecutive lists of ``size`` (the last one shorter)."""
    items = list(items)
    return [items[i:i + size] for i in range(0, len(items), size)]


def _shape(rank: int, static: Dict[int, int] = None) -> tuple:
    static = static or {}
    return tuple(static.get(i, SIZES[i]) for i in range(rank)), static


def _sign_mix(axes: Sequence[int], nd: int) -> tuple:
    """The axes written alternately negative and positive (both spellings are covered)."""
    return tuple(a - nd if k % 2 == 0 else a for k, a in enumerate(axes))


# ---------------------------------------------------------------------------- reductions
def _bind1(fn, *a, **kw):
    """``fn(x, *a, **kw)`` as a program of ``x`` alone (a default would be one more
    input)."""
    return lambda x: fn(x, *a, **kw)


def _bind2(fn, *a, **kw):
    return lambda x, y: fn(x, y, *a, **kw)


def _prog(g, arrays: int, ints: int):
    """``g`` as a program whose parameters are named as ``_check`` names its inputs
    (``x, y, z`` then ``k0, k1, ...``): the static arguments live in ``g``'s closure."""
    params = ", ".join(list("xyz"[:arrays]) + ["k%d" % i for i in range(ints)])
    return eval("lambda %s: g(%s)" % (params, params), {"g": g})  # noqa: S307


#: the checks for a case outside the rule sweeps (tests/proofs/test_converse.py)
check_shapes, program_of = _check, _prog


@proves("reduce.flat_or_axis", over=bounded("every rank up to 4, every axis, sizes symbolic"))
def reduce_flat_or_axis():
    """np.cumsum, np.cumprod, np.sort and np.argsort for every rank 1..4 and axis None /
    every int axis: the input's shape (None: the flattened size)."""
    for rank in range(1, MAX_RANK + 1):
        _check_all([(_bind1(fn, axis=axis), lambda P, ins, v, a=axis: N.along_axis(ins[0], a))
                    for fn in (np.cumsum, np.sort, np.argsort, np.cumprod)
                    for axis in [None] + list(range(-rank, rank))],
                   [_shape(rank)], "cumsum / sort / argsort / cumprod(rank %d)" % rank)


# ---------------------------------------------------------------------------- axes
@proves("shape.permute", over=bounded("every rank up to 4, every permutation, sizes symbolic"))
def shape_permute():
    """np.transpose with every permutation of every rank 0..4 (written with negative axes
    for every other one) and axes=None; np.swapaxes with every pair of axes in [-r, r) and
    np.moveaxis with every source and destination in [-r, r), for every rank 1..4."""
    for rank in range(0, MAX_RANK + 1):
        perms = [None] + [tuple(a - rank if k % 2 else a for a in p)
                          for k, p in enumerate(itertools.permutations(range(rank)))]
        _check_all([(_bind1(np.transpose, axes=axes),
                     lambda P, ins, v, a=axes: N.transpose(ins[0], a)) for axes in perms],
                   [_shape(rank)], "np.transpose(rank %d, every permutation)" % rank)
    for rank in range(1, MAX_RANK + 1):
        pairs = list(itertools.product(range(-rank, rank), repeat=2))
        _check_all([(_bind1(np.swapaxes, i, j),
                     lambda P, ins, v, i=i, j=j: N.swapaxes(ins[0], i, j)) for i, j in pairs],
                   [_shape(rank)], "np.swapaxes(rank %d, every pair)" % rank)
        _check_all([(_bind1(np.moveaxis, i, j),
                     lambda P, ins, v, i=i, j=j: N.moveaxis(ins[0], i, j)) for i, j in pairs],
                   [_shape(rank)], "np.moveaxis(rank %d, every pair)" % rank)


# ---------------------------------------------------------------------------- joining
def concatenate_sweep() -> None:
    """np.concatenate of two and of three arrays of every rank 1..4 on every axis and None
    (part of ``concatenate.shape``)."""
    for rank in range(1, MAX_RANK + 1):
        cases = []
        for axis in [None] + list(range(-rank, rank)):
            spec = lambda P, ins, v, a=axis: N.concatenate(ins, a)     # noqa: E731
            cases.append((lambda x, y, a=axis: np.concatenate([x, y], axis=a),
                          [_shape(rank), _shape(rank)], spec, ()))
            cases.append((lambda x, y, z, a=axis: np.concatenate([x, y, z], axis=a),
                          [_shape(rank)] * 3, spec, ()))
        for part in _chunks(cases, BATCH):
            _check_many(part, "np.concatenate(2 and 3 x rank %d, every axis)" % rank)


def split_sweep() -> None:
    """np.split into k = 1..3 equal sections and np.array_split into k = 1..4, on every
    axis of every rank 1..4; np.split at two symbolic indices (examples in range, negative,
    past the end) on every axis of every rank 1..4 (part of ``split.sizes``)."""
    for rank in range(1, MAX_RANK + 1):
        cases = []
        for axis in range(-rank, rank):
            ax = axis % rank
            shp = tuple(6 if i == ax else SIZES[i] for i in range(rank))
            for k in (1, 2, 3):
                cases.append((lambda x, k=k, a=axis: tuple(np.split(x, k, axis=a)),
                              [(shp, {})],
                              lambda P, ins, v, k=k, a=axis: N.split_sections(P, ins[0], k, a),
                              ()))
            # array_split records no guard: every count in one program
            _check_all([(lambda x, k=k, a=axis: tuple(np.array_split(x, k, axis=a)),
                         lambda P, ins, v, k=k, a=axis: N.array_split_sections(P, ins[0], k, a))
                        for k in (1, 2, 3, 4)], [(shp, {})],
                       "np.array_split(rank %d, 1..4 sections, axis=%d)" % (rank, axis))
            for pts in ((2, 4), (-4, -1), (4, 9), (1, -2)):
                cases.append((lambda x, i, j, a=axis: tuple(np.split(x, [i, j], axis=a)),
                              [(shp, {})],
                              lambda P, ins, v, a=axis: N.split_indices(ins[0], v, a), pts))
        for part in _chunks(cases, SMALL_BATCH):
            _check_many(part, "np.split(rank %d, sections and [i, j], every axis)" % rank)


# ---------------------------------------------------------------------------- indexing
@proves("index.basic",
        over=bounded("every rank 1..4, one int / slice / None at every position, the int "
                     "and both slice bounds symbolic of every sign, steps 1, 2, -1, -3; an "
                     "Ellipsis before or after it or not (steps 2 and -3: not)"))
def index_basic():
    """x[...] with one int / slice / None component at every position of every rank 1..4,
    the rest full slices or an Ellipsis before or after it (slices of step 2 and -3: full
    slices only, the Ellipsis is placed alike whatever the step): int indices and slice
    bounds are symbolic ints (an example of each sign, of each sign pair for a slice: the
    trace specialises on the sign), steps 1, 2, -1 and -3."""
    for rank in range(1, MAX_RANK + 1):
        cases = []
        for pos in range(rank):
            for kind, ex in (("int", (1,)), ("int", (-2,)), ("slice", (1, -1)),
                             ("slice", (-4, 5)), ("slice", (1, 3)), ("slice", (-4, -1)),
                             ("none", ())):
                steps = (1, 2, -1, -3) if kind == "slice" else (None,)
                for step, ell in itertools.product(steps, ("", "before", "after")):
                    if ell == "before" and pos != rank - 1 or ell == "after" and pos != 0:
                        continue
                    if ell and step not in (None, 1, -1):
                        continue        # the Ellipsis is placed alike whatever the step
                    cases.append(_index_case(rank, pos, kind, ex, step, ell))
        for part in _chunks(cases, SMALL_BATCH):
            _check_many(part, "x[int / slice / None] on rank %d" % rank)


def _index_case(rank: int, pos: int, kind: str, ex: tuple, step, ell: str) -> tuple:
    """The ``_check_many`` case of one index expression (its ints: the examples ``ex``)."""
    def items(vals):
        if kind == "int":
            comp = vals[0]
        elif kind == "slice":
            comp = slice(vals[0], vals[1], step)
        else:
            comp = None
        if ell == "before":
            return (Ellipsis, comp)
        if ell == "after":
            return (comp, Ellipsis)
        return (slice(None),) * pos + (comp,)
    return (lambda x, *v: x[items(v)], [_shape(rank)],
            lambda P, ins, v: N.basic_index(ins[0], items(tuple(v))), ex)


@proves("index.take", over=bounded("every rank 1..4, index arrays of every rank 0..2, every "
                                   "axis and None, sizes symbolic"))
def index_take():
    """np.take with index arrays of rank 0..2 on every axis (and None) of every rank 1..4."""
    for rank in range(1, MAX_RANK + 1):
        cases = [(lambda x, i, a=axis: np.take(x, i.astype(np.intp) % 1, axis=a),
                  [_shape(rank), ((2, 3)[:irank], {})],
                  lambda P, ins, v, a=axis: N.take(ins[0], ins[1], a), ())
                 for axis in [None] + list(range(-rank, rank)) for irank in (0, 1, 2)]
        for part in _chunks(cases, BATCH):
            _check_many(part, "np.take(rank %d, index ranks 0..2, every axis)" % rank)


@proves("index.take_along_axis", over=bounded("every rank up to 4, every axis, sizes symbolic"))
def index_take_along_axis():
    """np.take_along_axis on every axis of every rank 1..4, indices of the array's sizes
    and, off the axis, of size 1 (broadcast)."""
    for rank in range(1, MAX_RANK + 1):
        cases = []
        for axis in range(-rank, rank):
            ax = axis % rank
            for ones in (False, True):
                static = {i: 1 for i in range(rank) if i != ax} if ones else {}
                ishape = tuple(static.get(i, 2 if i == ax else SIZES[i]) for i in range(rank))
                cases.append((lambda x, i, a=axis: np.take_along_axis(
                    x, i.astype(np.intp) % 1, a), [_shape(rank), (ishape, static)],
                    lambda P, ins, v, a=axis: N.take_along_axis(ins[0], ins[1], a), ()))
        for part in _chunks(cases, BATCH):
            _check_many(part, "np.take_along_axis(rank %d, every axis)" % rank, not_one=True)


# ---------------------------------------------------------------------------- repetition
def repeat_pad_sweep() -> None:
    """np.repeat with counts 0..3 on every axis and None of every rank 1..4; np.pad with a
    symbolic width, a (before, after) pair of symbolic widths for every axis and one
    constant pair per axis, for every rank 1..4 (part of ``shape.pad_tile_repeat_stack``)."""
    for rank in range(1, MAX_RANK + 1):
        _check_all([(_bind1(np.repeat, repeats=r, axis=axis),
                     lambda P, ins, v, a=axis, r=r: N.repeat(ins[0], r, a))
                    for axis, r in itertools.product([None] + list(range(-rank, rank)),
                                                     range(4))],
                   [_shape(rank)], "np.repeat(rank %d, every axis, counts 0..3)" % rank)
        _check(_prog(lambda x, w: np.pad(x, w), 1, 1), [_shape(rank)],
               lambda P, ins, v: N.pad(ins[0], v[0]), "np.pad(rank %d, w)" % rank, ints=(2,))
        _check(_prog(lambda x, a, b: np.pad(x, (a, b)), 1, 2), [_shape(rank)],
               lambda P, ins, v: N.pad(ins[0], tuple(v)), "np.pad(rank %d, (a, b))" % rank,
               ints=(1, 3))
        pairs = tuple((k % 3, (k + 1) % 2) for k in range(rank))
        _check(_bind1(np.pad, pad_width=pairs), [_shape(rank)],
               lambda P, ins, v, p=pairs: N.pad(ins[0], p), "np.pad(rank %d, %s)"
               % (rank, pairs))


@proves("shape.diagonal", over=bounded("every rank 2..4, every ordered axis pair, offsets "
                                       "-3..3, sizes symbolic"))
def shape_diagonal():
    """np.diagonal for every rank 2..4, every ordered pair of distinct axes (written with
    both signs) and offsets -3..3."""
    for rank in range(2, MAX_RANK + 1):
        cases = []
        for i, j in itertools.permutations(range(rank), 2):
            a1, a2 = (i - rank, j) if (i + j) % 2 else (i, j - rank)
            cases += [(_bind1(np.diagonal, offset=off, axis1=a1, axis2=a2),
                       lambda P, ins, v, o=off, p=a1, q=a2: N.diagonal(ins[0], o, p, q))
                      for off in range(-3, 4)]
        _check_all(cases, [_shape(rank)], "np.diagonal(rank %d, every pair, offsets -3..3)"
                   % rank)


# ---------------------------------------------------------------------------- products
@proves("linalg.dot", over=bounded("every pair of ranks 1..4, sizes symbolic"))
def linalg_dot():
    """np.dot for every pair of ranks 1..4: NumPy's shape, and the
    contract admits only equal contracted sizes."""
    cases = []
    for ra, rb in itertools.product(range(1, MAX_RANK + 1), repeat=2):
        sa = tuple(SIZES[i] for i in range(ra))
        sb = [SIZES[i] for i in range(rb)]
        if rb == 1:
            sb[0] = sa[-1]
        else:
            sb[-2] = sa[-1]
        cases.append((lambda x, y: np.dot(x, y), [(sa, {}), (tuple(sb), {})],
                      lambda P, ins, v: N.dot(ins[0], ins[1]), ()))
    for part in _chunks(cases, BATCH):
        _check_many(part, "np.dot(every pair of ranks 1..4)")


@proves("linalg.tensordot", over=bounded("every pair of ranks 1..4, every integer axes= up "
                                         "to the smaller rank, sizes symbolic"))
def linalg_tensordot():
    """np.tensordot(a, b, axes=k) for every pair of ranks 1..4 and every k from 0 to the
    smaller rank."""
    cases = []
    for ra, rb in itertools.product(range(1, MAX_RANK + 1), repeat=2):
        for k in range(0, min(ra, rb) + 1):
            sa = tuple(SIZES[i] for i in range(ra))
            sb = tuple(sa[ra - k + i] if i < k else SIZES[(i + 1) % 4] for i in range(rb))
            cases.append((_bind2(np.tensordot, axes=k), [(sa, {}), (sb, {})],
                          lambda P, ins, v, k=k: N.tensordot(ins[0], ins[1], k), ()))
    for part in _chunks(cases, BATCH):
        _check_many(part, "np.tensordot(every pair of ranks 1..4, every axes=k)")


# ---------------------------------------------------------------------------- broadcasting
def broadcast_sweep() -> None:
    """x + y for every pair of ranks 0..4 and every assignment, per aligned axis, of the
    example relation (equal sizes, x's size 1, y's size 1): the contract admits only
    broadcastable sizes and the result is NumPy's (part of ``broadcast.shapes``)."""
    for ra, rb in itertools.product(range(0, MAX_RANK + 1), repeat=2):
        k = min(ra, rb)
        cases = []
        for pat in itertools.product(("eq", "x1", "y1"), repeat=k):
            xs: Dict[int, int] = {}
            ys: Dict[int, int] = {}
            for n, p in enumerate(pat):       # a size 1 is static (an example 1 specialises)
                if p == "x1":
                    xs[ra - k + n] = 1
                elif p == "y1":
                    ys[rb - k + n] = 1
            sa = tuple(xs.get(i, SIZES[4 - ra + i]) for i in range(ra))
            sb = tuple(ys.get(i, SIZES[4 - rb + i]) for i in range(rb))
            cases.append((lambda x, y: x + y, [(sa, xs), (sb, ys)],
                          lambda P, ins, v: N.broadcast(*ins), ()))
        for part in _chunks(cases, BATCH):
            _check_many(part, "x + y (ranks %d, %d, every pattern of 1s)" % (ra, rb),
                        not_one=True)


def stack_tile_sweep() -> None:
    """np.stack of two arrays at every axis (negative ones included) of every rank 0..4,
    and np.tile of every rank 1..4 with reps tuples of every length 1..4 (2s and 3s), both
    directions (part of ``shape.pad_tile_repeat_stack``)."""
    cases = [(lambda x, y, a=axis: np.stack([x, y], axis=a), [_shape(rank)] * 2,
              lambda P, ins, v, a=axis: N.stack(ins, a), ())
             for rank in range(0, MAX_RANK + 1) for axis in range(-rank - 1, rank + 1)]
    for part in _chunks(cases, BATCH):
        _check_many(part, "np.stack(two arrays of ranks 0..4, every axis)")
    cases = []
    for rank in range(1, MAX_RANK + 1):
        for nreps in range(1, MAX_RANK + 1):
            reps = tuple(2 + (k % 2) for k in range(nreps))
            cases.append((_bind1(np.tile, reps), [_shape(rank)],
                          lambda P, ins, v, r=reps: N.tile(ins[0], r), ()))
    for part in _chunks(cases, BATCH):
        _check_many(part, "np.tile(ranks 1..4, reps of length 1..4)")


def advanced_sweep() -> None:
    """x[i0, ...] with one to three 1-D index arrays at every placement among the axes of
    every rank 1..4, the other axes full slices: adjacent arrays' broadcast shape replaces
    them in place, non-adjacent ones put it first (NumPy's "Combining advanced and basic
    indexing"); both directions (part of ``index.advanced``)."""
    cases = []
    for rank in range(1, MAX_RANK + 1):
        for n in range(1, min(rank, 3) + 1):
            for pos in itertools.combinations(range(rank), n):
                text = ", ".join("i[%d]" % pos.index(a) if a in pos else ":"
                                 for a in range(rank))
                f = eval("lambda x, *i: x[%s]" % text)   # noqa: S307
                arrays = [_shape(rank)] + [((2,), {})] * n
                cases.append((lambda x, *i, f=f: f(x, *(a.astype(np.intp) % 1 for a in i)),
                              arrays,
                              lambda P, ins, v, p=pos: N.advanced_index(ins[0], ins[1:], p),
                              ()))
    # index arrays of equal example lengths trace their broadcast as equal sizes (an
    # example 1 would specialise): the converse covers the sizes other than 1
    for part in _chunks(cases, BATCH):
        _check_many(part, "x[index arrays at every placement, ranks 1..4]", not_one=True)


def matmul_sweep() -> None:
    """x @ y for every pair of ranks 1..4 and every assignment, per aligned batch axis, of
    the example relation (equal sizes, x's size 1, y's size 1; a size 1 static), the
    contracted sizes equal examples: the contract admits only NumPy's inputs, all of them,
    and the result is NumPy's (part of ``matmul.shape``)."""
    for ra, rb in itertools.product(range(1, MAX_RANK + 1), repeat=2):
        k = min(ra, rb) - 2
        cases = []
        for pat in itertools.product(("eq", "x1", "y1"), repeat=max(k, 0)):
            xs: Dict[int, int] = {}
            ys: Dict[int, int] = {}
            for n, p in enumerate(pat):       # batch axes aligned on the right of the batch
                if p == "x1":
                    xs[ra - 2 - k + n] = 1
                elif p == "y1":
                    ys[rb - 2 - k + n] = 1
            sa = [xs.get(i, SIZES[(i + 1) % 4]) for i in range(ra)]
            sb = [ys.get(i, SIZES[(i + 1) % 4]) for i in range(rb)]
            for n in range(max(k, 0)):         # equal examples where the pattern says equal
                if pat[n] == "eq":
                    sb[rb - 2 - k + n] = sa[ra - 2 - k + n]
            sb[0 if rb == 1 else rb - 2] = sa[-1]
            cases.append((lambda x, y: x @ y, [(tuple(sa), xs), (tuple(sb), ys)],
                          lambda P, ins, v: N.matmul(ins[0], ins[1]), ()))
        for part in _chunks(cases, BATCH):
            _check_many(part, "x @ y (ranks %d, %d, every pattern of batch 1s)" % (ra, rb),
                        not_one=True)


# ---------------------------------------------------------------------------- reshape
def _ones_patterns(ranks: Sequence[int], full: bool) -> List[List[Dict[int, int]]]:
    """Per operand, its static size-1 axes: for each output axis (aligned on the right),
    every subset of the operands present there set to 1 (``full``: every combination over
    the axes; else every subset at every axis, the subsets rotated across the axes)."""
    nd = max(ranks)
    present = [[k for k, r in enumerate(ranks) if r >= nd - a] for a in range(nd)]
    per_axis = [[c for n in range(len(p) + 1) for c in itertools.combinations(p, n)]
                for p in present]
    if full:
        choices = list(itertools.product(*per_axis))
    else:
        width = max([len(c) for c in per_axis] + [1])
        choices = [tuple(c[(s + a) % len(c)] for a, c in enumerate(per_axis))
                   for s in range(width)]
    out = []
    for choice in choices:
        statics: List[Dict[int, int]] = [{} for _ in ranks]
        for a, ones in enumerate(choice):
            for k in ones:
                statics[k][ranks[k] - nd + a] = 1
        out.append(statics)
    return out


def broadcast3_sweep() -> None:
    """np.where(c, x, y) for every triple of ranks 0..3 and every pattern of static size-1
    axes (every combination when the ranks are at most 2; with a rank 3, every subset of
    operands set to 1 at every axis), and np.clip(x, lo, hi) on the same triples without
    1s: the contract admits only broadcastable sizes and the result is NumPy's (part of
    ``broadcast.shapes``)."""
    same = lambda P, ins, v: N.broadcast(*ins)     # noqa: E731
    for ranks in itertools.product(range(0, MAX_RANK), repeat=3):
        cases = []
        for statics in _ones_patterns(ranks, full=max(ranks) <= 2):
            arrays = [(tuple(st.get(i, SIZES[4 - r + i]) for i in range(r)), st)
                      for r, st in zip(ranks, statics)]
            cases.append((lambda x, y, z: np.where(x > 0, y, z), arrays, same, ()))
        arrays = [(tuple(SIZES[4 - r + i] for i in range(r)), {}) for r in ranks]
        cases.append((lambda x, y, z: np.clip(x, y, z), arrays, same, ()))
        for part in _chunks(cases, BATCH):
            _check_many(part, "np.where / np.clip(ranks %s, patterns of 1s)" % (ranks,),
                        not_one=True)


# ---------------------------------------------------------------------------- einsum
#: an example size per einsum letter: equal letters get equal examples
_LETTER = dict(zip("ijklmnbABC", (3, 4, 5, 6, 2, 7, 2, 2, 3, 4)))


def _outputs(term_letters: str) -> List[str]:
    """Implicit output ('') and every ordered selection of the distinct letters."""
    letters = sorted(set(term_letters))
    return [""] + ["->" + "".join(p) for n in range(len(letters) + 1)
                   for p in itertools.permutations(letters, n)]


def _einsum_case(subs: Sequence[str], terms: Sequence[str]) -> tuple:
    """The einsum calls ``subs`` on operands whose axes are labelled ``terms`` (for their
    example sizes, ``_LETTER``; an ``...`` spelled out in A, B, C) as one ``_check_many``
    case: the calls share their operands, so one contract (the equalities the labels
    imply)."""
    arrays = [(tuple(_LETTER[c] for c in t), {}) for t in terms]
    return _group([(lambda *a, s=s: np.einsum(s, *a), lambda P, ins, v, s=s: N.einsum(s, ins))
                   for s in subs], arrays)


def _einsum_all(cases: Sequence, what: str) -> None:
    for part in _chunks(cases, BATCH):
        _check_many(part, "np.einsum(%s)" % what)


def einsum_sweep() -> None:
    """np.einsum with symbolic sizes (part of ``linalg.contract``): one operand of every
    rank 0..3 labelled by every string of its rank over as many letters (diagonals such as
    ``ii``, ``iji``, ``iii`` included) with the implicit output and every ordered
    selection of its letters; two operands of every pair of ranks 0..3, the first labelled
    ``ijk``, the second by every placement of shared letters and new ones, with the
    implicit output, the free letters in reverse order and all letters (batch axes kept);
    three operands (chains, a shared batch letter); and ``...`` standing for 0..2 axes in
    either or both operands, in front or behind."""
    cases = []
    for rank in range(0, MAX_RANK):
        for term in map("".join, itertools.product("ijk"[:rank], repeat=rank)):
            cases.append(_einsum_case([term + o for o in _outputs(term)], [term]))
    _einsum_all(cases, "one operand, every labelling and output")
    cases = []
    for ra, rb in itertools.product(range(0, MAX_RANK), repeat=2):
        a = "ijk"[:ra]
        for b in itertools.product(*[tuple(a) + ("lmn"[p],) for p in range(rb)]):
            b = "".join(b)
            if len(set(b)) < len(b):
                continue
            sub = a + "," + b
            free = [c for c in sub if c.isalpha() and sub.count(c) == 1]
            seen = "".join(dict.fromkeys(c for c in sub if c.isalpha()))
            outs = ["", "->" + "".join(sorted(free, reverse=True)), "->" + seen]
            cases.append(_einsum_case([sub + o for o in outs], [a, b]))
    _einsum_all(cases, "two operands, every placement of shared letters")
    cases = [_einsum_case([sub], sub.split("->")[0].split(","))
             for sub in ("ij,jk,kl", "ij,jk,kl->li", "bi,bj,bk->bijk", "i,i,i->", "i,j,k")]
    for pa, pb in itertools.product(("...", "i...", "...ij"), ("...", "...j", "j...")):
        for wa, wb in itertools.product(range(3), repeat=2):
            ta = pa.replace("...", "ABC"[2 - wa:2])
            tb = pb.replace("...", "ABC"[2 - wb:2])
            ell = pa + "," + pb
            subs = [ell, ell + "->..." + "".join(sorted(set(pa + pb) - {"."}))]
            cases.append(_einsum_case(subs, [ta, tb]))
    _einsum_all(cases, "three operands, and ... of widths 0..2")
