"""The contract of an exported program: ``ConstraintSet``.

The expected shape of every input (ints and expressions over root symbols), the range of
every root symbol, and the residual guards.  Everything published about a program --
``range_constraints`` (``exact_ranges``), ``ep.guards`` (``guard_text``), ``input_shapes``
(``published``), the input check (``writer`` -> ``records`` -> ``render_python`` /
``render_text``) and the saved form (``saved``) -- is generated from it, and validated against
its one Z3 meaning (``meaning.admitted``), so they cannot disagree.
"""
from __future__ import annotations

from typing import Dict, List, Tuple

from symshape.errors import InternalError
from symshape.algebra.expr import Expr, IntLike, Sym
from symshape.algebra.ranges import ValueRange
from symshape.contract.exact_ranges import exact_range, published_ranges
from symshape.contract.records import Access


class InputDesc:
    """One input leaf: an array (``dims``, ``dtype``) or a specialised scalar (``value``).

    ``param`` and ``keys`` say how it is reached: the parameter, then the container keys
    (``feats['a'][0]``: ``"feats"``, ``('a', 0)``).  ``where`` is that pair (export and
    the archive reader build it from the leaf), or a bare parameter name."""

    __slots__ = ("path", "param", "keys", "dims", "dtype", "value", "is_array", "sym")

    def __init__(self, path: str, where, dims=None, dtype=None, value=None,
                 sym=None) -> None:
        self.path = path            # user-facing: x, batch[0], feats['a']
        self.param, self.keys = where if isinstance(where, tuple) else (where, ())
        if not self.param.isidentifier():
            raise InternalError("input %s: %r is not a parameter name" % (path, self.param))
        self.dims = dims            # tuple of int | Expr for arrays
        self.dtype = dtype
        self.value = value
        self.sym = sym              # the size expression of a symbolic int input
        self.is_array = dims is not None

    @property
    def access(self) -> str:
        """The Python expression reaching the leaf from the parameters (user's names)."""
        return self.param + keys_text(self.keys)

    @property
    def reach(self) -> Access:
        """How the check reaches the leaf, as a record."""
        return Access(self.param, keys_text(self.keys))


def keys_text(keys: tuple) -> str:
    """Container keys as subscripts: ``('a', 0)`` -> ``['a'][0]``."""
    return "".join("[%r]" % (k,) for k in keys)


class OfClass:
    """The value of an input that may be any object of ``cls`` (not specialised)."""

    __slots__ = ("cls",)

    def __init__(self, cls: type) -> None:
        self.cls = cls

    def __repr__(self) -> str:
        return "any %s" % self.cls.__name__


class ConstraintSet:
    def __init__(self, inputs: List[InputDesc], ranges: Dict[Sym, ValueRange],
                 facts: List, fact_frames: Dict, dim_names: Dict[Sym, str]) -> None:
        self.inputs = inputs
        self.ranges = ranges        # root symbols only
        self.facts = facts          # residual guards over root symbols
        self.fact_frames = fact_frames
        self.dim_names = dim_names  # symbol -> Dim name for named dims
        # (condition, text) of ss.check on data-dependent sizes, checked where computed
        self.runtime_checks: List[Tuple[object, str]] = []
        # parameter -> the list / tuple / dict layout of its example (symshape.specs.pytree
        # treespec), when the parameter is a container
        self.trees: Dict[str, tuple] = {}
        # parameters left at a default that is not data (a function, an object): the
        # program was traced with it, so a call may only leave it out
        self.configured: Dict[str, object] = {}
        # Dim.AUTO axes the program pinned to one value: axis name -> why (for the message)
        self.specialized: Dict[str, str] = {}

    def roots(self) -> List[Sym]:
        seen: Dict[Sym, None] = {}
        for d in self.inputs:
            if type(d.sym) is Expr:
                for s in sorted(d.sym.free_symbols, key=lambda s: s.key):
                    seen.setdefault(s, None)
            if d.is_array:
                for e in d.dims:
                    if type(e) is Expr:
                        for s in sorted(e.free_symbols, key=lambda s: s.key):
                            seen.setdefault(s, None)
        for f in self.facts:
            for s in sorted(f.free_symbols, key=lambda s: s.key):
                seen.setdefault(s, None)
        return list(seen)

    def range_constraints(self) -> Dict[IntLike, ValueRange]:
        """Each root symbol and each compound input-dim expression, with its exact range
        (``exact_ranges.published_ranges``: the contract's one range service)."""
        return published_ranges(self)

    def exact_range(self, e: IntLike) -> ValueRange:
        """The exact range of ``e`` over the inputs the contract admits
        (``exact_ranges.exact_range``)."""
        return exact_range(self, e)
