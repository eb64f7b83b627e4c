"""Composites for the elementwise ops whose NumPy semantics no single ONNX op has.

Each takes the conversion context, the operands (already in the compute dtype ``dt``)
and ``dt``, and returns the result's name: in ``dt`` for arithmetic, bool for predicates.
The edge cases are NumPy's: Python's floor division and remainder (and ``x // 0 == 0``,
``x % 0 == 0`` for integers, where ONNX's ``Div`` would trap), ``INT_MIN // -1`` wrapping,
NaN propagation in ``maximum`` / ``minimum``, shifts by the bit width or more, the
quadrants and signed zeros of ``atan2``.
"""
from __future__ import annotations

import numpy as np

from .context import Refusal

# (x, y) of the helpers below are ONNX names; ``cx.w`` writes the nodes


def _c(cx, v, dt):
    return cx.w.const(np.asarray(v).astype(dt))


def add(cx, a, dt):
    """``+``: ``Or`` for bools, ``Add`` otherwise."""
    return cx.w.op("Or" if dt.kind == "b" else "Add", list(a), "add")


def multiply(cx, a, dt):
    """``*``: ``And`` for bools, ``Mul`` otherwise."""
    return cx.w.op("And" if dt.kind == "b" else "Mul", list(a), "multiply")


def not_equal(cx, a, dt):
    """``!=`` as ``Not(Equal)``."""
    return cx.w.op("Not", [cx.w.op("Equal", list(a))], "not_equal")


def bitwise(op):
    """A bitwise op: the logical op for bools, ``Bitwise<op>`` for integers."""
    def build(cx, a, dt):
        return cx.w.op(op if dt.kind == "b" else "Bitwise" + op, list(a), "bitwise")
    return build


def invert(cx, a, dt):
    """``~``: ``Not`` for bools, ``BitwiseNot`` for integers."""
    return cx.w.op("Not" if dt.kind == "b" else "BitwiseNot", [a[0]], "invert")


def _safe_divisor(cx, b, dt):
    """(divisor with 0 and -1 replaced by 1, is-zero, is-minus-one): ONNX's integer Div
    and Mod trap on 0 and on INT_MIN / -1."""
    w = cx.w
    zero = w.op("Equal", [b, _c(cx, 0, dt)])
    bad = zero
    minus = None
    if dt.kind == "i":
        minus = w.op("Equal", [b, _c(cx, -1, dt)])
        bad = w.op("Or", [zero, minus])
    return cx.where(bad, _c(cx, 1, dt), b, dt), zero, minus


def _int_floordiv(cx, x, safe, zero, minus, dt):
    w = cx.w
    q = w.op("Div", [x, safe])
    if dt.kind == "i":
        r = w.op("Mod", [x, safe], fmod=1)
        z = _c(cx, 0, dt)
        fix = w.op("And", [w.op("Not", [w.op("Equal", [r, z])]),
                           w.op("Xor", [w.op("Less", [x, z]), w.op("Less", [safe, z])])])
        q = w.op("Sub", [q, w.op("Cast", [fix], to=_elem(dt))])
        q = cx.where(minus, w.op("Neg", [x]), q, dt)     # wraps, as NumPy
    return cx.where(zero, _c(cx, 0, dt), q, dt)


def _int_mod(cx, x, safe, zero, minus, dt):
    r = cx.w.op("Mod", [x, safe], fmod=0)
    bad = zero if minus is None else cx.w.op("Or", [zero, minus])
    return cx.where(bad, _c(cx, 0, dt), r, dt)


def _divmod(which: int):
    """``floor_divide`` (0) or ``remainder`` (1) of integers or floats."""
    def build(cx, a, dt):
        x, y = a
        if dt.kind == "f":
            return _float_divmod(cx, x, y, dt)[which]
        safe, zero, minus = _safe_divisor(cx, y, dt)
        return (_int_mod if which else _int_floordiv)(cx, x, safe, zero, minus, dt)
    return build


floor_divide = _divmod(0)
remainder = _divmod(1)


