"""Matching a ``dynamic_shapes`` spec against the example inputs.

The result is one ``InputLeaf`` per input leaf in argument order, each array leaf with one
``AxisDecl`` per axis saying what the spec promised: static (with the value), auto,
dynamic, a named root Dim, or a derived dim.  Every malformed spec raises ``UserError``
naming the entry (``dynamic_shapes['x'][1]``), what was expected and what was given.
"""
from __future__ import annotations

import inspect
from typing import Any, Dict, List, Optional, Sequence, Tuple

import numpy as np

from symshape.specs.dims import AUTO, DYNAMIC, STATIC, DerivedDim, Dim, Marker
from symshape.errors import UserError
from symshape.specs.pytree import key_str
from symshape.algebra.infinity import NEG_INT_OO
from symshape.algebra.ranges import ValueRange
from symshape.runtime import small_size_hint


class AxisDecl:
    __slots__ = ("kind", "dim", "value", "entry")

    def __init__(self, kind: str, dim=None, value: Optional[int] = None,
                 entry: Optional[tuple] = None) -> None:
        self.kind = kind        # static | auto | dynamic | named | derived
        self.dim = dim          # Dim (named) or DerivedDim (derived)
        self.value = value      # example size
        self.entry = entry      # key path of this axis in the spec, or None if implicit

    def __repr__(self) -> str:
        return "AxisDecl(%s, %r, %r)" % (self.kind, self.dim, self.value)


class InputLeaf:
    __slots__ = ("path", "value", "axes", "arg_index", "scalar_decl")

    def __init__(self, path: str, value: Any, axes: Optional[List[AxisDecl]],
                 arg_index: int, scalar_decl: Optional[AxisDecl] = None) -> None:
        self.path = path
        self.value = value
        self.axes = axes        # None for a non-array leaf
        self.arg_index = arg_index
        self.scalar_decl = scalar_decl   # a symbolic Python int input (Dim.DYNAMIC etc.)

    @property
    def is_array(self) -> bool:
        return self.axes is not None

    def axis_name(self, i: int) -> str:
        return "%s.shape[%d]" % (self.path, i)


def entry_text(entry: Sequence) -> str:
    return "dynamic_shapes" + "".join(key_str(k) for k in entry)


def bind_inputs(f, args: tuple, kwargs: dict) -> Tuple[inspect.Signature, Dict[str, Any]]:
    """Bind the example inputs to ``f``'s parameters (UserError when they do not fit)."""
    try:
        sig = inspect.signature(f)
    except (TypeError, ValueError):
        sig = None
    if sig is None:
        names = ["arg%d" % i for i in range(len(args))]
        return None, dict(zip(names, args), **kwargs)
    try:
        bound = sig.bind(*args, **kwargs)
    except TypeError as e:
        raise UserError("the example inputs do not match the signature of %s%s: %s"
                        % (getattr(f, "__qualname__", f), sig, e)) from None
    # parameters left at their defaults are inputs too: the program specialises them, and
    # the module must reject a call that passes another value
    out = BoundInputs()
    for name, p in sig.parameters.items():
        if name in bound.arguments:
            out[name] = bound.arguments[name]
        elif p.default is not p.empty and p.kind not in (p.VAR_POSITIONAL, p.VAR_KEYWORD):
            if not _is_data(p.default):
                # a function or an object: configuration the program is written
                # against, never an input (``def f(x, act=np.tanh)``); it stays at its default
                out.configured.add(name)
                continue
            out[name] = p.default
            out.defaulted.add(name)
    return sig, out


class BoundInputs(dict):
    """Parameter name -> example value; ``defaulted`` names those left at their default."""

    def __init__(self) -> None:
        super().__init__()
        self.defaulted: set = set()
        self.configured: set = set()


def _is_data(v, depth: int = 0) -> bool:
    """An array, a Python or NumPy scalar, a string, None, or a list / tuple / dict of them."""
    if v is None or isinstance(v, (np.ndarray, np.generic, bool, int, float, complex, str, bytes)):
        return True
    if depth < 20 and isinstance(v, (list, tuple)):
        return all(_is_data(x, depth + 1) for x in v)
    if depth < 20 and isinstance(v, dict):
        return all(_is_data(x, depth + 1) for x in v.values())
    return False


def _is_array(v) -> bool:
    return isinstance(v, np.ndarray)


