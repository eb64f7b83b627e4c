"""Proofs of the expression layer's rewrite rules (``symshape/algebra/expr.py``) that are
still over sample expressions (the rest, and the relation normal forms of
``symshape/algebra/relations.py``, are proven for every input in ``proofs/expr_every.py``).

Each proof states the rule for all integers in Z3 (divisors symbolic wherever the rule is
parametric), then runs the real constructor (``floordiv``, ``mod``, ``smin`` ...) on symbolic
inputs and proves its *output* equal to Python's operator for every value of the symbols
(``proofs/code.py``): the lemma shows the maths is right, the code claim shows the code
computes it.
"""
from __future__ import annotations

import itertools
from typing import Callable, Iterable, List, Sequence

import z3

from symshape.algebra import expr as E

from . import samples, proves
from .code import divisors, encode, prove_code, prove_expr_equal
from .pyint import Py, require, zmax, zmin

# ---------------------------------------------------------------------------- grid helpers
S0, S1, S2 = E.Sym(900), E.Sym(901), E.Sym(902)
P = (S0.expr, S1.expr, S2.expr)
VALUES = range(-5, 6)


def _points(syms=(S0, S1)) -> List[dict]:
    return [dict(zip(syms, vs)) for vs in itertools.product(VALUES, repeat=len(syms))]


def _sample_exprs() -> List[E.IntLike]:
    s0, s1 = P[0], P[1]
    return [
        3 * s0 + 5 * s1 + 7,
        7 * s0 * s1 - 4 * s1 + 2,
        -6 * s0 + 9,
        s0 * s0 - 3 * s0 - 1,
        E.floordiv(s0, 3) + 2 * s1,
        E.floordiv(s0 + 1, 2),
        E.mod(s0, 6) + 4 * s1 - 5,
        E.mod(s0 + s1, 12),
        E.smin(s0, s1) * 4 + 1,
    ]


def _fd(P_: Py, a, b):
    """Python's ``a // b`` in Z3 (the meaning every floordiv rewrite must keep)."""
    return P_.floordiv(a, b)


def _md(P_: Py, a, b):
    return P_.mod(a, b)


def _defined(P_: Py, zs, *xs) -> list:
    """The inputs' own divisions are defined (their divisors non-zero)."""
    out = []
    for x in xs:
        if type(x) is E.Expr:
            out += [d != 0 for d in divisors(P_, x, zs)]
    return out


def _check_rewrite(op: Callable, zop: Callable, a, b, what: str) -> E.IntLike:
    """Prove the code's output ``op(a, b)`` equal to ``zop`` of its inputs for every value
    of the symbols where the inputs are defined and the divisor ``b`` is non-zero."""
    got = op(a, b)
    prove_expr_equal(
        got, lambda P_, zs: zop(P_, encode(P_, a, zs), encode(P_, b, zs)),
        hyps_fn=lambda P_, zs: _defined(P_, zs, a, b) + [encode(P_, b, zs) != 0],
        what="%s: %s, %s -> %s" % (what, a, b, got))
    return got


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


def _check_op(op: Callable, zop: Callable, exprs: Iterable, divisors_: Sequence[int],
              what: str) -> None:
    """``op(e, b)`` as the code rewrites it equals ``e // b`` (or ``%``) for all symbol
    values, for each sample ``e`` and each divisor ``b``."""
    for e in exprs:
        for b in divisors_:
            _check_rewrite(op, zop, e, b, what)


POS = [1, 2, 3, 4, 6, 12]


# ---------------------------------------------------------------------------- floordiv


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


# ---------------------------------------------------------------------------- mod


# ---------------------------------------------------------------------------- ceildiv


