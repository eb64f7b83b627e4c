"""``SymInt`` / ``SymBool``: the sizes user code sees while tracing.

A SymInt carries its expression, its example value (``hint``; None for data-dependent
sizes) and the shape environment.  Arithmetic builds expressions and never guards.
Comparisons build a ``SymBool``; only turning it into a Python ``bool`` asks the
environment, which decides statically or records a guard at the user's line.
Conversions to a concrete ``int`` (``int()``, ``operator.index``, ``len``, ``range``,
NumPy calls that need ints) specialise with a guard and a logged warning.
"""
from __future__ import annotations

from typing import Optional, Union

from symshape.algebra import expr as E
from symshape.algebra import relations as R
from symshape.rules import rule
from symshape.sizes.symfloat import SymFloat, make
from symshape.sizes.textuse import goes_to_output, is_percent_format
from symshape.userframe import user_frame


def _parts(x):
    """(expression, hint) of an int, SymInt or numpy integer; None if not integral."""
    t = type(x)
    if t is int:
        return x, x
    if t is SymInt:
        return x.expr, x.hint
    if t is bool:
        return int(x), int(x)
    try:
        import numpy as np
        if isinstance(x, np.integer):
            v = int(x)
            return v, v
    except ImportError:  # pragma: no cover
        pass
    return None


def _is_floatish(x) -> bool:
    if isinstance(x, (float, SymFloat)):
        return True
    try:
        import numpy as np
        return isinstance(x, np.floating)
    except ImportError:  # pragma: no cover
        return False


def wrap(env, e: E.IntLike, hint: Optional[int]) -> Union[int, "SymInt"]:
    return e if type(e) is int else SymInt(e, hint, env)