def _float_divmod(cx, x, y, dt):
    """NumPy's ``npy_divmod``: mod = fmod(x, y), moved to y's sign; div = (x - mod)/y
    rounded to the nearest integer value; y == 0 gives fmod's NaN and x / y."""
    w = cx.w
    zero = _c(cx, 0, dt)
    mod = w.op("Mod", [x, y], fmod=1)
    div = w.op("Div", [w.op("Sub", [x, mod]), y])
    nz = w.op("Not", [w.op("Equal", [mod, zero])])
    flip = w.op("And", [nz, w.op("Xor", [w.op("Less", [y, zero]), w.op("Less", [mod, zero])])])
    mod2 = w.op("Where", [flip, w.op("Add", [mod, y]), mod])
    div2 = w.op("Where", [flip, w.op("Sub", [div, _c(cx, 1, dt)]), div])
    # a zero remainder takes the divisor's sign
    mod3 = w.op("Where", [nz, mod2, _copysign(cx, zero, y, dt)], "remainder")
    fl = w.op("Floor", [div2])
    up = w.op("Greater", [w.op("Sub", [div2, fl]), _c(cx, 0.5, dt)])
    fl = w.op("Where", [up, w.op("Add", [fl, _c(cx, 1, dt)]), fl])
    # a zero quotient takes the sign of x / y
    q = w.op("Div", [x, y])
    dz = w.op("Equal", [div2, zero])
    fl = w.op("Where", [dz, _copysign(cx, zero, q, dt), fl])
    yz = w.op("Equal", [y, zero])
    return w.op("Where", [yz, q, fl], "floor_divide"), mod3


def _elem(dt) -> int:
    from .dtypes import ELEM
    return ELEM[np.dtype(dt).name]


def _negative(cx, y, dt):
    """y < 0, or y is -0.0 (1/y is -inf)."""
    w = cx.w
    zero = _c(cx, 0, dt)
    neg0 = w.op("And", [w.op("Equal", [y, zero]),
                        w.op("Less", [w.op("Reciprocal", [y]), zero])])
    return w.op("Or", [w.op("Less", [y, zero]), neg0], "signbit")


def _copysign(cx, x, y, dt):
    w = cx.w
    ax = w.op("Abs", [x])
    return w.op("Where", [_negative(cx, y, dt), w.op("Neg", [ax]), ax], "copysign")


def copysign(cx, a, dt):
    """``copysign(x, y)``: ``|x|`` with the sign of ``y`` (-0.0 included)."""
    return _copysign(cx, a[0], a[1], dt)


def signbit(cx, a, dt):
    """``signbit``: ``x < 0`` or ``x`` is -0.0; never for unsigned integers."""
    if dt.kind == "u":
        return cx.w.op("Equal", [a[0], cx.w.op("Add", [a[0], _c(cx, 1, dt)])], "false")
    if dt.kind == "i":
        return cx.w.op("Less", [a[0], _c(cx, 0, dt)], "signbit")
    return _negative(cx, a[0], dt)


def sign(cx, a, dt):
    """``sign``, NaN staying NaN as in NumPy."""
    x = a[0]
    s = cx.w.op("Sign", [x])
    if dt.kind != "f":
        return s
    return cx.w.op("Where", [cx.w.op("IsNaN", [x]), x, s], "sign")


def _false_like(cx, x, dt):
    # x != x is False for every integer and bool (a ConstantOfShape would need the shape)
    return cx.w.op("Not", [cx.w.op("Equal", [x, x])], "false")


def isnan(cx, a, dt):
    """``isnan``: False for integers and bools."""
    return cx.w.op("IsNaN", [a[0]]) if dt.kind == "f" else _false_like(cx, a[0], dt)


def isinf(cx, a, dt):
    """``isinf``: False for integers and bools."""
    return cx.w.op("IsInf", [a[0]]) if dt.kind == "f" else _false_like(cx, a[0], dt)


def isfinite(cx, a, dt):
    """``isfinite``: not NaN and not infinite; True for integers and bools."""
    if dt.kind != "f":
        return cx.w.op("Equal", [a[0], a[0]], "true")
    x = a[0]
    return cx.w.op("Not", [cx.w.op("Or", [cx.w.op("IsNaN", [x]), cx.w.op("IsInf", [x])])],
                   "isfinite")


def _minmax(op):
    def build(cx, a, dt):
        w = cx.w
        if dt.kind == "b":
            return w.op("Or" if op == "Max" else "And", list(a), op.lower())
        r = w.op(op, list(a), op.lower())
        if dt.kind != "f":
            return r
        x, y = a
        nan = w.op("Or", [w.op("IsNaN", [x]), w.op("IsNaN", [y])])
        return w.op("Where", [nan, w.op("Add", [x, y]), r], op.lower())
    return build


