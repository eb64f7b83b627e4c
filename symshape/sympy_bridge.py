"""Size expressions as sympy expressions, for the public ``input_shapes`` and
``range_constraints``.  sympy is imported here only, on first use, so that exporting a
program never pays for it."""
from __future__ import annotations

from typing import Dict

from .expr import IntLike, OpAtom, Sym

_symbols: Dict[str, object] = {}


def symbol(s: Sym):
    import sympy
    got = _symbols.get(s.name)
    if got is None:
        if s.unbacked:
            got = sympy.Symbol(s.name, integer=True)
        else:
            got = sympy.Symbol(s.name, integer=True, positive=True)
        _symbols[s.name] = got
    return got


def to_sympy(x: IntLike):
    import sympy
    if type(x) is int:
        return sympy.Integer(x)
    total = sympy.Integer(x.const)
    for term, c in x.terms:
        prod = sympy.Integer(c)
        for atom in term:
            prod = prod * (symbol(atom) if type(atom) is Sym else _atom(atom))
        total = total + prod
    return total


def _atom(a: OpAtom):
    import sympy
    args = [to_sympy(x) for x in a.args]
    if a.kind == "FloorDiv":
        return sympy.floor(args[0] / args[1])
    if a.kind == "Mod":
        return sympy.Mod(args[0], args[1])
    return sympy.Min(*args) if a.kind == "Min" else sympy.Max(*args)
