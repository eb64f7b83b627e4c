"""Op shape rules of the functions that keep a shape or size it from their arguments:
``np.flip`` / ``np.roll`` / ``np.tril`` / ``np.triu`` (every rank up to 4, every axis and
tuple of axes, offsets), ``np.kron`` (every pair of ranks up to 3), ``np.convolve`` /
``np.correlate`` (every mode) and ``np.linspace`` (a symbolic count; ``np.histogram``:
``proofs/histogram_every.py``): traced with symbolic sizes (``op_shape_rules._check``) against NumPy's
documented shapes (``proofs/numpy_shapes.py``)."""
from __future__ import annotations

import itertools

import numpy as np

from . import numpy_shapes as N
from . import bounded, every, proves
from .op_shape_rules import (BATCH, MAX_RANK, SIZES, _bind1, _bind2, _check, _check_all,
                             _check_many, _chunks, _group, _prog, _shape, _sign_mix)


@proves("shape.flip", over=bounded("every rank up to 4, every axis, sizes symbolic"))
def shape_flip():
    """np.flip over axis None, every int axis and every set of two or more axes (mixed
    signs) of every rank 1..4; np.fliplr / np.flipud of rank 2..4."""
    for rank in range(1, MAX_RANK + 1):
        axes = [None] + list(range(-rank, rank))
        axes += [_sign_mix(c, rank) for n in range(2, rank + 1)
                 for c in itertools.combinations(range(rank), n)]
        fns = [_bind1(np.flip, axis=axis) for axis in axes]
        fns += [_bind1(np.fliplr), _bind1(np.flipud)] if rank >= 2 else []
        _check_all([(f, lambda P, ins, v: N.flip(ins[0], None)) for f in fns], [_shape(rank)],
                   "np.flip / fliplr / flipud(rank %d, every axis)" % rank)


@proves("shape.roll", over=bounded("every rank up to 4, every axis, sizes symbolic"))
def shape_roll():
    """np.roll by a constant and by a symbolic shift, over axis None, every int axis and
    every pair of axes (mixed signs, one shift each), of every rank 1..4."""
    for rank in range(1, MAX_RANK + 1):
        axes = [None] + list(range(-rank, rank))
        same = lambda P, ins, v: N.flip(ins[0], None)   # noqa: E731
        _check_all([(_bind1(np.roll, 3, axis=axis), same) for axis in axes] +
                   [(_bind1(np.roll, (1, -2), axis=_sign_mix(c, rank)), same)
                    for c in itertools.combinations(range(rank), 2)],
                   [_shape(rank)], "np.roll(rank %d, every axis and pair)" % rank)
        _check_all([(lambda x, k, a=axis: np.roll(x, k, axis=a), same) for axis in axes],
                   [_shape(rank)], "np.roll(rank %d, k, every axis)" % rank, ints=(-2,))


@proves("creation.triangle", over=bounded("every rank 2..4, offsets -3..3, sizes symbolic"))
def creation_triangle():
    """np.tril / np.triu of every rank 2..4 with offsets -3..3: the input's shape."""
    for rank in range(2, MAX_RANK + 1):
        _check_all([(_bind1(fn, k=k), lambda P, ins, v: N.flip(ins[0], None))
                    for fn, k in itertools.product((np.tril, np.triu), range(-3, 4))],
                   [_shape(rank)], "np.tril / np.triu(rank %d, k = -3..3)" % rank)


@proves("linalg.kron", over=bounded("every pair of ranks 1..4, sizes symbolic"))
def linalg_kron():
    """np.kron for every pair of ranks 1..4: NumPy's shape (aligned on the right)."""
    _check_many([(_bind2(np.kron), [_shape(ra), _shape(rb)],
                  lambda P, ins, v: N.kron(ins[0], ins[1]), ())
                 for ra, rb in itertools.product(range(1, MAX_RANK + 1), repeat=2)],
                "np.kron(every pair of ranks 1..4)")


@proves("linalg.outer", over=bounded("every pair of ranks 0..4, sizes symbolic"))
def linalg_outer():
    """np.outer for every pair of ranks 0..4: (a.size, b.size), the inputs flattened."""
    cases = [(_bind2(np.outer), [_shape(ra), _shape(rb)],
              lambda P, ins, v: N.outer(ins[0], ins[1]), ())
             for ra, rb in itertools.product(range(0, MAX_RANK + 1), repeat=2)]
    for part in _chunks(cases, BATCH):
        _check_many(part, "np.outer(every pair of ranks 0..4)")


@proves("linalg.inner", over=bounded("every pair of ranks 1..4, sizes symbolic"))
def linalg_inner():
    """np.inner for every pair of ranks 1..4: a.shape[:-1] + b.shape[:-1], the last sizes
    equal on the contract."""
    cases = []
    for ra, rb in itertools.product(range(1, MAX_RANK + 1), repeat=2):
        sa = _shape(ra)[0]
        sb = tuple(SIZES[(i + 1) % 4] for i in range(rb - 1)) + (sa[-1],)
        cases.append((_bind2(np.inner), [(sa, {}), (sb, {})],
                      lambda P, ins, v: N.inner(ins[0], ins[1]), ()))
    _check_many(cases, "np.inner(every pair of ranks 1..4)")


