"""Ops as numba (Python) expressions: casts, literals, elementwise ufuncs, reductions.

Each translation follows NumPy's loop selection as the CUDA backend's does
(``ufunc.resolve_dtypes``: the dtype each operand is cast to and the dtype computed;
Python scalars stay weak, NEP 50), and every result is cast to its loop's dtype, so
integers wrap where NumPy's do and float32 stays float32.  An op missing here (float16,
complex, integer floor division and remainder, shifts, float -> integer casts, ...) returns
``None``: the node then runs as NumPy's call between kernels, as eager code runs it.

Accuracy (see the package docstring): IEEE ``+ - * /`` and ``sqrt`` round as NumPy's do;
math functions call the C library's (NumPy's SIMD ``exp`` / ``tanh`` / ... may differ by
an ulp or two); ``x ** k`` for a literal k in -1..4 becomes multiplies (``x * x * x``).
"""
from __future__ import annotations

from typing import Dict, List, Optional, Sequence

import numpy as np

from symshape.capture.ops.traits import REDUCE, traits_of
from symshape.algebra.expr import Expr

from ..loopnest.classify import Operand
from ..loopnest.plan import norm_axes

#: dtypes a kernel computes in (float16 and complex stay with NumPy)
DTYPES = frozenset(["bool", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32",
                    "uint64", "float32", "float64"])


def supported_dtype(dt) -> bool:
    """Can a kernel hold values of dtype ``dt`` (float16 and complex stay NumPy's)?"""
    if dt is None or isinstance(dt, type):
        return False
    try:
        return np.dtype(dt).name in DTYPES
    except TypeError:
        return False


def npname(dt) -> str:
    """The numba spelling of dtype ``dt`` (``np.float32``, ``np.bool_``)."""
    return "np." + np.dtype(dt).name if np.dtype(dt).name != "bool" else "np.bool_"


def literal(v, dt) -> str:
    """Source for the scalar ``v`` as dtype ``dt``."""
    dt = np.dtype(dt)
    if dt.kind == "b":
        return "True" if v else "False"
    if dt.kind == "f":
        f = float(v)
        text = repr(f) if f == f and abs(f) != float("inf") else \
            ("np.nan" if f != f else ("np.inf" if f > 0 else "-np.inf"))
        return "%s(%s)" % (npname(dt), text)
    return "%s(%d)" % (npname(dt), int(v))


def cast(op: Operand, dt) -> Optional[str]:
    """``op`` converted to dtype ``dt`` as NumPy converts (None: not expressible)."""
    dt = np.dtype(dt)
    if op.value is not None and not isinstance(op.value, Expr):
        return literal(op.value, dt)
    src = None if isinstance(op.dtype, type) or op.dtype is None else np.dtype(op.dtype)
    if src is not None and src == dt:
        return op.text
    return convert(op.text, src, dt)


def convert(text: str, src, dt) -> Optional[str]:
    """``text`` (of dtype ``src``) cast to ``dt`` as NumPy's ``astype`` does; None where
    a kernel cannot match it."""
    dt = np.dtype(dt)
    if dt.kind == "b":
        return "(%s != 0)" % text
    if src is not None and np.dtype(src).kind == "f" and dt.kind in "iu":
        return None          # NaN / out of range: NumPy's result is platform-defined
    return "%s(%s)" % (npname(dt), text)