maximum = _minmax("Max")
minimum = _minmax("Min")


def power(cx, a, dt):
    """Floats: ``Pow`` (NumPy's fast paths for the scalar exponents 2, 0.5, 1 and -1 are
    kept exact); integers: a constant exponent in [0, 8] as products (they wrap as NumPy's
    do); other integer powers are refused (onnxruntime computes them through doubles)."""
    node = cx.node
    e = node.inputs[1]
    const = e if isinstance(e, (int, float, np.generic)) and not isinstance(e, bool) else None
    x = a[0]
    w = cx.w
    if dt.kind == "f":
        if const is not None and float(const) == 2.0:
            return w.op("Mul", [x, x], "pow")
        if const is not None and float(const) == 0.5:
            return w.op("Sqrt", [x], "pow")
        if const is not None and float(const) == 1.0:
            return w.op("Identity", [x], "pow")
        if const is not None and float(const) == -1.0:
            return w.op("Reciprocal", [x], "pow")
        return w.op("Pow", list(a), "pow")
    if const is None or int(const) != const or not 0 <= int(const) <= 8:
        raise Refusal("an integer power with an exponent other than a constant in [0, 8]",
                      "cast the base to float64 (onnxruntime computes integer powers "
                      "through doubles, which is not exact for large values), or keep "
                      "this program on ep.compile()")
    k = int(const)
    if k == 0:
        return w.op("Add", [w.op("Sub", [x, x]), _c(cx, 1, dt)], "pow")
    out = x
    for _ in range(k - 1):
        out = w.op("Mul", [out, x], "pow")
    return out


def expm1(cx, a, dt):
    """Kahan: u = exp(x); u == 1 -> x; u - 1 == -1 -> -1; else (u - 1) * (x / log(u))."""
    w = cx.w
    x = a[0]
    u = w.op("Exp", [x])
    one = _c(cx, 1, dt)
    um1 = w.op("Sub", [u, one])
    r = w.op("Mul", [um1, w.op("Div", [x, w.op("Log", [u])])])
    r = w.op("Where", [w.op("Equal", [um1, _c(cx, -1, dt)]), um1, r])
    r = w.op("Where", [w.op("IsInf", [u]), u, r])
    return w.op("Where", [w.op("Equal", [u, one]), x, r], "expm1")


def log1p(cx, a, dt):
    """Kahan: u = 1 + x; u == 1 -> x; else log(u) * (x / (u - 1))."""
    w = cx.w
    x = a[0]
    one = _c(cx, 1, dt)
    u = w.op("Add", [one, x])
    # log(u) * (x / (u - 1)): the ratio first, so a large x does not overflow the product
    r = w.op("Mul", [w.op("Log", [u]), w.op("Div", [x, w.op("Sub", [u, one])])])
    r = w.op("Where", [w.op("IsInf", [u]), w.op("Log", [u]), r])
    return w.op("Where", [w.op("Equal", [u, one]), x, r], "log1p")


def log_base(base: float):
    """``log2`` / ``log10``: ``log(x) / log(base)``."""
    def build(cx, a, dt):
        return cx.w.op("Div", [cx.w.op("Log", [a[0]]), _c(cx, np.log(base), dt)], "log")
    return build


def atan2(cx, a, dt):
    """``atan2(y, x)``: ``atan(y / x)`` moved to its quadrant, with atan2's values on the
    axes, at the infinities and for signed zeros."""
    w = cx.w
    y, x = a
    zero = _c(cx, 0, dt)
    pi = _c(cx, np.pi, dt)
    half = _c(cx, np.pi / 2, dt)
    base = w.op("Atan", [w.op("Div", [y, x])])
    yneg = _negative(cx, y, dt)
    xneg = _negative(cx, x, dt)
    signed_pi = w.op("Where", [yneg, w.op("Neg", [pi]), pi])
    r = w.op("Where", [xneg, w.op("Add", [base, signed_pi]), base])
    # x == 0: +-pi/2 by y's sign; y == 0: +-0 or +-pi by x's sign
    xz = w.op("Equal", [x, zero])
    r = w.op("Where", [xz, w.op("Where", [yneg, w.op("Neg", [half]), half]), r])
    yz = w.op("Equal", [y, zero])
    r = w.op("Where", [yz, w.op("Where", [xneg, signed_pi, _copysign(cx, zero, y, dt)]), r])
    # both infinite: +-pi/4 or +-3pi/4
    inf = w.op("And", [w.op("IsInf", [x]), w.op("IsInf", [y])])
    q = w.op("Where", [xneg, _c(cx, 3 * np.pi / 4, dt), _c(cx, np.pi / 4, dt)])
    r = w.op("Where", [inf, w.op("Where", [yneg, w.op("Neg", [q]), q]), r])
    nan = w.op("Or", [w.op("IsNaN", [x]), w.op("IsNaN", [y])])
    return w.op("Where", [nan, w.op("Add", [x, y]), r], "atan2")