@proves("signal.correlate",
        over=every("np.convolve and np.correlate, every mode, 1-D operands of every pair of "
                   "lengths n, m >= 1 (the rule's domain): one trace per function and mode, "
                   "lengths symbolic, whose contract admits every such pair (the converse) "
                   "and gives NumPy's length on all of it"))
def signal_correlate():
    """np.convolve and np.correlate in every mode: NumPy's length for every pair of lengths
    the contract admits, and it admits every pair NumPy accepts (n, m >= 1), so the one
    trace covers every ordering of the lengths (the rule computes with symbolic max / min,
    it does not branch on which is longer)."""
    for fn in (np.convolve, np.correlate):
        for mode in ("full", "same", "valid"):
            _check(_bind2(fn, mode=mode), [((5,), {}), ((3,), {})],
                   lambda P, ins, v, mode=mode: N.correlate(ins[0][0], ins[1][0], mode),
                   "%s(n, m, %s)" % (fn.__name__, mode))


@proves("creation.linspace",
        over=every("every count num (a symbolic int: the contract admits exactly num >= 0), "
                   "endpoint True and False; start and stop scalars, which the shape does "
                   "not read (retstep= and axis= are refused while tracing)"))
def creation_linspace():
    """np.linspace with a symbolic count, endpoint True and False: num samples, and the
    contract admits no negative count (NumPy raises there) and every other count (the
    converse: NumPy's domain num >= 0 is the example's sign)."""
    for endpoint in (True, False):
        _check(_prog(lambda x, k, e=endpoint: np.linspace(0.0, 1.0, k, endpoint=e) +
                     x[:1].sum(), 1, 1), [((3,), {})],
               lambda P, ins, v: N.linspace(v[0]), "np.linspace(0, 1, k, endpoint=%s)"
               % endpoint, ints=(7,))


def _stack_sweep(fn, spec) -> None:
    """``fn`` of two arrays of every rank 1..4 and of one array of every rank 2..4 (its rows,
    a symbolic number of them: the contract must admit no empty one)."""
    for rank in range(1, MAX_RANK + 1):
        _check(_prog(lambda x, y: fn([x, y]), 2, 0), [_shape(rank), _shape(rank)],
               lambda P, ins, v: spec(list(ins)), "%s of two rank-%d arrays"
               % (fn.__name__, rank))
        if rank >= 2:         # written in the program itself: the call is routed by name
            _check(_ROWS[fn], [_shape(rank)], lambda P, ins, v: spec(ins[0]),
                   "%s of the rows of a rank-%d array" % (fn.__name__, rank))


@proves("shape.hstack", over=bounded("two operands of every rank 1..4, the rows of every "
                                        "rank 2..4, sizes symbolic"))
def shape_hstack():
    """np.hstack: see ``_stack_sweep``."""
    _stack_sweep(np.hstack, N.hstack)


@proves("shape.vstack", over=bounded("two operands of every rank 1..4, the rows of every "
                                        "rank 2..4, sizes symbolic"))
def shape_vstack():
    """np.vstack: see ``_stack_sweep``."""
    _stack_sweep(np.vstack, N.vstack)


@proves("shape.dstack", over=bounded("two operands of every rank 1..4, the rows of every "
                                        "rank 2..4, sizes symbolic"))
def shape_dstack():
    """np.dstack: see ``_stack_sweep``."""
    _stack_sweep(np.dstack, N.dstack)


_ROWS = {np.hstack: lambda x: np.hstack(x), np.vstack: lambda x: np.vstack(x),
         np.dstack: lambda x: np.dstack(x)}


@proves("shape.ravel",
        over=every("every array NumPy can make: every rank from 0 to NumPy's limit (64, "
                   "asked of NumPy), every size symbolic; np.ravel, np.reshape(x, -1), "
                   "x.reshape(-1), x.ravel() and x.flatten()"))
def shape_ravel():
    """np.ravel, np.reshape(x, -1), x.reshape(-1), x.ravel() and x.flatten() of every rank
    NumPy allows: one axis of the size, and the contract admits every size.  Past rank 4
    the example sizes are 1 (an example of 2s past rank 59 is too big for NumPy to make);
    the trace keeps them symbolic (``_check`` fails on a size the trace specialised)."""
    fns = [np.ravel, lambda x: np.reshape(x, -1), lambda x: x.reshape(-1),
           lambda x: x.ravel(), lambda x: x.flatten()]
    cases = [_group([(f, lambda P, ins, v: N.ravel(ins[0])) for f in fns],
                    [(tuple(SIZES[i] if i < len(SIZES) else 1 for i in range(rank)), {})])
             for rank in range(0, N.numpy_max_rank() + 1)]
    for part in _chunks(cases, BATCH):
        _check_many(part, "ravel / reshape(-1) / flatten(every rank NumPy allows)")


