"""Size expressions as sympy expressions, for the public ``input_shapes`` and
``range_constraints``.  sympy is imported here only, on first use, so that exporting a
program never pays for it.

A symbol carries the sympy assumptions its range implies, and no others: ``positive`` only
when its lower end is at least 1, ``nonnegative`` when it is 0, ``negative`` /
``nonpositive`` likewise at the upper end.  sympy decides comparisons from assumptions
(``s0 < 0`` is ``False`` for a positive ``s0``), so an assumption the range does not imply
would let sympy answer questions about admitted inputs wrongly.  Two programs may give
``s0`` different ranges: symbols are cached per (name, assumptions)."""
from __future__ import annotations

from typing import Callable, Dict, Mapping, Optional, Tuple, Union

from .expr import IntLike, OpAtom, Sym, fold
from .infinity import is_inf
from .rules import rule

_symbols: Dict[Tuple[str, Tuple[Tuple[str, bool], ...]], object] = {}

Ranges = Optional[Union[Mapping, Callable]]


def assumptions(vr) -> Dict[str, bool]:
    """The sympy assumptions implied by a ``ValueRange`` (``None``: only ``integer``)."""
    out = {"integer": True}
    if vr is None:
        return out
    lo, hi = vr.lower, vr.upper
    if not is_inf(lo) and lo >= 1:
        out["positive"] = True
    elif not is_inf(lo) and lo >= 0:
        out["nonnegative"] = True
    if not is_inf(hi) and hi <= -1:
        out["negative"] = True
    elif not is_inf(hi) and hi <= 0:
        out["nonpositive"] = True
    return out


def _range_of(s: Sym, ranges: Ranges):
    if ranges is None:
        return None
    if callable(ranges):
        return ranges(s)
    return ranges.get(s)


def symbol(s: Sym, ranges: Ranges = None):
    """The sympy symbol of ``s``: an integer with the sign its range (``ranges``, a mapping
    or function from symbol to ``ValueRange``) implies; only ``integer`` without one."""
    import sympy
    flags = assumptions(_range_of(s, ranges))
    key = (s.name, tuple(sorted(flags.items())))
    got = _symbols.get(key)
    if got is None:
        got = _symbols[key] = sympy.Symbol(s.name, **flags)
    return got


@rule("sympy.bridge")
def to_sympy(x: IntLike, ranges: Ranges = None):
    """``x`` as a sympy expression; ``ranges`` gives each symbol's range (see ``symbol``).
    ``//`` is ``floor(a/b)`` and ``%`` is sympy's ``Mod`` (both floor, as Python does)."""
    import sympy
    return fold(x, sympy.Integer, lambda s: symbol(s, ranges), lambda a: _atom(a, ranges))


def _atom(a: OpAtom, ranges: Ranges):
    import sympy
    args = [to_sympy(x, ranges) for x in a.args]
    if a.kind == "FloorDiv":
        return sympy.floor(args[0] / args[1])
    if a.kind == "Mod":
        return sympy.Mod(args[0], args[1])
    return sympy.Min(*args) if a.kind == "Min" else sympy.Max(*args)