def hypot(cx, a, dt):
    """``hypot``: scaled by the larger magnitude, so no square overflows; infinite if either is."""
    w = cx.w
    x, y = (w.op("Abs", [v]) for v in a)
    m = w.op("Max", [x, y])
    zero = _c(cx, 0, dt)
    safe = w.op("Where", [w.op("Equal", [m, zero]), _c(cx, 1, dt), m])
    xs, ys = w.op("Div", [x, safe]), w.op("Div", [y, safe])
    r = w.op("Mul", [m, w.op("Sqrt", [w.op("Add", [w.op("Mul", [xs, xs]),
                                                   w.op("Mul", [ys, ys])])])])
    inf = w.op("Or", [w.op("IsInf", [x]), w.op("IsInf", [y])])
    r = w.op("Where", [inf, _c(cx, np.inf, dt), r])
    nan = w.op("And", [w.op("Or", [w.op("IsNaN", [x]), w.op("IsNaN", [y])]),
                       w.op("Not", [w.op("Equal", [m, _c(cx, np.inf, dt)])])])
    return w.op("Where", [nan, w.op("Add", [x, y]), r], "hypot")


def logaddexp(cx, a, dt):
    """max(x, y) + log1p(exp(-|x - y|)); x == y (both infinite included) gives x + log(2)."""
    w = cx.w
    x, y = a
    m = w.op("Max", [x, y])
    d = w.op("Neg", [w.op("Abs", [w.op("Sub", [x, y])])])
    r = w.op("Add", [m, log1p(cx, [w.op("Exp", [d])], dt)])
    same = w.op("Equal", [x, y])
    r = w.op("Where", [same, w.op("Add", [x, _c(cx, np.log(2.0), dt)]), r])
    nan = w.op("Or", [w.op("IsNaN", [x]), w.op("IsNaN", [y])])
    return w.op("Where", [nan, w.op("Add", [x, y]), r], "logaddexp")


def _unsigned(dt):
    return np.dtype("uint%d" % (8 * np.dtype(dt).itemsize))


def _shift(cx, a, dt, direction):
    """An unsigned shift; a count of the bit width or more (or negative) gives 0."""
    w = cx.w
    u = _unsigned(dt)
    x = a[0] if dt == u else w.op("Cast", [a[0]], to=_elem(u))
    n = a[1] if dt == u else w.op("Cast", [a[1]], to=_elem(u))
    big = w.op("GreaterOrEqual", [n, _c(cx, 8 * dt.itemsize, u)])
    safe = cx.where(big, _c(cx, 0, u), n, u)
    r = w.op("BitShift", [x, safe], direction=direction)
    return cx.where(big, _c(cx, 0, u), r, u), big


def shift_left(cx, a, dt):
    """``<<``, through the unsigned type of the same width."""
    r, _ = _shift(cx, a, dt, "LEFT")
    return r if dt.kind == "u" else cx.w.op("Cast", [r], "shift", to=_elem(dt))


def shift_right(cx, a, dt):
    """``>>``: logical for unsigned, arithmetic for signed integers."""
    if dt.kind == "u":
        return _shift(cx, a, dt, "RIGHT")[0]
    w = cx.w
    # arithmetic shift: ~(~x >> n) for negative x, as C's >> on two's complement
    neg = w.op("Less", [a[0], _c(cx, 0, dt)])
    pos = cx.where(neg, w.op("BitwiseNot", [a[0]]), a[0], dt)
    r, _ = _shift(cx, [pos, a[1]], dt, "RIGHT")
    r = w.op("Cast", [r], to=_elem(dt))
    return cx.where(neg, w.op("BitwiseNot", [r]), r, dt)


# --------------------------------------------------------------------------- float64
# onnxruntime's CPU provider computes these in float32 only: in float64 they are written
# with the float64 ops it has (exp, log, sqrt), in the forms that keep a few ulps
# (no cancellation near 0, no overflow before the true result overflows)