def _atleast_sweep(fn, nd: int) -> None:
    """``fn`` of one array of every rank 0..4 and of three arrays of every triple of ranks
    0..4."""
    spec = lambda P, ins, v: N.atleast_nd(ins, nd)      # noqa: E731
    cases = [(_bind1(fn), [_shape(rank)], spec, ()) for rank in range(0, MAX_RANK + 1)]
    cases += [(lambda x, y, z: fn(x, y, z), [_shape(r) for r in ranks], spec, ())
              for ranks in itertools.product(range(0, MAX_RANK + 1), repeat=3)]
    for part in _chunks(cases, BATCH):
        _check_many(part, "%s(one and three operands of ranks 0..4)" % fn.__name__)


@proves("shape.atleast_1d",
        over=bounded("one and three operands of every rank 0..4, sizes symbolic"))
def shape_atleast_1d():
    """np.atleast_1d: see ``_atleast_sweep``."""
    _atleast_sweep(np.atleast_1d, 1)


@proves("shape.atleast_2d",
        over=bounded("one and three operands of every rank 0..4, sizes symbolic"))
def shape_atleast_2d():
    """np.atleast_2d, and np.atleast_3d (NumPy's own code, traced through reshape and basic
    indexing): see ``_atleast_sweep``."""
    _atleast_sweep(np.atleast_2d, 2)
    _atleast_sweep(np.atleast_3d, 3)


def meshgrid_sweep() -> None:
    """np.meshgrid of 1..3 inputs of rank 1 (and of a rank-2 and a rank-0 input, flattened),
    indexing 'xy' and 'ij', sparse or not: NumPy's own code, traced through reshape and
    np.broadcast_arrays (part of ``broadcast.shapes``)."""
    for ranks in ((1,), (1, 1), (1, 1, 1), (2, 0)):
        _check_all([(lambda *a, ix=ix, sp=sp: tuple(np.meshgrid(*a, indexing=ix, sparse=sp)),
                     lambda P, ins, v, ix=ix, sp=sp: N.meshgrid(ins, ix, sp))
                    for ix, sp in itertools.product(("xy", "ij"), (False, True))],
                   [_shape(r) for r in ranks], "np.meshgrid(ranks %s)" % (ranks,),
                   not_one=True)      # np.broadcast_arrays specialises a size 1


def select_choose_sweep() -> None:
    """np.select([x > 0, y > 0], [y, z]) and np.choose(i, [y, z], mode="wrap") (i an index
    array of x's shape) for every triple of ranks 0..3 and, for equal ranks, every subset
    of operands set to 1 at every axis (part of ``broadcast.shapes``)."""
    from .op_shape_rules import _ones_patterns
    calls = [(lambda x, y, z: np.select([x > 0, y > 0], [y, z]), "np.select"),
             (lambda x, y, z: np.choose(x.astype(np.intp), [y, z], mode="wrap"),
              "np.choose")]
    same = lambda P, ins, v: N.broadcast(*ins)     # noqa: E731
    cases = []
    for ranks in itertools.product(range(0, MAX_RANK), repeat=3):
        pats = _ones_patterns(ranks, full=False) if len(set(ranks)) == 1 else [[{}, {}, {}]]
        for statics in pats:
            arrays = [(tuple(st.get(i, SIZES[4 - r + i]) for i in range(r)), st)
                      for r, st in zip(ranks, statics)]
            cases += [(f, arrays, same, ()) for f, _ in calls]
    for part in _chunks(cases, BATCH):
        _check_many(part, "np.select / np.choose(ranks 0..3, patterns of 1s)", not_one=True)


@proves("select.partition", over=bounded("every rank 1..4, every axis, kth 0, 2, -1, -3 and "
                                         "[1, -3], sizes symbolic"))
def select_partition():
    """np.argpartition and np.partition for every rank 1..4, every axis (and None for
    argpartition), kth 0, 2, -1, -3 and [1, -3]: the shape, and the contract admits only
    axes where NumPy accepts every kth."""
    for rank in range(1, MAX_RANK + 1):
        cases = []
        for axis, kth in itertools.product([None] + list(range(-rank, rank)),
                                           (0, 2, -1, -3, [1, -3])):
            fns = [np.argpartition] + ([np.partition] if axis is not None else [])
            cases += [(_bind1(f, kth, axis=axis), [_shape(rank)],
                       lambda P, ins, v, k=kth, a=axis: N.partition(ins[0], k, a), ())
                      for f in fns]
        for part in _chunks(cases, BATCH):
            _check_many(part, "np.argpartition / partition(rank %d, every kth and axis)"
                        % rank)


@proves("stats.scan", over=bounded("every rank up to 4, every axis, sizes symbolic"))
def stats_scan():
    """np.nancumsum and np.nancumprod for every rank 0..4 (an axis from rank 1), axis None
    and every int axis: the shape, or the flattened size for None."""
    for rank in range(0, MAX_RANK + 1):
        _check_all([(_bind1(f, axis=ax), lambda P, ins, v, ax=ax: N.along_axis(ins[0], ax))
                    for f in (np.nancumsum, np.nancumprod)
                    for ax in [None] + list(range(-rank, rank))], [_shape(rank)],
                   "nancumsum / nancumprod(rank %d, every axis)" % rank)
