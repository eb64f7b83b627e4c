"""The suggested fixes of an export, in their published form: objects whose ``str`` is the
copy-pasteable line (``batch = Dim('batch', max=64)``) and whose ``apply(spec)`` returns the
fixed ``dynamic_shapes`` spec.  ``symshape.specs.constraints`` finds them; ``export`` re-verifies
them before it shows them; the CLI fixers write them into the user's source.
"""
from __future__ import annotations

from typing import Any, Callable, List, Optional

from symshape.specs.dims import DerivedDim, Dim, Marker, fix_line_dim, format_linear
from symshape.specs.matching import entry_text


class Fix:
    line = ""

    def __str__(self) -> str:
        return self.line

    def __repr__(self) -> str:
        return "<fix %s>" % self.line

    def apply(self, spec):
        raise NotImplementedError

    def __eq__(self, other) -> bool:
        return type(self) is type(other) and self.line == other.line

    def __hash__(self) -> int:
        return hash(self.line)


class DefineDim(Fix):
    """``_d = Dim('_d', ...)``: a new root the next fix refers to (the spec is unchanged)."""

    def __init__(self, dim: Dim) -> None:
        self.dim = dim
        self.line = "%s = %s" % (dim.name, fix_line_dim(dim))

    def apply(self, spec):
        return spec


class SetDim(Fix):
    """Replace every use of the Dim named ``name`` (derived uses included) by ``value``:
    an int, a Dim, ``coeff*<Dim named ref> + offset``, or a marker."""

    def __init__(self, name: str, value=None, ref: Optional[str] = None, coeff: int = 1,
                 offset: int = 0, ref_dim: Optional[Dim] = None) -> None:
        self.name = name
        self.value = value
        self.ref, self.coeff, self.offset, self.ref_dim = ref, coeff, offset, ref_dim
        if ref is not None:
            rhs = format_linear(ref, coeff, offset)
        elif isinstance(value, Dim):
            rhs = fix_line_dim(value)
        else:
            rhs = repr(value)
        self.line = "%s = %s" % (name, rhs)

    def _value(self, spec):
        if self.ref is None:
            return self.value
        root = find_dim(spec, self.ref) or self.ref_dim or Dim(self.ref)
        if self.coeff == 1 and self.offset == 0:
            return root
        return DerivedDim(root, self.coeff, self.offset)

    def apply(self, spec):
        value = self._value(spec)
        return map_spec(spec, lambda leaf: _substitute(leaf, self.name, value))


class SetEntry(Fix):
    """``dynamic_shapes['w'][1] = Dim.STATIC`` for an unnamed axis."""

    def __init__(self, entry: tuple, value) -> None:
        self.entry = entry
        self.value = value
        self.line = "%s = %r" % (entry_text(entry), value)

    def apply(self, spec):
        return set_entry(spec, self.entry, self.value)


class MarkAxis(Fix):
    """``dynamic_shapes['y'][0] = n``: give a static axis the Dim named ``name`` (the input's
    entry is created, its other axes static, when the spec has none)."""

    def __init__(self, key, ndim: int, axis: int, name: str) -> None:
        self.key, self.ndim, self.axis, self.name = key, ndim, axis, name
        self.line = "%s = %s" % (entry_text((key, axis)), name)

    def apply(self, spec):
        dim = find_dim(spec, self.name) or Dim(self.name)
        current = spec.get(self.key) if isinstance(spec, dict) else spec[self.key]
        if current is None:
            current = (None,) * self.ndim
        return set_entry(spec, (self.key,), set_entry(current, (self.axis,), dim))


class Alternative:
    """A fix to try before ``replaces``: kept, with ``note`` shown, when exporting again
    with it verifies (a static axis the program ties to a Dim is marked with that Dim,
    rather than the Dim made static)."""

    def __init__(self, replaces: Fix, by: Fix, note: str) -> None:
        self.replaces, self.by, self.note = replaces, by, note


def _substitute(leaf, name: str, value):
    if isinstance(leaf, Dim) and leaf.name == name:
        return value
    if isinstance(leaf, DerivedDim) and leaf.root.name == name:
        if isinstance(value, int):
            return leaf.value(value)
        if isinstance(value, Marker):
            return value
        if isinstance(value, Dim):
            return DerivedDim(value, leaf.coeff, leaf.offset)
        if isinstance(value, DerivedDim):
            return DerivedDim(value.root, leaf.coeff * value.coeff,
                              leaf.coeff * value.offset + leaf.offset)
    return leaf


def map_spec(spec, fn: Callable[[Any], Any]):
    if isinstance(spec, dict):
        return {k: map_spec(v, fn) for k, v in spec.items()}
    if isinstance(spec, (list, tuple)):
        return type(spec)(map_spec(v, fn) for v in spec)
    return fn(spec)


def find_dim(spec, name: str) -> Optional[Dim]:
    found: List[Dim] = []

    def visit(leaf):
        if isinstance(leaf, Dim) and leaf.name == name:
            found.append(leaf)
        elif isinstance(leaf, DerivedDim) and leaf.root.name == name:
            found.append(leaf.root)
        return leaf

    map_spec(spec, visit)
    return found[0] if found else None


def set_entry(spec, entry: tuple, value):
    if not entry:
        return value
    k, rest = entry[0], entry[1:]
    if isinstance(spec, dict):
        out = dict(spec)
        out[k] = set_entry(spec.get(k), rest, value)
        return out
    if isinstance(spec, (list, tuple)):
        items = list(spec)
        items[k] = set_entry(items[k], rest, value)
        return type(spec)(items)
    raise ValueError("cannot set %r inside %r" % (entry, spec))
