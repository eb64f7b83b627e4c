"""Integer conversions of symbolic floats: ``int(f)``, ``math.floor(f)``, ``math.ceil(f)``,
``math.trunc(f)`` and ``round(f)`` of a ``SymFloat`` built from sizes give a symbolic size.

``int((stride * (n - 1) + k - n) / 2)`` (``'same'`` padding) is the floor or ceiling of a
ratio of two size expressions.  When the float expression is *exact* in that sense (sizes and
integers combined with ``+ - *``, float constants that are short binary fractions such as
``0.5`` or ``0.75`` but not ``0.1``, whose products round, at most one true division,
followed only by adding or subtracting integers or flooring by one), the conversion is
computed as integer arithmetic on sizes (``(p) // (q)``).  That equals what eager Python
computes with floats while the integers involved stay below 2**52 (the numerator, e.g.
``3 * n * m``): no such value rounds, and a quotient of such integers never rounds across an
integer.  The guards it needs are recorded at the user's line: the sign of a symbolic
divisor, and the sign of the value for ``int`` (truncation toward zero).  ``round`` rounds
half to even, as Python, with no guard (the tie is part of the size expression).  Any other float expression (``n * 0.1``, ``n ** 0.5``, a division followed by a
multiplication, which rounds) specialises the sizes in it, with a guard and a warning, as
``float()`` does: never a wrong value, never a ``TypeError``.
"""
from __future__ import annotations

from typing import Optional, Tuple

from symshape.algebra import expr as E
from symshape.algebra import relations as R
from symshape.sizes import symfloat
from symshape.sizes.symfloat import FloatExpr, SymFloat
from symshape.sizes.symint import wrap
from symshape.userframe import user_frame

# (numerator, denominator, divided): value == num / den; ``divided`` once a true division
# (whose float result is rounded) has happened
Ratio = Tuple[object, object, bool]

# a float constant such as 0.5 or 0.75 is exact in products and sums with sizes when its
# numerator and (power-of-two) denominator are short: with sizes below 2**31 no result
# needs more than the 53 bits of a double
_CONST_BITS = 21


def _leaf(a) -> Optional[Ratio]:
    if type(a) is E.Expr or type(a) is int:
        return a, 1, False
    if type(a) is bool:
        return int(a), 1, False
    if isinstance(a, float):
        if a != a or a in (float("inf"), float("-inf")):
            return None
        p, q = a.as_integer_ratio()     # q is a power of two for every finite float
        if p.bit_length() > _CONST_BITS or q.bit_length() > _CONST_BITS:
            return None                 # 0.1: a product with it rounds (3 * (1/3) == 1.0)
        return p, q, False
    return None


def _add(a: Ratio, b: Ratio, sign: int) -> Optional[Ratio]:
    (p1, q1, d1), (p2, q2, d2) = a, b
    if d1 and d2:
        return None
    if (d1 and not (type(q2) is int and q2 == 1)) or (d2 and not (type(q1) is int and q1 == 1)):
        return None                     # a rounded quotient plus a fraction: not exact
    num = E.add(E.mul(p1, q2), E.scale(E.mul(p2, q1), sign) if sign < 0 else E.mul(p2, q1))
    return num, E.mul(q1, q2), d1 or d2