# ---------------------------------------------------------------------------- sampled still
# (the symbolic-coefficient runs of these paths exceed Z3's nonlinear reach within the limit:
# proofs/expr_every.py proves the rest of floordiv / mod for every input)
@proves("floordiv.nested", over=samples("nine sample expressions times a few divisors"))
def floordiv_nested():
    P_ = Py()
    x, b, c = z3.Ints("x b c")
    P_.prove(P_.floordiv(P_.floordiv(x, c), b) == P_.floordiv(x, b * c), b > 0, c > 0)
    s0 = P[0]
    inner = [E.floordiv(s0, 3), E.floordiv(s0 + P[1], 2), E.floordiv(3 * s0 + 1, 4)]
    _check_op(E.floordiv, _fd, inner, POS, "nested floordiv")
    got = E.floordiv(E.floordiv(s0, 3), 4)
    require(got == E.floordiv(s0, 12), "(s//3)//4 should merge to s//12, got %s", got)


@proves("floordiv.common_gcd", over=samples("nine sample expressions times a few divisors"))
def floordiv_common_gcd():
    P_ = Py()
    g, x, m = z3.Ints("g x m")
    P_.prove(P_.floordiv(g * x, g * m) == P_.floordiv(x, m), g > 0, m > 0)
    s0, s1 = P[0], P[1]
    cases = [6 * s0 + 4, 10 * s0 * s1 - 15 * s1 + 5, 4 * s0 + 8 * s1 + 2, 9 * s0 - 3]
    _check_op(E.floordiv, _fd, cases, [2, 3, 6, 10, 12, -4, -6], "floordiv common gcd")
    require(E.floordiv(6 * s0 + 4, 10) == E.floordiv(3 * s0 + 2, 5),
            "(6*s + 4)//10 should reduce to (3*s + 2)//5, got %s", E.floordiv(6 * s0 + 4, 10))


@proves("mod.coeff_reduce", over=samples("nine sample expressions times a few divisors"))
def mod_coeff_reduce():
    P_ = Py()
    b, q, r = z3.Ints("b q r")
    P_.prove(P_.mod(b * q + r, b) == P_.mod(r, b), b > 0)
    P_ = Py()
    c1, c2, t1, t2, k = z3.Ints("c1 c2 t1 t2 k")
    a = c1 * t1 + c2 * t2 + k
    rest = P_.mod(c1, b) * t1 + P_.mod(c2, b) * t2 + P_.mod(k, b)
    P_.prove(P_.mod(a, b) == P_.mod(rest, b), b > 0)
    _check_op(E.mod, _md, _sample_exprs(), POS, "mod coefficient reduction")


@proves("mod.common_gcd", over=samples("nine sample expressions times a few divisors"))
def mod_common_gcd():
    P_ = Py()
    g, x, m = z3.Ints("g x m")
    P_.prove(P_.mod(g * x, g * m) == g * P_.mod(x, m), g > 0, m > 0)
    s0, s1 = P[0], P[1]
    cases = [6 * s0 + 4, 10 * s0 * s1 - 15 * s1 + 5, 4 * s0 + 8 * s1 + 2, 9 * s0 - 3,
             14 * s0 + 4 * s1]
    _check_op(E.mod, _md, cases, [2, 3, 6, 10, 12, -4, -6], "mod common gcd")
    require(E.mod(6 * s0 + 4, 10) == 2 * E.mod(3 * s0 + 2, 5),
            "Mod(6*s + 4, 10) should be 2*Mod(3*s + 2, 5), got %s", E.mod(6 * s0 + 4, 10))


@proves("mod.nested", over=samples("nine sample expressions times a few divisors"))
def mod_nested():
    P_ = Py()
    x, b, c, t = z3.Ints("x b c t")
    P_.prove(P_.mod(P_.mod(x, c), b) == P_.mod(x, b), b > 0, c == b * t, c != 0)
    s0 = P[0]
    inner = [E.mod(s0, 12), E.mod(s0 + P[1], 6), E.mod(3 * s0 + 1, 8)]
    _check_op(E.mod, _md, inner, POS, "nested mod")
    got = E.mod(E.mod(s0, 12), 4)
    require(got == E.mod(s0, 4), "Mod(Mod(s, 12), 4) should be Mod(s, 4), got %s", got)


# ---------------------------------------------------------------------------- Min / Max


# ---------------------------------------------------------------------------- relations


