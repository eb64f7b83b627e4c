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

from symshape.algebra.expr import IntLike, OpAtom, Sym, fold
from symshape.algebra.infinity import INT_OO, NEG_INT_OO, is_inf
from symshape.rules import rule

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
def to_sympy(x: IntLike, ranges: Ranges = None, plain: bool = False):
    """``x`` as a sympy expression; ``ranges`` gives each symbol's range (see ``symbol``).
    ``//`` is ``floor(a/b)`` and ``%`` is sympy's ``Mod`` (both floor, as Python does).

    The operations are built unevaluated (``evaluate=False``): sympy's own rewriting of
    ``Mod`` / ``floor`` / ``Min`` / ``Max`` is not trusted (sympy 1.14 turns
    ``Mod(2*Mod(s0, 5), 3)`` into ``Mod(2*Mod(s0, 5)**2, 3)``, 2 at ``s0 = 7`` where the
    size is 1); sums and products are sympy's ordinary polynomial arithmetic, unless
    ``plain`` (then every node is built unevaluated)."""
    import sympy
    if plain:
        return _plain(x, ranges)
    return fold(x, sympy.Integer, lambda s: symbol(s, ranges),
                lambda a: _atom(a, ranges, False))


def _plain(x: IntLike, ranges: Ranges):
    """``x`` with every sum and product unevaluated too (the last resort of ``public``)."""
    import sympy
    if type(x) is int:
        return sympy.Integer(x)
    terms = [sympy.Integer(x.const)] if x.const or not x.terms else []
    for term, c in x.terms:
        factors = [symbol(a, ranges) if type(a) is Sym else _atom(a, ranges, True)
                   for a in term]
        if c != 1 or not factors:
            factors.insert(0, sympy.Integer(c))
        terms.append(factors[0] if len(factors) == 1 else
                     sympy.Mul(*factors, evaluate=False))
    return terms[0] if len(terms) == 1 else sympy.Add(*terms, evaluate=False)


def _atom(a: OpAtom, ranges: Ranges, plain: bool):
    import sympy
    args = [to_sympy(x, ranges, plain) for x in a.args]
    if a.kind == "FloorDiv":
        quotient = sympy.Mul(args[0], sympy.Pow(args[1], -1, evaluate=not plain),
                             evaluate=not plain)
        return sympy.floor(quotient, evaluate=False)
    if a.kind == "Mod":
        return sympy.Mod(args[0], args[1], evaluate=False)
    kind = sympy.Min if a.kind == "Min" else sympy.Max
    return kind(*args, evaluate=False)


# the points a public value is checked on: near each symbol's lower end, near its upper end
# (or far out when it has none), and a few in between; at most MAX_POINTS combinations
CORNER_OFFSETS = (0, 1, 2, 3, 5, 7, 12)
MAX_POINTS = 256


def corner_points(syms, ranges: Ranges):
    """Deterministic points of the symbols' ranges: each symbol takes values near its
    lower end, near its upper end and between (``CORNER_OFFSETS``); the cross product,
    at most ``MAX_POINTS`` of it (``ranges`` as for ``symbol``; no range: around 0)."""
    import itertools
    per = []
    for s in syms:
        vr = _range_of(s, ranges)
        lo = vr.lower if vr is not None else NEG_INT_OO
        hi = vr.upper if vr is not None else INT_OO
        vals = set()
        for k in CORNER_OFFSETS:
            if not is_inf(lo):
                vals.add(lo + k)
            if not is_inf(hi):
                vals.add(hi - k)
            if is_inf(lo) and is_inf(hi):
                vals.update((k, -k))
            elif is_inf(hi):
                vals.add(lo + 10 * k + 29)
            elif is_inf(lo):
                vals.add(hi - 10 * k - 29)
        per.append(sorted(v for v in vals if (is_inf(lo) or v >= lo) and
                          (is_inf(hi) or v <= hi)))
    return list(itertools.islice(itertools.product(*per), MAX_POINTS))


@rule("sympy.public")
def public(x: IntLike, ranges: Ranges = None):
    """``x`` as the sympy value users read (``ep.input_shapes``, ``ep.range_constraints``):
    ``to_sympy(x)``, checked against the engine's own expression on the corner points of
    the symbols' ranges (``corner_points``); where sympy's evaluation changed the value
    anywhere there, the fully unevaluated form (``plain``) is published instead, and
    checked the same way (an ``InternalError`` if even that disagrees)."""
    if type(x) is int:
        return x
    syms = sorted(x.free_symbols, key=lambda s: s.key)
    points = corner_points(syms, ranges)
    got = to_sympy(x, ranges)
    if agrees(x, got, syms, points, ranges):
        return got
    got = to_sympy(x, ranges, plain=True)
    if not agrees(x, got, syms, points, ranges):
        from symshape.errors import InternalError
        raise InternalError("the sympy form %s of the size %s does not evaluate to it"
                            % (got, x))
    return got


def agrees(x, got, syms, points, ranges) -> bool:
    """Whether the sympy value ``got`` evaluates to ``x`` at every point where ``x`` is
    defined (a point dividing by zero is skipped)."""
    import sympy
    from symshape.algebra.expr import evaluate
    for pt in points:
        values = dict(zip(syms, pt))
        try:
            want = evaluate(x, values)
        except ZeroDivisionError:
            continue
        v = got.xreplace({symbol(s, ranges): sympy.Integer(k) for s, k in values.items()})
        if not (v.is_Integer and int(v) == want):
            return False
    return True
