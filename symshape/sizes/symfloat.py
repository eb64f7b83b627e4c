"""``SymFloat``: a Python float computed from sizes (``1 / (n - 1)``, ``d ** -0.5``).

Eager code turns such values into Python floats, which NumPy treats as *weak* scalars
(NEP 50: ``float32_array * 0.125`` stays float32).  While tracing, the value stays a small
expression tree over size expressions (``FloatExpr``) that generated code evaluates with
Python's own float arithmetic once the sizes are known, so the result is the float eager code
computes, with the same dtype behaviour.  Converting one to a concrete float (``float()``,
``math.sqrt``, a comparison) specialises the sizes in it, with a guard and a warning.
"""
from __future__ import annotations

import operator
from typing import Callable, Optional

from symshape.algebra import expr as E
from symshape.sizes.textuse import goes_to_output

PY = {"add": ("+", operator.add), "sub": ("-", operator.sub), "mul": ("*", operator.mul),
       "div": ("/", operator.truediv), "pow": ("**", operator.pow),
       "floordiv": ("//", operator.floordiv), "mod": ("%", operator.mod)}


class FloatExpr:
    """A float-valued expression: ``op`` over ``args`` (ints, floats, size ``Expr``s or
    ``FloatExpr``s).  Immutable."""

    __slots__ = ("op", "args")

    def __init__(self, op: str, args: tuple) -> None:
        self.op = op
        self.args = args

    def render(self, size: Callable[[object], str]) -> str:
        """Python source; ``size`` renders a size expression."""
        parts = [a.render(size) if type(a) is FloatExpr else
                 ("(%s)" % size(a) if type(a) is E.Expr else "(%r)" % a) for a in self.args]
        if self.op == "neg":
            return "(-%s)" % parts[0]
        return "(%s %s %s)" % (parts[0], PY[self.op][0], parts[1])

    def evaluate(self, value_of: Callable[[object], int]):
        vals = [a.evaluate(value_of) if type(a) is FloatExpr else
                (value_of(a) if type(a) is E.Expr else a) for a in self.args]
        if self.op == "neg":
            return -vals[0]
        return PY[self.op][1](vals[0], vals[1])

    def map_sizes(self, fn) -> "FloatExpr":
        """The same expression with ``fn`` applied to every size expression."""
        return FloatExpr(self.op, tuple(a.map_sizes(fn) if type(a) is FloatExpr else
                                        (fn(a) if type(a) is E.Expr else a)
                                        for a in self.args))

    def sizes(self) -> list:
        out = []
        for a in self.args:
            if type(a) is FloatExpr:
                out += a.sizes()
            elif type(a) is E.Expr:
                out.append(a)
        return out

    def __repr__(self) -> str:
        return self.render(E.format_expr)


def _parts(x):
    """(tree argument, hint) of a float operand, or None."""
    t = type(x)
    if t is SymFloat:
        return x.fexpr, x.hint, x.env
    part = getattr(t, "float_operand", None)    # a SymInt (symint.py builds on this module)
    if part is not None:
        return part(x)
    if t in (int, float) or (t is not bool and isinstance(x, (int, float))):
        return x, x, None
    try:
        import numpy as np
        if isinstance(x, (np.integer, np.floating)) and not isinstance(x, np.bool_):
            return x.item(), x.item(), None
    except ImportError:  # pragma: no cover
        pass
    return None


def make(op: str, a, b) -> "SymFloat":
    """``a op b`` where at least one side is symbolic; NotImplemented for other operands."""
    pa, pb = _parts(a), _parts(b)
    if pa is None or pb is None:
        return NotImplemented
    env = pa[2] or pb[2]
    hint = None
    if pa[1] is not None and pb[1] is not None:
        try:
            hint = PY[op][1](pa[1], pb[1])
        except (ZeroDivisionError, OverflowError):
            hint = None
    return SymFloat(FloatExpr(op, (pa[0], pb[0])), hint, env)


