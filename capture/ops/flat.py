"""``ndarray.flat`` on traced arrays: reads index the flattened array, writes replace
elements of the flattened array and rebind the array (and its base and views, as NumPy's
in-place write through ``a.flat`` would change them).  ``np.diag`` of a vector (NumPy writes
``res[:n-k].flat[i::n+1] = v``) traces through this."""
from __future__ import annotations

from ..tracer import METHOD_OPS, TracedArray


class FlatIter:
    """What ``x.flat`` is while tracing: ``x.flat[i]``, ``x.flat[i] = v``, iteration."""

    __slots__ = ("base",)

    def __init__(self, base: TracedArray) -> None:
        self.base = base

    def _flat(self) -> TracedArray:
        return self.base.flatten()          # a copy: never a view of base

    def __getitem__(self, idx):
        return self._flat()[idx]

    def __setitem__(self, idx, value) -> None:
        x = self.base
        flat = self._flat()
        flat[idx] = value
        x.tracer.rebind(x, flat.reshape(x.shape))

    def __iter__(self):
        return iter(self._flat())

    def __len__(self) -> int:
        return len(self._flat())

    def copy(self) -> TracedArray:
        return self._flat()


METHOD_OPS["flatiter"] = FlatIter