class SymInt:
    """A symbolic size (``x.shape[0]`` while tracing): an expression over the shape
    environment's symbols and its value on the example input (the hint).  Arithmetic builds
    new sizes; comparisons give ``SymBool``; ``int()`` specialises it, with a logged warning."""

    __slots__ = ("expr", "hint", "env")

    def float_operand(self):
        """(expression, hint, env) as an operand of a symbolic float (``symfloat.make``)."""
        return self.expr, self.hint, self.env

    def __array_ufunc__(self, ufunc, method, *inputs, **kwargs):
        # np.multiply(W, n) with a constant W and a size n: a traced value.  The tracer
        # that owns this environment (if any) handles it; NumPy scalars never get here
        # (they defer to our reflected operators).
        hook = self.env.ufunc_hook
        if hook is None:
            return NotImplemented
        return hook(ufunc, method, inputs, kwargs)

    def __init__(self, expr: E.Expr, hint: Optional[int], env) -> None:
        self.expr = expr
        self.hint = hint
        self.env = env

    # ------------------------------------------------------------------ arithmetic
    @rule("symint.operators")
    def _binop(self, other, op, hop, reverse=False, fop=None):
        p = _parts(other)
        if p is None:
            # a size meeting a float gives a symbolic float (n * 0.5, n + 0.5)
            if fop is not None and _is_floatish(other):
                return make(fop, other, self) if reverse else make(fop, self, other)
            return NotImplemented
        oe, oh = p
        a, b = (oe, self.expr) if reverse else (self.expr, oe)
        ha, hb = (oh, self.hint) if reverse else (self.hint, oh)
        if op is E.floordiv or op is E.mod:
            _nonzero_divisor(self.env, b, hb)
        e = op(a, b)
        h = hop(ha, hb) if ha is not None and hb is not None else None
        return wrap(self.env, e, h)

    def __add__(self, o):
        return self._binop(o, E.add, int.__add__, fop="add")

    def __radd__(self, o):
        return self._binop(o, E.add, int.__add__, True, fop="add")

    def __sub__(self, o):
        return self._binop(o, E.sub, int.__sub__, fop="sub")

    def __rsub__(self, o):
        return self._binop(o, E.sub, int.__sub__, True, fop="sub")

    def __mul__(self, o):
        if type(o) is list and self.env.repeat_hook is not None:
            return self.env.repeat_hook(o, self)
        return self._binop(o, E.mul, int.__mul__, fop="mul")

    def __rmul__(self, o):
        # ``[F] * n``: a list repeated by a size (capture/loops.py keeps n symbolic)
        if type(o) is list and self.env.repeat_hook is not None:
            return self.env.repeat_hook(o, self)
        return self._binop(o, E.mul, int.__mul__, True, fop="mul")

    def __floordiv__(self, o):
        return self._binop(o, E.floordiv, int.__floordiv__, fop="floordiv")

    def __rfloordiv__(self, o):
        return self._binop(o, E.floordiv, int.__floordiv__, True, fop="floordiv")

    def __mod__(self, o):
        return self._binop(o, E.mod, int.__mod__, fop="mod")

    def __rmod__(self, o):
        return self._binop(o, E.mod, int.__mod__, True, fop="mod")

    def __divmod__(self, o):
        return self // o, self % o

    def __neg__(self):
        return wrap(self.env, E.neg(self.expr), None if self.hint is None else -self.hint)

    def __pos__(self):
        return self

    def __abs__(self):
        if self.env.evaluate(R.ge(self.expr, 0), None if self.hint is None else self.hint >= 0):
            return self
        return -self

    def __pow__(self, o):
        if type(o) is int and o >= 0:
            out = 1
            for _ in range(o):
                out = out * self
            return out
        return make("pow", self, o)          # d ** -0.5: a symbolic float

    def __rpow__(self, o):
        if _is_floatish(o):
            return make("pow", o, self)
        return o ** int(self)

    def __lshift__(self, o):
        return self * (1 << int(o))

    def __rshift__(self, o):
        return self // (1 << int(o))

    def __truediv__(self, o):
        if isinstance(o, SymInt):
            _nonzero_divisor(self.env, o.expr, o.hint)
        return make("div", self, o)          # 1 / (n - 1): a symbolic float

    def __rtruediv__(self, o):
        _nonzero_divisor(self.env, self.expr, self.hint)
        return make("div", o, self)

    # ------------------------------------------------------------------ comparisons
    def _cmp(self, other, rel, hop):
        p = _parts(other)
        if p is None:
            if isinstance(other, float):
                return hop(int(self), other)
            return NotImplemented
        oe, oh = p
        c = rel(self.expr, oe)
        if type(c) is bool:
            return c
        h = hop(self.hint, oh) if self.hint is not None and oh is not None else None
        if self.env.decides_comparisons:
            return self.env.evaluate(c)      # symbolic_shape sizes: decided or an error
        return SymBool(c, h, self.env)

    def __eq__(self, o):
        return self._cmp(o, R.eq, int.__eq__)

    def __ne__(self, o):
        return self._cmp(o, R.ne, int.__ne__)

    def __lt__(self, o):
        return self._cmp(o, R.lt, int.__lt__)

    def __le__(self, o):
        return self._cmp(o, R.le, int.__le__)

    def __gt__(self, o):
        return self._cmp(o, R.gt, int.__gt__)

    def __ge__(self, o):
        return self._cmp(o, R.ge, int.__ge__)

    # ------------------------------------------------------------------ conversions
    def __bool__(self) -> bool:
        return bool(self.env.evaluate(R.ne(self.expr, 0), None if self.hint is None
                                      else self.hint != 0))

    def __int__(self) -> int:
        if self.hint is not None and is_percent_format(1) and goes_to_output(1):
            return self.hint                  # "%d" % n only printed: the example value
        return self.env.specialize(self.expr, "int()")

    def __index__(self) -> int:
        # NumPy converts shape arguments with __index__ *before* it dispatches on like=,
        # so the specialisation waits until the next traced operation: a creation call
        # with like= that receives this SymInt cancels it and stays symbolic.
        if self.hint is not None and is_percent_format(1) and goes_to_output(1):
            return self.hint                  # "%d" % n only printed: the example value
        return self.env.specialize_later(self.expr, "a conversion to a concrete int")

    def __float__(self) -> float:
        return float(self.env.specialize(self.expr, "float()"))

    def __trunc__(self):
        return self

    __floor__ = __ceil__ = __trunc__

    def __round__(self, ndigits=None):
        return self

    # A size used as text or as a key is a value the program depends on: it specialises
    # (guard + warning naming the line), like int(); the symbol's name never becomes data.
    # Text that only reaches debug output (print, logging, warnings, error messages) shows
    # the size in the user's terms and guards nothing (symshape/sizes/textuse.py decides).
    def __hash__(self):
        return hash(self.env.specialize(self.expr, "hash()"))

    def __str__(self) -> str:
        if self.env.decides_comparisons:
            return self.env.show(self.expr)          # a symbolic_shape size: its formula
        if goes_to_output(1):
            return self.describe()
        return str(self.env.specialize(self.expr, "str()"))

    def __repr__(self) -> str:
        if self.env.decides_comparisons:
            return self.env.show(self.expr)
        if goes_to_output(1):
            return self.describe()
        return repr(self.env.specialize(self.expr, "repr()"))

    def __format__(self, spec: str) -> str:
        if goes_to_output(1):
            return self.describe() if not spec or self.hint is None else \
                format(self.hint, spec)
        return format(self.env.specialize(self.expr, "format()"), spec)

    def describe(self) -> str:
        """The size in the user's terms (``x.shape[0] + 1``), for messages: no guard."""
        label = self.env.user_label
        return E.format_expr(self.env.simplify(self.expr), label, py=True)