# elementwise formulas per loop kind ('b' bool, 'i' integer, 'f' float) over the cast
# operands {0}, {1}; results are cast to the loop's dtype afterwards
_ARITH = {
    "add": {"b": "({0} | {1})", "i": "({0} + {1})", "f": "({0} + {1})"},
    "subtract": {"i": "({0} - {1})", "f": "({0} - {1})"},
    "multiply": {"b": "({0} & {1})", "i": "({0} * {1})", "f": "({0} * {1})"},
    "divide": {"f": "({0} / {1})"},
    "true_divide": {"f": "({0} / {1})"},
    "negative": {"i": "(-{0})", "f": "(-{0})"},
    "positive": {"i": "{0}", "f": "{0}"},
    "square": {"i": "({0} * {0})", "f": "({0} * {0})"},
    "reciprocal": {"f": "({1} / {0})"},          # {1}: one of the loop dtype
    "absolute": {"i": "abs({0})", "f": "abs({0})"},
    "fabs": {"f": "abs({0})"},
    "maximum": {"b": "({0} | {1})", "i": "max({0}, {1})", "f": "_fmax({0}, {1})"},
    "minimum": {"b": "({0} & {1})", "i": "min({0}, {1})", "f": "_fmin({0}, {1})"},
    "less": {"b": "({0} < {1})", "i": "({0} < {1})", "f": "({0} < {1})"},
    "less_equal": {"b": "({0} <= {1})", "i": "({0} <= {1})", "f": "({0} <= {1})"},
    "greater": {"b": "({0} > {1})", "i": "({0} > {1})", "f": "({0} > {1})"},
    "greater_equal": {"b": "({0} >= {1})", "i": "({0} >= {1})", "f": "({0} >= {1})"},
    "equal": {"b": "({0} == {1})", "i": "({0} == {1})", "f": "({0} == {1})"},
    "not_equal": {"b": "({0} != {1})", "i": "({0} != {1})", "f": "({0} != {1})"},
    "logical_and": {"b": "({0} & {1})"},
    "logical_or": {"b": "({0} | {1})"},
    "logical_xor": {"b": "({0} != {1})"},
    "logical_not": {"b": "(not {0})"},
    "bitwise_and": {"b": "({0} & {1})", "i": "({0} & {1})"},
    "bitwise_or": {"b": "({0} | {1})", "i": "({0} | {1})"},
    "bitwise_xor": {"b": "({0} != {1})", "i": "({0} ^ {1})"},
    "invert": {"b": "(not {0})", "i": "(~{0})"},
    "isnan": {"f": "np.isnan({0})"},
    "isinf": {"f": "np.isinf({0})"},
    "isfinite": {"f": "np.isfinite({0})"},
}
#: math functions: numba's np.<name> on a scalar (the C library's function for its type)
_MATH = ("exp", "exp2", "expm1", "log", "log2", "log10", "log1p", "sqrt", "cbrt", "sin",
         "cos", "tan", "arcsin", "arccos", "arctan", "sinh", "cosh", "tanh", "arcsinh",
         "arccosh", "arctanh", "floor", "ceil", "trunc", "rint", "arctan2", "hypot")
FORMULAS: Dict[str, Dict[str, str]] = dict(_ARITH)
for _m in _MATH:
    FORMULAS[_m] = {"f": "np.%s(%s)" % (_m, ", ".join("{%d}" % i for i in range(
        2 if _m in ("arctan2", "hypot") else 1)))}

#: float32 math written in arithmetic (``vmath.py``): vectorized where libm's is scalar
VMATH = {"exp": "_exp32({0})", "tanh": "_tanh32({0})"}

#: x ** k for literal k: multiplies (the accuracy contract's "small integer powers")
_POWERS = {0: "{one}", 1: "{0}", 2: "({0} * {0})", 3: "({0} * {0} * {0})",
           4: "(({0} * {0}) * ({0} * {0}))", -1: "({one} / {0})"}


def _kind(dt) -> str:
    k = np.dtype(dt).kind
    return "i" if k in "iu" else k


def ufunc_expr(op: str, ops: Sequence[Operand], out_dt, attrs: Dict) -> Optional[str]:
    """Text of ufunc ``op`` on ``ops`` producing ``out_dt``, or None if unsupported."""
    loop = _loop(op, ops, out_dt, attrs)
    if loop is None:
        return None
    u, ins, res = loop
    args: List[Optional[str]] = [cast(o, d) for o, d in zip(ops, ins)]
    if any(a is None for a in args):
        return None
    kind = _kind(ins[0])
    name = u.__name__
    if name == "power":
        body = _power(ops[1].value, args, kind, ins[0], res)
    elif kind == "i" and name in ("isnan", "isinf", "isfinite") and \
            FORMULAS.get(name, {}).get(kind) is None:
        return "True" if name == "isfinite" else "False"
    else:
        body = _formula(name, kind, args, ins[0])
    if body is None:
        return None
    if res.kind != "b":
        body = "%s(%s)" % (npname(res), body)
    if res != np.dtype(out_dt):
        body = convert(body, res, out_dt)
    return body


