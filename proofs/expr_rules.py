"""Proofs of the expression layer's rules (``symshape/algebra/expr.py``) that are still over
sample expressions (the rest, and the relation normal forms of
``symshape/algebra/relations.py``, are proven for every input in ``proofs/expr_every.py``
and ``proofs/divmod_every.py``), and ``code_guards_divisor``, which those proofs share.

Each proof states the rule for all integers in Z3 (divisors symbolic wherever the rule is
parametric), then runs the real constructor (``floordiv``, ``mod``, ``smin`` ...) on symbolic
inputs and proves its *output* equal to Python's operator for every value of the symbols
(``proofs/code.py``): the lemma shows the maths is right, the code claim shows the code
computes it.
"""
from __future__ import annotations

import itertools
from typing import Callable, List

import z3

from symshape.algebra import expr as E

from . import samples, proves
from .code import divisors, encode, prove_code
from .pyint import Py, require, zmax, zmin

# ---------------------------------------------------------------------------- grid helpers
S0, S1, S2 = E.Sym(900), E.Sym(901), E.Sym(902)
P = (S0.expr, S1.expr, S2.expr)
VALUES = range(-5, 6)


def _points(syms=(S0, S1)) -> List[dict]:
    return [dict(zip(syms, vs)) for vs in itertools.product(VALUES, repeat=len(syms))]


def code_guards_divisor(divide: Callable) -> None:
    """The side condition ``divisor != 0`` of a rewrite that drops the divisor is checked by
    the code: dividing by a size (a ``SymInt`` whose range admits 0) records the guard
    ``divisor != 0``, so the program's contract excludes the inputs where eager Python
    raises ZeroDivisionError; a data-dependent divisor becomes a check run where it is
    computed."""
    from symshape.reasoning.env import ShapeEnv
    from symshape.algebra.infinity import INT_OO
    from symshape.algebra.ranges import ValueRange
    from symshape.sizes.symint import SymInt
    env = ShapeEnv()
    a = env.create_symbol(6, "a", ValueRange(0, INT_OO))
    b = env.create_symbol(3, "b", ValueRange(0, INT_OO))
    divide(SymInt(a.expr, 6, env), SymInt(b.expr, 3, env))
    require(env.ranges[b].lower >= 1 or any(b in g.cond.free_symbols for g in env.guards),
            "dividing by a size that may be 0 records no guard: range %s, guards %s",
            env.ranges[b], [g.cond for g in env.guards])
    env = ShapeEnv()
    u = env.create_unbacked("u", ValueRange(0, INT_OO))
    divide(6, SymInt(u.expr, None, env))
    require(any(u in c.free_symbols for c, _, _ in env.checks),
            "dividing by a data-dependent size that may be 0 records no run-time check")


class _PyZ:
    """A Z3 integer with Python's operators (``//`` and ``%`` floor), to evaluate printed
    source text symbolically."""

    def __init__(self, P_: Py, v) -> None:
        self.P, self.v = P_, v

    def _w(self, v) -> "_PyZ":
        return _PyZ(self.P, v)

    @staticmethod
    def _u(o):
        return o.v if isinstance(o, _PyZ) else o

    def __add__(self, o):
        return self._w(self.v + self._u(o))

    def __radd__(self, o):
        return self._w(self._u(o) + self.v)

    def __sub__(self, o):
        return self._w(self.v - self._u(o))

    def __rsub__(self, o):
        return self._w(self._u(o) - self.v)

    def __mul__(self, o):
        return self._w(self.v * self._u(o))

    def __rmul__(self, o):
        return self._w(self._u(o) * self.v)

    def __neg__(self):
        return self._w(-self.v)

    def __floordiv__(self, o):
        return self._w(self.P.floordiv(self.v, self._u(o)))

    def __rfloordiv__(self, o):
        return self._w(self.P.floordiv(self._u(o), self.v))

    def __mod__(self, o):
        return self._w(self.P.mod(self.v, self._u(o)))

    def __rmod__(self, o):
        return self._w(self.P.mod(self._u(o), self.v))


@proves("print.python_source", over=samples("nine sample expressions times a few divisors"))
def print_python_source():
    s0, s1, s2 = P
    exprs = [E.floordiv(s1, 2 * s0), E.mod(s1 + 3, s0 * s2), -E.floordiv(s0 - 7, 3),
             E.smin(s0 - 3, 2 * s1) * 2 - 1, E.floordiv(-3 * s0 + 1, 4), E.mod(5 - s0, 3),
             E.floordiv(s0 * s1 - 1, s2), E.smax(E.floordiv(s0, s1), -s2, 4) - s0 * s1,
             E.mod(E.floordiv(s0, 3) * s1, 7) * -2, E.floordiv(s2, -s0 * s1),
             E.floordiv(s1, s0) * E.mod(s2, s0 + 1), 3 - E.ceildiv(s0, s1)]
    for e in exprs:
        text = E.format_py(e)
        P_ = Py()
        zs = {s: z3.Int(s.name) for s in (S0, S1, S2)}
        ns = {s.name: _PyZ(P_, zs[s]) for s in (S0, S1, S2)}
        ns["min"] = lambda *xs: _PyZ(P_, zmin(*[_PyZ._u(x) for x in xs]))
        ns["max"] = lambda *xs: _PyZ(P_, zmax(*[_PyZ._u(x) for x in xs]))
        printed = eval(text, {"__builtins__": {}}, ns)
        printed = printed.v if isinstance(printed, _PyZ) else printed
        nonzero = [d != 0 for d in divisors(P_, e, zs)]
        want = encode(P_, e, zs)
        prove_code(lambda v: v == want, [printed], nonzero, P=P_,
                   what="format_py(%s) is %r" % (e, text))
        for p in _points((S0, S1, S2))[::5]:
            try:
                want = E.evaluate(e, p)
            except ZeroDivisionError:
                continue
            got = eval(text, {"__builtins__": {}, "min": min, "max": max},
                       {s.name: v for s, v in p.items()})
            require(got == want, "format_py(%s) = %r gives %d at %s, not %d", e, text, got, p, want)