class SymBool:
    """A comparison of sizes (``x.shape[0] <= 16``).  Used as a Python bool, it is decided
    from what is known or becomes a guard of the program at the user's line;
    ``ss.check(cond)`` makes it one explicitly."""

    __slots__ = ("cond", "hint", "env")

    def __init__(self, cond, hint: Optional[bool], env) -> None:
        self.cond = cond
        self.hint = hint
        self.env = env

    def __bool__(self) -> bool:
        return self.env.evaluate(self.cond, self.hint)

    def _combine(self, other, op):
        if isinstance(other, SymBool):
            oc, oh = other.cond, other.hint
        elif isinstance(other, bool):
            oc, oh = other, other
        else:
            return NotImplemented
        c = R.combine(op, [self.cond, oc])
        if type(c) is bool:
            return c
        h = None
        if self.hint is not None and oh is not None:
            h = (self.hint and oh) if op == "and" else (self.hint or oh)
        return SymBool(c, h, self.env)

    def __and__(self, o):
        return self._combine(o, "and")

    __rand__ = __and__

    def __or__(self, o):
        return self._combine(o, "or")

    __ror__ = __or__

    def __invert__(self):
        c = R.negate(self.cond)
        if type(c) is bool:
            return c
        return SymBool(c, None if self.hint is None else not self.hint, self.env)

    def __hash__(self):
        raise TypeError("unhashable type: SymBool")

    def __repr__(self) -> str:
        return self.env.subst_cond(self.cond).format() if not isinstance(
            self.env.subst_cond(self.cond), bool) else repr(self.env.subst_cond(self.cond))


def sym_min(*args):
    """``min`` without a guard: keeps ``Min(16, s3)`` symbolic."""
    return _sym_minmax(E.smin, min, args)


def sym_max(*args):
    """``max`` without a guard."""
    return _sym_minmax(E.smax, max, args)


def sym_ceildiv(a, b: int):
    """``ceil(a / b)`` of an int or ``SymInt`` ``a`` by a non-zero int ``b``, without a
    guard: the one ceiling division on traced sizes (spelled ``(a + b - 1) // b`` with
    ``b > 0``, so the size keeps a positive coefficient; ``E.ceildiv`` is the same
    division on plain ints and expressions)."""
    if b < 0:
        a, b = -a, -b
    return (a + (b - 1)) // b


def _sym_minmax(sym_op, py_op, args):
    if len(args) == 1:
        args = tuple(args[0])
    env = None
    exprs, hints = [], []
    for a in args:
        p = _parts(a)
        if p is None:
            raise TypeError("sym_min/sym_max take ints and SymInts, got %r" % (a,))
        exprs.append(p[0])
        hints.append(p[1])
        if type(a) is SymInt:
            env = a.env
    if env is None:
        return py_op(exprs)
    e = sym_op(*exprs)
    h = py_op(hints) if None not in hints else None
    return wrap(env, env.simplify(e), h)


def describe(x) -> str:
    """Text of an int or a size for messages and annotations, never guarding."""
    return x.describe() if type(x) is SymInt else str(x)


def _nonzero_divisor(env, b, hint) -> None:
    """Python raises ZeroDivisionError for ``a // 0`` and ``a % 0``: a program dividing by
    a size is defined only where that size is non-zero, so this joins its contract (a
    guard the input check enforces; for a data-dependent divisor a check where it is
    computed).  The expression layer's rewrites that drop the divisor (``n // n -> 1``,
    ``(n*m) // n -> m``) rely on it."""
    if type(b) is not E.Expr:
        return                      # an int divisor: 0 raises in expr.floordiv itself
    c = R.ne(b, 0)
    h = None if hint is None else hint != 0
    if any(s.unbacked for s in b.free_symbols):
        env.check(c, h, "a size divided by must not be 0", user_frame(3))
    else:
        env.evaluate(c, h, user_frame(3))