class SymFloat:
    """A float computed from sizes while tracing (see the module docstring)."""

    __slots__ = ("fexpr", "hint", "env")

    def __init__(self, fexpr: FloatExpr, hint: Optional[float], env) -> None:
        self.fexpr = fexpr
        self.hint = hint
        self.env = env

    def __array_ufunc__(self, ufunc, method, *inputs, **kwargs):
        hook = self.env.ufunc_hook
        if hook is None:
            return NotImplemented
        return hook(ufunc, method, inputs, kwargs)

    def __add__(self, o): return make("add", self, o)
    def __radd__(self, o): return make("add", o, self)
    def __sub__(self, o): return make("sub", self, o)
    def __rsub__(self, o): return make("sub", o, self)
    def __mul__(self, o): return make("mul", self, o)
    def __rmul__(self, o): return make("mul", o, self)
    def __truediv__(self, o): return make("div", self, o)
    def __rtruediv__(self, o): return make("div", o, self)
    def __floordiv__(self, o): return make("floordiv", self, o)
    def __rfloordiv__(self, o): return make("floordiv", o, self)
    def __mod__(self, o): return make("mod", self, o)
    def __rmod__(self, o): return make("mod", o, self)
    def __pow__(self, o): return make("pow", self, o)
    def __rpow__(self, o): return make("pow", o, self)

    def __neg__(self):
        return SymFloat(FloatExpr("neg", (self.fexpr,)), None if self.hint is None
                        else -self.hint, self.env)

    def __pos__(self):
        return self

    # a concrete float (or a decision on one) pins every size it depends on
    def __float__(self) -> float:
        for s in self.fexpr.sizes():
            self.env.specialize(s, "a conversion of a float computed from sizes",
                                advice="keep it in array arithmetic, where it stays symbolic")
        return float(self.fexpr.evaluate(self.env.hint_of))

    def __bool__(self) -> bool:
        return float(self) != 0.0

    def __lt__(self, o): return float(self) < o
    def __le__(self, o): return float(self) <= o
    def __gt__(self, o): return float(self) > o
    def __ge__(self, o): return float(self) >= o
    def __eq__(self, o): return float(self) == o
    def __ne__(self, o): return float(self) != o

    def __hash__(self):
        return hash(float(self))

    # text that only reaches debug output stays symbolic (symshape/sizes/textuse.py)
    def __str__(self) -> str:
        if goes_to_output(1):
            return self.shown()
        return str(float(self))

    def __repr__(self) -> str:
        if goes_to_output(1):
            return self.shown()
        return repr(float(self))

    def __format__(self, spec: str) -> str:
        if goes_to_output(1):
            return self.shown() if not spec else \
                format(self.fexpr.evaluate(self.env.hint_of), spec)
        return format(float(self), spec)

    def __round__(self, n=None):
        if n is None:
            return _to_int(self, "round", "round()")
        return round(float(self), n)

    # math.floor / math.ceil / math.trunc return what these return: a symbolic size
    def __floor__(self):
        return _to_int(self, "floor", "math.floor()")

    def __ceil__(self):
        return _to_int(self, "ceil", "math.ceil()")

    def __trunc__(self):
        return _to_int(self, "trunc", "math.trunc()")

    def to_int(self):
        """``int(self)``: truncation toward zero, as a symbolic size (``int()`` itself must
        return a Python int, so the traced code's ``int`` is routed here)."""
        return _to_int(self, "trunc", "int()")

    def shown(self) -> str:
        """The expression in the user's terms (``x.shape[0]``), for debug output."""
        env = self.env

        def show(a, outer: bool) -> str:
            if type(a) is FloatExpr:
                if a.op == "neg":
                    text = "-" + show(a.args[0], False)
                else:
                    text = "%s %s %s" % (show(a.args[0], False), PY[a.op][0],
                                         show(a.args[1], False))
                return text if outer else "(%s)" % text
            if type(a) is E.Expr:
                text = E.format_expr(env.simplify(a), env.user_label)
                return text if outer or text.replace("_", "").replace(".", "").replace(
                    "[", "").replace("]", "").isalnum() else "(%s)" % text
            return repr(a)
        return show(self.fexpr, True)

    def describe(self) -> str:
        """The expression, for messages (no guard)."""
        label = getattr(self.env, "user_label", None)
        if label is None:
            return self.fexpr.render(E.format_expr)
        return self.fexpr.render(lambda e: E.format_expr(self.env.simplify(e), label))


# symshape.sizes.floatint (which builds on SymInt, itself built on this module) installs the
# conversion here when the package is imported
TO_INT: list = []


def _to_int(f: SymFloat, mode: str, what: str):
    return TO_INT[0](f, mode, what)