def exact_ratio(f: FloatExpr) -> Optional[Ratio]:
    """``(num, den, divided)`` with ``f == num / den`` computed without rounding across an
    integer (see the module docstring), or None."""
    if type(f) is not FloatExpr:
        return _leaf(f)
    args = [exact_ratio(a) for a in f.args]
    if any(a is None for a in args):
        return None
    if f.op == "neg":
        p, q, d = args[0]
        return E.neg(p), q, d
    a, b = args
    if f.op in ("add", "sub"):
        return _add(a, b, 1 if f.op == "add" else -1)
    (p1, q1, d1), (p2, q2, d2) = a, b
    if f.op == "floordiv" and d1 and not d2 and q2 == 1:
        # a rounded quotient floored by an integer: the floor of the exact quotient
        return E.floordiv(p1, E.mul(q1, p2)), 1, False
    if d1 or d2:
        return None                     # only + and - may follow a rounded quotient
    if f.op == "mul":
        return E.mul(p1, p2), E.mul(q1, q2), False
    if f.op == "div":
        return E.mul(p1, q2), E.mul(q1, p2), True
    if f.op == "floordiv":
        # Python's float // is the exact floor of the quotient of the two (exact) operands
        return E.floordiv(E.mul(p1, q2), E.mul(q1, p2)), 1, False
    if f.op == "mod":
        # a % b == a - b * floor(a / b), exact for exact operands
        k = E.floordiv(E.mul(p1, q2), E.mul(q1, p2))
        return E.sub(E.mul(p1, q2), E.mul(E.mul(p2, q1), k)), E.mul(q1, q2), False
    if f.op == "pow" and type(b[0]) is int and b[1] == 1 and 0 <= b[0] <= 8:
        num, den = 1, 1
        for _ in range(b[0]):
            num, den = E.mul(num, p1), E.mul(den, q1)
        return num, den, False
    return None


def _decide(env, cond, frame) -> bool:
    """A condition on sizes: decided, or a guard at the user's line (the hint decides)."""
    return cond if type(cond) is bool else env.evaluate(cond, None, frame)


def _positive_den(env, num, den, frame):
    """(num, den) with den > 0; a symbolic divisor's sign becomes a guard."""
    if type(den) is int:
        return (num, den) if den > 0 else (E.neg(num), -den)
    den = env.simplify(den)
    if type(den) is int:
        return _positive_den(env, num, den, frame)
    if _decide(env, R.gt(den, 0), frame):
        return num, den
    return E.neg(num), E.neg(den)


MODES = ("floor", "ceil", "trunc", "round")


def to_int(f: SymFloat, mode: str, what: str):
    """``mode`` (``floor`` / ``ceil`` / ``trunc`` / ``round``) of a symbolic float as a size
    (an ``int`` when the sizes decide it); ``what`` names the conversion for warnings."""
    env = f.env
    frame = user_frame(3)
    r = exact_ratio(f.fexpr)
    if r is None:
        for s in f.fexpr.sizes():
            env.specialize(s, "%s of a float computed from sizes (%s)" % (what, f.describe()),
                           frame, advice="only ratios of sizes (no non-dyadic float "
                           "constants, no multiplication after a division) stay symbolic")
        return _PY_MODES[mode](float(f.fexpr.evaluate(env.hint_of)))
    num, den, _ = r
    num, den = _positive_den(env, num, den, frame)
    if mode == "floor":
        e = E.floordiv(num, den)
    elif mode == "ceil":
        e = E.ceildiv(num, den)
    elif mode == "trunc":
        e = E.floordiv(num, den) if _decide(env, R.ge(num, 0), frame) else E.ceildiv(num, den)
    else:
        # round half to even, with no guard: floor(x + 1/2), less one at a tie (the
        # remainder m of (2p + q) by 2q is 0; (2q - m) // 2q is 1 exactly then) whose floor
        # is odd
        twice, q2 = E.add(E.scale(num, 2), den), E.scale(den, 2)
        e = E.floordiv(twice, q2)
        tie = E.floordiv(E.sub(q2, E.mod(twice, q2)), q2)
        e = E.sub(e, E.mul(tie, E.mod(e, 2)))
    e = env.simplify(e)
    return wrap(env, e, env.hint_of(e))


_PY_MODES = {"floor": lambda v: int(v // 1), "ceil": lambda v: -int((-v) // 1),
             "trunc": int, "round": round}



def install() -> None:
    """Make ``int()`` / ``math.floor`` / ``math.ceil`` / ``round`` of a symbolic float a
    symbolic size (``symfloat`` cannot import this module: it builds on it)."""
    symfloat.TO_INT[:] = [to_int]
