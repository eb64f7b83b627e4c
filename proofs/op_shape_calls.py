"""Op shape rules of the functions that keep a shape or size it from their arguments:
``np.flip`` / ``np.roll`` / ``np.tril`` / ``np.triu`` (every rank up to 4, every axis and
tuple of axes, offsets), ``np.kron`` (every pair of ranks up to 3), ``np.convolve`` /
``np.correlate`` (every mode), ``np.histogram`` with an edges array and ``np.linspace``
(a symbolic count): traced with symbolic sizes (``op_shape_rules._check``) against NumPy's
documented shapes (``proofs/numpy_shapes.py``)."""
from __future__ import annotations

import itertools

import numpy as np

from . import numpy_shapes as N
from . import proves
from .op_shape_rules import (MAX_RANK, SIZES, _bind1, _bind2, _check, _check_all, _prog, _shape,
                             _sign_mix)


@proves("shape.flip")
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


@proves("shape.roll")
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


@proves("creation.triangle")
def creation_triangle():
    """np.tril / np.triu of every rank 2..4 with offsets -3..3: the input's shape."""
    for rank in range(2, MAX_RANK + 1):
        _check_all([(_bind1(fn, k=k), lambda P, ins, v: N.flip(ins[0], None))
                    for fn, k in itertools.product((np.tril, np.triu), range(-3, 4))],
                   [_shape(rank)], "np.tril / np.triu(rank %d, k = -3..3)" % rank)


@proves("linalg.kron")
def linalg_kron():
    """np.kron for every pair of ranks 1..3: NumPy's shape (aligned on the right)."""
    for ra, rb in itertools.product(range(1, MAX_RANK), repeat=2):
        _check(_bind2(np.kron), [_shape(ra), _shape(rb)],
               lambda P, ins, v: N.kron(ins[0], ins[1]), "np.kron(rank %d, rank %d)" % (ra, rb))


@proves("linalg.outer")
def linalg_outer():
    """np.outer for every pair of ranks 0..3: (a.size, b.size), the inputs flattened."""
    for ra, rb in itertools.product(range(0, MAX_RANK), repeat=2):
        _check(_bind2(np.outer), [_shape(ra), _shape(rb)],
               lambda P, ins, v: N.outer(ins[0], ins[1]), "np.outer(rank %d, rank %d)"
               % (ra, rb))


@proves("linalg.inner")
def linalg_inner():
    """np.inner for every pair of ranks 1..4: a.shape[:-1] + b.shape[:-1], the last sizes
    equal on the contract."""
    for ra, rb in itertools.product(range(1, MAX_RANK + 1), repeat=2):
        sa = _shape(ra)[0]
        sb = tuple(SIZES[(i + 1) % 4] for i in range(rb - 1)) + (sa[-1],)
        _check(_bind2(np.inner), [(sa, {}), (sb, {})],
               lambda P, ins, v: N.inner(ins[0], ins[1]), "np.inner(rank %d, rank %d)"
               % (ra, rb))


@proves("signal.correlate")
def signal_correlate():
    """np.convolve and np.correlate in every mode, examples with n > m, n < m and n == m:
    NumPy's length, and the contract admits no empty operand."""
    for fn, mode, (n, m) in itertools.product((np.convolve, np.correlate),
                                              ("full", "same", "valid"),
                                              ((5, 3), (3, 5), (4, 4))):
        _check(_bind2(fn, mode=mode), [((n,), {}), ((m,), {})],
               lambda P, ins, v, mode=mode: N.correlate(ins[0][0], ins[1][0], mode),
               "%s(%d, %d, %s)" % (fn.__name__, n, m, mode))


@proves("stats.histogram_bins")
def stats_histogram_bins():
    """np.histogram with an edges array of symbolic length (>= 0 as far as the spec
    goes): the counts and the edges; np.histogram_bin_edges likewise."""
    _check(lambda x, y: np.histogram(x, bins=y), [((5,), {}), ((4,), {})],
           lambda P, ins, v: N.histogram_edges(ins[1][0]), "np.histogram(x, bins=edges)")
    _check(lambda x, y: np.histogram_bin_edges(x, bins=y), [((5,), {}), ((4,), {})],
           lambda P, ins, v: ([N.histogram_edges(ins[1][0])[0][1]], []),
           "np.histogram_bin_edges(x, bins=edges)")


@proves("creation.linspace")
def creation_linspace():
    """np.linspace with a symbolic count, endpoint True and False: num samples, and the
    contract admits no negative count."""
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


@proves("shape.hstack")
def shape_hstack():
    """np.hstack: see ``_stack_sweep``."""
    _stack_sweep(np.hstack, N.hstack)


@proves("shape.vstack")
def shape_vstack():
    """np.vstack: see ``_stack_sweep``."""
    _stack_sweep(np.vstack, N.vstack)


@proves("shape.dstack")
def shape_dstack():
    """np.dstack: see ``_stack_sweep``."""
    _stack_sweep(np.dstack, N.dstack)


_ROWS = {np.hstack: lambda x: np.hstack(x), np.vstack: lambda x: np.vstack(x),
         np.dstack: lambda x: np.dstack(x)}