def match(inputs: Dict[str, Any], dynamic_shapes) -> List[InputLeaf]:
    """One InputLeaf per leaf of the bound inputs, with the spec's decision per axis."""
    names = list(inputs)
    if dynamic_shapes is None:
        entries = {n: None for n in names}
    elif isinstance(dynamic_shapes, dict):
        unknown = [k for k in dynamic_shapes if k not in inputs]
        if unknown:
            raise UserError(
                "dynamic_shapes has key %r, which is not a parameter of the function; its "
                "parameters are %s" % (unknown[0], names))
        entries = {n: (n,) for n in names if n in dynamic_shapes}
    elif isinstance(dynamic_shapes, (tuple, list)):
        given = [n for n in names if n not in getattr(inputs, "defaulted", ())]
        if len(dynamic_shapes) == len(given) < len(names):
            # one entry per argument actually passed: defaulted parameters are static
            entries = {n: (i,) for i, n in enumerate(given)}
        elif len(dynamic_shapes) != len(names):
            raise UserError(
                "dynamic_shapes is a %s of %d entries, but the function takes %d inputs %s; "
                "give one entry per input, in argument order (None for a static input)"
                % (type(dynamic_shapes).__name__, len(dynamic_shapes), len(names), names))
        else:
            entries = {n: (i,) for i, n in enumerate(names)}
    else:
        raise UserError("dynamic_shapes must be None, a dict keyed by parameter name, or a "
                        "tuple with one entry per input; got %s" % type(dynamic_shapes).__name__)
    leaves: List[InputLeaf] = []
    for idx, name in enumerate(names):
        entry = entries.get(name)
        if entry is None:
            spec = None
        elif isinstance(dynamic_shapes, dict):
            spec = dynamic_shapes[name]
        else:
            spec = dynamic_shapes[entry[0]]
        _match_value(inputs[name], spec, name, entry, idx, leaves)
    return leaves


def _match_value(v, spec, path: str, entry: Optional[tuple], idx: int,
                 out: List[InputLeaf]) -> None:
    t = type(v)
    if t is list or t is tuple or t is dict:
        # the recursion stays in this function: one frame per level of nesting
        for child, sub, child_path, sub_entry in _container_items(v, spec, path, entry):
            _match_value(child, sub, child_path, sub_entry, idx, out)
        return
    if _is_array(v):
        out.append(InputLeaf(path, v, _match_axes(v, spec, path, entry), idx))
        return
    if isinstance(v, (int, np.integer)) and not isinstance(v, (bool, np.bool_)) and \
            spec is not None and spec is not STATIC:
        if spec in (AUTO, DYNAMIC) or isinstance(spec, Dim):
            decl = _axis(spec, int(v), path, entry, scalar=True)
            out.append(InputLeaf(path, int(v), None, idx, decl))
            return
    if spec is not None and not (isinstance(spec, Marker) and spec is STATIC):
        raise UserError("%s: input %s is of type %s, which is specialized to its value; its spec "
                        "must be None%s, got %r" % (
                            entry_text(entry), path, t.__name__,
                            " (or Dim.DYNAMIC / Dim.AUTO / a Dim to make an int symbolic)"
                            if isinstance(v, int) and not isinstance(v, bool) else "", spec))
    if isinstance(v, (np.random.Generator, np.random.RandomState)) or \
            getattr(type(v), "_ss_any_of_its_class", False):
        # a random generator argument: the program draws from whichever one is passed;
        # a stand-in accepting any object of its class (the JIT's AppendOnly list)
        out.append(InputLeaf(path, v, None, idx))
        return
    if not isinstance(v, (int, float, bool, complex, str, type(None), np.generic)):
        raise UserError("input %s is of type %s; export takes NumPy arrays, Python scalars, "
                        "random generators and lists / tuples / dicts of them"
                        % (path, t.__name__))
    out.append(InputLeaf(path, v, None, idx))