def _loop(op: str, ops: Sequence[Operand], out_dt, attrs: Dict):
    """NumPy's loop for ufunc ``op`` on ``ops``: (ufunc, operand dtypes, result dtype),
    or None when a kernel cannot run it (a dtype it does not hold, several outputs)."""
    t = traits_of(op)
    u = None if t is None else t.ufunc
    if u is None or len(ops) != u.nin or u.nout != 1 or set(attrs) - {"dtype"}:
        return None
    if not supported_dtype(out_dt):
        return None
    try:
        loop = u.resolve_dtypes(tuple(o.dtype for o in ops) + (attrs.get("dtype"),))
    except Exception:       # no loop for these dtypes: NumPy's call raises, as eager
        return None
    if not all(supported_dtype(d) for d in loop):
        return None
    return u, loop[:-1], np.dtype(loop[-1])


def _power(p, args: List[Optional[str]], kind: str, base_dt, res) -> Optional[str]:
    """``x ** p``: multiplies for a small integer literal p, else ``**`` for floats."""
    if type(p) in (int, float) and p == int(p) and int(p) in _POWERS and \
            not isinstance(p, bool) and (kind == "f" or 0 <= p):
        if kind == "i" and p == 0:
            return literal(1, res)
        return _POWERS[int(p)].format(args[0], one=literal(1, base_dt))
    if kind == "f":
        return "(%s ** %s)" % (args[0], args[1])
    return None


def _formula(name: str, kind: str, args: List[Optional[str]], in_dt) -> Optional[str]:
    """The formula of ufunc ``name`` for its loop kind (float32 exp / tanh: vmath's)."""
    form = FORMULAS.get(name, {}).get(kind)
    if name in VMATH and np.dtype(in_dt) == np.float32:
        form = VMATH[name]
    if form is None:
        return None
    extra = [literal(1, in_dt)] if name == "reciprocal" else []
    return form.format(*(args + extra))


def where_expr(ops: Sequence[Operand], out_dt) -> Optional[str]:
    """``np.where(c, a, b)`` as a conditional expression."""
    c, a, b = cast(ops[0], np.bool_), cast(ops[1], out_dt), cast(ops[2], out_dt)
    if None in (c, a, b):
        return None
    return "(%s if %s else %s)" % (a, c, b)


def clip_expr(ops: Sequence[Optional[Operand]], out_dt) -> Optional[str]:
    """NumPy's clip: minimum(maximum(a, lo), hi), NaN-propagating for floats."""
    kind = _kind(out_dt)
    if kind == "b":
        return None
    x = cast(ops[0], out_dt)
    if x is None:
        return None
    mx, mn = ("_fmax", "_fmin") if kind == "f" else ("max", "min")
    for o, fn in ((ops[1] if len(ops) > 1 else None, mx), (ops[2] if len(ops) > 2 else None,
                                                            mn)):
        if o is None:
            continue
        b = cast(o, out_dt)
        if b is None:
            return None
        x = "%s(%s, %s)" % (fn, x, b)
    return x


def pointwise_expr(op: str, ops: Sequence[Optional[Operand]], out_dt, attrs: Dict
                   ) -> Optional[str]:
    """Text of elementwise node ``op`` (ufunc, where, clip, astype, copy), or None."""
    if not supported_dtype(out_dt):
        return None
    if any(o is not None and not isinstance(o.dtype, type) and not supported_dtype(o.dtype)
           for o in ops):
        return None
    if op == "where" and len(ops) == 3 and set(attrs) <= set():
        return where_expr(ops, out_dt)
    if op == "clip" and 1 <= len(ops) <= 3 and not attrs:
        return clip_expr(ops, out_dt)
    if op == "astype" and len(ops) == 1 and ops[0] is not None:
        return cast(ops[0], out_dt)
    if op == "copy" and len(ops) == 1 and ops[0] is not None:
        return cast(ops[0], out_dt)
    if any(o is None for o in ops):
        return None
    return ufunc_expr(op, ops, out_dt, attrs)


