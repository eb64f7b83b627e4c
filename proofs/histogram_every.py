"""Proof of ``stats.histogram_bins`` for data of every shape: ``np.histogram(x, bins=edges)``
and ``np.histogram_bin_edges(x, bins=edges)`` with an edges array of symbolic length.

NumPy computes the histogram over the *flattened* data, so its shapes -- ``(e - 1,)``
counts and ``(e,)`` edges -- do not depend on the data's shape at all.  The engine's rule
(``capture/ops/statistics.py``: the shape functions of the ``Call`` rows of ``np.histogram``
and ``np.histogram_bin_edges``, and ``_bins`` they call) reads the call's arguments only
through ``Args`` (``capture/ops/npcall.py``); ``traced_call`` takes the output shapes and the
guards from those shape functions alone.  So the proof

* traces both calls with the real tracer (``op_shape_rules._check_many``: every edges
  length and every data size symbolic, NumPy's shape on every point of the contract, and
  the contract admitting every input NumPy accepts), on data of rank 2 and of rank 0; and
* records, while tracing, every argument the shape functions read (``npcall.Args`` replaced
  by one whose values are a recording mapping): they must read ``bins`` and never the
  data ``a``.

A function of the edges alone computes the same shapes and guards for data of every shape
(rank 0, 1, 2, ...), which is what makes the two traces cover every shape, not a sample of
ranks.
"""
from __future__ import annotations

from contextlib import contextmanager
from typing import Dict, Set

import numpy as np

from symshape.capture.ops import npcall

from . import every, proves
from . import numpy_shapes as N
from .op_shape_rules import _check_many
from .pyint import require

#: every argument read is recorded under this key when the code reads them all at once
_ALL = "<every argument>"


class _Recording(dict):
    """The values of one call's ``Args``: every key the code looks up is recorded (a read
    of the whole mapping -- iteration, keys, values, items, a copy -- as ``_ALL``)."""

    def __init__(self, values, reads: Set[str]) -> None:
        super().__init__(values)
        self.reads = reads

    def __getitem__(self, k):
        self.reads.add(k)
        return super().__getitem__(k)

    def get(self, k, default=None):
        self.reads.add(k)
        return super().get(k, default)

    def __contains__(self, k) -> bool:
        self.reads.add(k)
        return super().__contains__(k)

    def _whole(self, name):
        def read(*a, **k):
            self.reads.add(_ALL)
            return getattr(super(_Recording, self), name)(*a, **k)
        return read

    def __iter__(self):
        self.reads.add(_ALL)
        return super().__iter__()

    def keys(self):
        return self._whole("keys")()

    def values(self):
        return self._whole("values")()

    def items(self):
        return self._whole("items")()

    def copy(self):
        return self._whole("copy")()

    def __reduce__(self):            # a pickle or deepcopy reads every value
        self.reads.add(_ALL)
        return (dict, (dict(super().items()),))


@contextmanager
def recorded_reads():
    """While tracing, every call's ``Args`` records the arguments its shape rule reads:
    yields {function name as users write it: set of parameter names read}."""
    reads: Dict[str, Set[str]] = {}
    plain = npcall.Args

    class Recorded(plain):
        def __init__(self, t, what, values, defaults, frame) -> None:
            super().__init__(t, what, values, defaults, frame)
            self.values = _Recording(values, reads.setdefault(what, set()))
    npcall.Args = Recorded
    try:
        yield reads
    finally:
        npcall.Args = plain


def _edges(P, ins, v):
    return N.histogram_edges(ins[1][0])


def _bin_edges(P, ins, v):
    return [N.histogram_edges(ins[1][0])[0][1]], []


@proves("stats.histogram_bins", over=every(
    "np.histogram and np.histogram_bin_edges with an edges array of every length e "
    "(symbolic; e >= 1 admitted, both directions) and data of every shape: the rule's "
    "shape functions, recorded while tracing, read the call's arguments only through bins, "
    "never the data, so their shapes and guards are the same for data of every shape "
    "(NumPy flattens the data); traced with data of rank 2 and of rank 0, every size "
    "symbolic"))
def stats_histogram_bins():
    with recorded_reads() as reads:
        _check_many([(lambda x, y: np.histogram(x, bins=y), [((3, 4), {}), ((4,), {})],
                      _edges, ()),
                     (lambda x, y: np.histogram_bin_edges(x, bins=y), [((), {}), ((4,), {})],
                      _bin_edges, ())],
                    "np.histogram / np.histogram_bin_edges(data, bins=edges)")
    for what in ("np.histogram", "np.histogram_bin_edges"):
        require(what in reads, "%s: the trace reached no shape rule (read: %s)", what,
                sorted(reads))
        require("bins" in reads[what] and not reads[what] - {"bins"},
                "%s: the shape rule reads %s, not the edges alone: its shape may depend on "
                "the data's", what, sorted(reads[what]))