def _container_items(v, spec, path: str, entry: Optional[tuple]) -> list:
    """A list / tuple / dict input's items as (value, spec, path, entry): its spec is None
    or the same kind of container (a dict may leave keys out)."""
    t = type(v)
    keys = list(v) if t is dict else list(range(len(v)))
    if spec is not None:
        if t is dict:
            if not isinstance(spec, dict) or set(spec) - set(v):
                raise UserError("%s: expected None or a dict with keys from %s for input "
                                "%s, got %r" % (entry_text(entry), keys, path, spec))
        elif not isinstance(spec, (list, tuple)) or len(spec) != len(v):
            raise UserError("%s: expected None or a list/tuple of %d entries for input %s "
                            "(a %s of %d items), got %r" % (entry_text(entry), len(v), path,
                                                            t.__name__, len(v), spec))
    items = []
    for k in keys:
        sub = None
        if spec is not None and (t is not dict or k in spec):
            sub = spec[k]
        sub_entry = entry + (k,) if (entry is not None and spec is not None) else None
        child_path = path + ("[%d]" % k if t is not dict else key_str(k))
        items.append((v[k], sub, child_path, sub_entry))
    return items


def _match_axes(arr: np.ndarray, spec, path: str, entry: Optional[tuple]) -> List[AxisDecl]:
    shape = arr.shape
    nd = len(shape)
    per_axis: Dict[int, Any] = {}
    if spec is None:
        pass
    elif isinstance(spec, dict):
        for k, s in spec.items():
            if isinstance(k, bool) or not isinstance(k, int) or not -nd <= k < nd:
                raise UserError("%s: axis key %r is not an axis of %s, which has %d dims "
                                "(shape %s)" % (entry_text(entry), k, path, nd, shape))
            per_axis[k % nd] = (s, entry + (k,))
    elif isinstance(spec, (tuple, list)):
        if len(spec) != nd:
            raise UserError("%s: expected %d entries, one per axis of %s (shape %s), got %d"
                            % (entry_text(entry), nd, path, tuple(shape), len(spec)))
        for i, s in enumerate(spec):
            per_axis[i] = (s, entry + (i,))
    else:
        raise UserError("%s: the spec of array input %s must be None, a dict {axis: dim} or "
                        "a tuple of %d entries, got %r" % (entry_text(entry), path, nd, spec))
    axes = []
    for i in range(nd):
        s, e = per_axis.get(i, (None, None))
        axes.append(_axis(s, shape[i], "%s.shape[%d]" % (path, i), e))
    return axes


def _axis(s, size: int, where: str, entry, scalar: bool = False) -> AxisDecl:
    if s is None or s is STATIC:
        return AxisDecl("static", value=size, entry=entry)
    if s is AUTO:
        return AxisDecl("auto", value=size, entry=entry)
    if s is DYNAMIC:
        return AxisDecl("dynamic", value=size, entry=entry)
    if isinstance(s, bool):
        raise UserError("%s (for %s): expected a Dim, an int or None, got %r"
                        % (entry_text(entry), where, s))
    if isinstance(s, (int, np.integer)):
        if int(s) != size:
            raise UserError("%s (for %s) is the static size %d, but the example input has "
                            "size %d" % (entry_text(entry), where, int(s), size))
        return AxisDecl("static", value=size, entry=entry)
    at = " (%s)" % entry_text(entry) if entry is not None else ""
    if isinstance(s, Dim):
        r = s.range
        if scalar and s.min is None:
            r = ValueRange(NEG_INT_OO, r.upper)
        if size not in r:
            hint = small_size_hint(s.name, size) if s.min is None and 0 <= size < 2 else ""
            raise UserError("%s%s has example size %d, outside the range [%s, %s] of %r; change "
                            "the example or the bounds%s" % (where, at, size, r.lower, r.upper,
                                                             s, hint))
        return AxisDecl("named", dim=s, value=size, entry=entry)
    if isinstance(s, DerivedDim):
        root_val = s.solve(size)
        if root_val is None:
            raise UserError("%s%s has example size %d, which is not of the form %s for any "
                            "integer %s" % (where, at, size, s, s.root.name))
        if root_val not in s.root.range:
            raise UserError("%s%s has example size %d = %s with %s = %d, outside the range "
                            "[%s, %s] of %r" % (where, at, size, s, s.root.name, root_val,
                                                s.root.range.lower, s.root.range.upper, s.root))
        return AxisDecl("derived", dim=s, value=size, entry=entry)
    if isinstance(s, str):
        raise UserError("%s (for %s) is the string %r; use Dim(%r) for a named dimension"
                        % (entry_text(entry), where, s, s))
    raise UserError("%s (for %s): expected a Dim, a derived dim, Dim.AUTO / Dim.DYNAMIC / "
                    "Dim.STATIC, an int or None; got %r" % (entry_text(entry), where, s))