# --------------------------------------------------------------------------- reductions
class Reduction:
    """How a reduction accumulates: accumulator dtype, identity, combine, finish.  Sums
    accumulate in their result dtype (float32 in float32, as NumPy's add.reduce); only
    the order differs (NumPy: pairwise blocks; here: a vector of running sums per row)."""

    SUPPORTED = ("sum", "mean", "max", "min", "any", "all", "prod")

    def __init__(self, op: str, in_dt, out_dt) -> None:
        self.op = op
        r = REDUCE[op]
        self.out_dt = np.dtype(out_dt)
        self.in_dt = np.dtype(in_dt)
        self.acc = np.dtype(bool) if r.acc == "bool" else self.out_dt
        self.identity_value = r.identity

    def identity(self) -> str:
        """The accumulator's starting value."""
        i = self.identity_value
        if type(i) is str:
            if self.acc.kind == "f":
                return literal(float("-inf") if i == "lowest" else float("inf"), self.acc)
            info = np.iinfo(self.acc) if self.acc.kind in "iu" else None
            if info is None:
                return "False" if i == "lowest" else "True"
            return literal(info.min if i == "lowest" else info.max, self.acc)
        return literal(i, self.acc)

    def load(self, op: Operand) -> Optional[str]:
        """An element as the accumulator's dtype."""
        return cast(op, self.acc)

    def combine(self, acc: str, v: str) -> str:
        """The accumulator after adding element ``v``."""
        k = _kind(self.acc)
        if self.op in ("sum", "mean"):
            return "(%s | %s)" % (acc, v) if k == "b" else "%s(%s + %s)" % (
                npname(self.acc), acc, v)
        if self.op == "prod":
            return "(%s & %s)" % (acc, v) if k == "b" else "%s(%s * %s)" % (
                npname(self.acc), acc, v)
        if self.op in ("max", "min"):
            fn = {("max", "f"): "_fmax", ("min", "f"): "_fmin"}.get((self.op, k), self.op)
            if k == "b":
                return "(%s | %s)" % (acc, v) if self.op == "max" else "(%s & %s)" % (acc, v)
            return "%s(%s, %s)" % (fn, acc, v)
        if self.op == "any":
            return "(%s | %s)" % (acc, v)
        return "(%s & %s)" % (acc, v)

    def finish(self, acc: str, count: str) -> str:
        """The result from the accumulator (a mean divides by ``count``)."""
        if self.op == "mean":
            if self.acc.kind == "f":
                return "%s(%s / %s(%s))" % (npname(self.out_dt), acc, npname(self.acc), count)
            return "%s(np.float64(%s) / np.float64(%s))" % (npname(self.out_dt), acc, count)
        return acc


def reduction_supported(node) -> bool:
    """Whether reduction ``node`` can be a phase of a kernel here."""
    if node.op not in Reduction.SUPPORTED or set(node.attrs) - {"axis", "keepdims", "dtype"}:
        return False
    if node.attrs.get("dtype") is not None:
        return False
    src = node.inputs[0] if node.inputs else None
    if src is None or not hasattr(src, "dtype") or not supported_dtype(src.dtype):
        return False
    if not supported_dtype(node.dtype):
        return False
    # a float product's error grows with its order far faster than a sum's: NumPy keeps it
    if node.op == "prod" and np.dtype(node.dtype).kind == "f":
        return False
    # NumPy's mean of integers accumulates in float64 (the result dtype): same here
    return along_rows(node)


def along_rows(node) -> bool:
    """Does reduction ``node`` run along its input's innermost axes (every axis it keeps
    lies before the last one it reduces, or has size 1)?  A kernel walks one reduced row
    per iteration of its outer loop; a column reduction (``x.mean(axis=0)`` of a batch
    norm) would walk each column with a stride of a whole row, 5-6x slower than NumPy's
    own reduction, which adds whole rows at a time: NumPy keeps those."""
    shape = getattr(node.inputs[0], "shape", None)
    axes = norm_axes(node) if shape else ()
    if not axes:
        return True
    return all(type(shape[a]) is int and shape[a] == 1 for a in range(axes[-1] + 1, len(shape)))


#: helpers every kernel module defines (NaN-propagating, as np.maximum / np.minimum)
HELPERS = '''
from symshape.codegen.numba_backend.vmath import exp32 as _exp32, tanh32 as _tanh32
from symshape.codegen.numba_backend.vmath import _rsum, _rmax, _rmin

@njit(inline="always")
def _fmax(a, b):
    return a if (a >= b or a != a) else b


@njit(inline="always")
def _fmin(a, b):
    return a if (a <= b or a != a) else b
'''
