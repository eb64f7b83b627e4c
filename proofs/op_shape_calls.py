"""Op shape rules of the functions that keep a shape or size it from their arguments
(``np.flip`` / ``np.roll`` / ``np.tril`` / ``np.triu`` / ``np.nancumsum`` over every rank:
``proofs/keep_every.py``): ``np.kron`` (every pair of ranks up to 3), ``np.convolve`` /
``np.correlate`` (every mode) and ``np.linspace`` (a symbolic count; ``np.histogram``:
``proofs/histogram_every.py``): traced with symbolic sizes (``op_shape_rules._check``) against NumPy's
documented shapes (``proofs/numpy_shapes.py``)."""
from __future__ import annotations

import itertools

import numpy as np

from . import numpy_shapes as N
from . import bounded, every, proves
from .op_shape_rules import (BATCH, MAX_RANK, SIZES, _bind1, _bind2, _check,
                             _check_many, _chunks, _group, _prog, _shape)


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
