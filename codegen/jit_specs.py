"""Which input sizes a compiled function's next variant compiles as symbols: the
dynamic-shape spec of each argument, from the sizes its calls have seen change
(``dynamic=None``), or every size (``dynamic=True``)."""
from __future__ import annotations

import inspect
import re

import numpy as np

from symshape.specs import pytree
from symshape.specs.dims import AUTO, Dim

from .dask_backend import is_dask_array as _is_dask_array


def is_device_array(v) -> bool:
    """A CuPy array (recognised without importing CuPy)."""
    return type(v).__module__.startswith("cupy") and hasattr(v, "__cuda_array_interface__")


def _dim_name(path: str, axis: int) -> str:
    """A Dim name for an input axis (``x['w'][0]`` axis 1 -> ``x_w_0_1``)."""
    name = re.sub(r"\W+", "_", "%s_%d" % (path, axis)).strip("_")
    return name if name[:1].isalpha() else "d_" + name


class ShapeSpecs:
    """The shape-spec part of ``jit.CompiledFunction`` (its ``_first`` and ``_dyn`` records
    of each argument's sizes)."""

    def _spec(self, bound: inspect.BoundArguments):
        spec = {}
        for name, v in bound.arguments.items():
            spec[name] = self._leaf_spec(v, name)
        return spec

    def _leaf_spec(self, v, path: str):
        """The dynamic-shape spec of argument leaf ``v`` at ``path`` (containers
        recursively): which of its sizes this call's variant compiles as symbols."""
        t = type(v)
        if t is list or t is tuple:
            return t(self._leaf_spec(x, "%s[%d]" % (path, i)) for i, x in enumerate(v))
        if t is dict:
            return {k: self._leaf_spec(x, path + pytree.key_str(k)) for k, x in v.items()}
        if t is np.ndarray or is_device_array(v) or _is_dask_array(v):
            return self._array_spec(v, path)
        if isinstance(v, int) and not isinstance(v, bool) and self.dynamic is not False:
            return self._int_spec(v, path)
        return None

    def _array_spec(self, v, path: str):
        """An array's spec: the axes seen changing (or all, ``dynamic=True``) as ``AUTO``,
        a size 1 on such an axis as a Dim of at least 1 once a variant pinned it."""
        shape = tuple(v.shape)
        dyn = self._dyn.setdefault(path, set())
        first = self._first.setdefault(path, shape)
        if _is_dask_array(v) and self.dynamic is None:
            # a dask array's axes are dynamic from the first call: each chunk runs the
            # code generated for them, whatever the chunking of later calls
            dyn.update(range(len(shape)))
        if self.dynamic is False:
            return None
        if len(first) == len(shape):
            dyn.update(i for i, (a, b) in enumerate(zip(first, shape)) if a != b)
        if self.dynamic is True:
            if 1 not in shape or not self._variants:
                return tuple(AUTO for _ in shape)
            dyn = set(range(len(shape)))    # size 1 on a dynamic axis: see below
        elif not dyn or len(first) != len(shape):
            return None
        ones = [i for i in sorted(dyn) if shape[i] == 1]
        if ones and not getattr(self, "_min1", False):
            self._size_one += ["%s.shape[%d]" % (path, i) for i in ones]
        if ones and getattr(self, "_min1", False):
            for i in ones:
                self._min1_names[_dim_name(path, i)] = "%s.shape[%d]" % (path, i)
            return tuple(Dim(_dim_name(path, i), min=1) if i in ones else
                         AUTO if i in dyn else None for i in range(len(shape)))
        return tuple(AUTO if i in dyn else None for i in range(len(shape)))

    def _int_spec(self, v: int, path: str):
        """A Python int's spec: ``AUTO`` once it took two values."""
        # kept apart from an array's record: one parameter may take an int on one call
        # and an array on another
        key = path + " (int)"
        first = self._first.setdefault(key, (v,))
        if first != (v,):
            self._dyn.setdefault(key, set()).add(None)
        return AUTO if self._dyn.get(key) else None