def native_f32(op: str, f64):
    """``op`` itself for float32, ``f64`` (a composite) for float64."""
    def build(cx, a, dt):
        if dt.name == "float32":
            return cx.w.op(op, [a[0]], op.lower())
        return f64(cx, a[0], dt)
    return build


def _big_exp(cx, ax, dt):
    """exp(|x|)/2 without overflowing first: (exp(|x|/2)/2)*exp(|x|/2)."""
    w = cx.w
    h = w.op("Exp", [w.op("Mul", [ax, _c(cx, 0.5, dt)])])
    return w.op("Mul", [w.op("Mul", [h, _c(cx, 0.5, dt)]), h])


def sinh64(cx, x, dt):
    """(u + u/(u + 1))/2, u = expm1(|x|), below 20; exp(|x|)/2 above; x's sign."""
    w = cx.w
    ax = w.op("Abs", [x])
    u = expm1(cx, [ax], dt)
    small = w.op("Mul", [w.op("Add", [u, w.op("Div", [u, w.op("Add", [u, _c(cx, 1, dt)])])]),
                         _c(cx, 0.5, dt)])
    big = w.op("Greater", [ax, _c(cx, 20, dt)])
    r = w.op("Where", [big, _big_exp(cx, ax, dt), small])
    r = w.op("Where", [w.op("IsNaN", [x]), x, r])
    return _copysign(cx, r, x, dt)


def cosh64(cx, x, dt):
    """(e + 1/e)/2, e = exp(|x|), below 20; exp(|x|)/2 above."""
    w = cx.w
    ax = w.op("Abs", [x])
    e = w.op("Exp", [ax])
    small = w.op("Mul", [w.op("Add", [e, w.op("Reciprocal", [e])]), _c(cx, 0.5, dt)])
    big = w.op("Greater", [ax, _c(cx, 20, dt)])
    return w.op("Where", [big, _big_exp(cx, ax, dt), small], "cosh")


def asinh64(cx, x, dt):
    """log1p(|x| + x**2/(1 + sqrt(1 + x**2))) below 2**28, log(|x|) + log(2) above; x's
    sign."""
    w = cx.w
    ax = w.op("Abs", [x])
    sq = w.op("Mul", [ax, ax])
    inner = w.op("Add", [ax, w.op("Div", [sq, w.op("Add", [_c(cx, 1, dt), w.op(
        "Sqrt", [w.op("Add", [_c(cx, 1, dt), sq])])])])])
    small = log1p(cx, [inner], dt)
    big = w.op("Add", [w.op("Log", [ax]), _c(cx, np.log(2.0), dt)])
    r = w.op("Where", [w.op("Greater", [ax, _c(cx, 2.0 ** 28, dt)]), big, small])
    r = w.op("Where", [w.op("IsNaN", [x]), x, r])
    return _copysign(cx, r, x, dt)


def acosh64(cx, x, dt):
    """log1p(t + sqrt(2t + t**2)), t = x - 1, below 2**28; log(x) + log(2) above."""
    w = cx.w
    t = w.op("Sub", [x, _c(cx, 1, dt)])
    inner = w.op("Add", [t, w.op("Sqrt", [w.op("Add", [w.op("Mul", [t, _c(cx, 2, dt)]),
                                                      w.op("Mul", [t, t])])])])
    small = log1p(cx, [inner], dt)
    big = w.op("Add", [w.op("Log", [x]), _c(cx, np.log(2.0), dt)])
    r = w.op("Where", [w.op("Greater", [x, _c(cx, 2.0 ** 28, dt)]), big, small])
    # below 1 (where t*t can overflow to a finite-looking inf) the result is NaN
    return w.op("Where", [w.op("Less", [x, _c(cx, 1, dt)]), _c(cx, np.nan, dt), r], "acosh")


def atanh64(cx, x, dt):
    """log1p(2|x|/(1 - |x|))/2, x's sign."""
    w = cx.w
    ax = w.op("Abs", [x])
    q = w.op("Div", [w.op("Mul", [ax, _c(cx, 2, dt)]), w.op("Sub", [_c(cx, 1, dt), ax])])
    r = w.op("Mul", [log1p(cx, [q], dt), _c(cx, 0.5, dt)])
    r = w.op("Where", [w.op("IsNaN", [x]), x, r])
    return _copysign(cx, r, x, dt)
