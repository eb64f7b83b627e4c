"""Elementwise ops: NumPy's ufunc loops as ONNX nodes, exactly.

Every elementwise node computes in NumPy's *loop dtype* (the node's dtype, or for
comparisons and predicates the operands' promoted dtype): each operand is cast to it
first (Python scalars are weak, NEP 50, so ``x16 * 0.1`` rounds 0.1 to float16 as NumPy
does).  Where onnxruntime has no kernel for that dtype the op computes in the wider dtype
``dtypes.WIDER`` names and casts back, which is exact (see there); where no exact way
exists the op is refused.

``RULES`` is the table: per core op, the ONNX op or the composite that computes it
(``arith`` holds the ones with NumPy's own edge cases: floor division, remainder, shifts,
``maximum`` with NaN, ...), the dtype kinds NumPy defines it for, and the dtypes
onnxruntime runs it in.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, Dict, FrozenSet, Optional, Sequence

import numpy as np

from symshape.capture.ir import Node
from symshape.algebra.expr import Expr, Sym

from . import arith
from .context import Ctx, Refusal, refuse_dtype
from .dtypes import BOOL, compute_dtype

# float16 always computes in float32 and rounds back, as NumPy's own float16 loops do
F = frozenset(("float32", "float64"))
F32 = frozenset(("float32",))          # onnxruntime's CPU lacks these float64 kernels
INTS = frozenset(("int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64"))
NUM = INTS | F
ALL = NUM | {"bool"}
SIGNED = frozenset(("int8", "int16", "int32", "int64")) | F
MINMAX = frozenset(("int8", "int32", "int64", "uint8", "uint32", "uint64")) | F
I3264 = frozenset(("int32", "int64")) | F

Build = Callable[[Ctx, Sequence[str], np.dtype], str]


@dataclass(frozen=True)
class Ew:
    """How one elementwise op computes: ``onnx`` (one ONNX op, with ``attrs``) or
    ``build`` (a composite); ``kinds``: the dtype kinds NumPy defines it for (``b`` bool,
    ``i`` / ``u`` integers, ``f`` float); ``native``: the dtypes onnxruntime runs it in;
    ``loop``: ``"out"`` (computes in the node's dtype), ``"in"`` (the operands' promoted
    dtype: comparisons, predicates) or ``"bool"`` (logical ops); ``note``: what the docs
    say about it."""

    onnx: Optional[str] = None
    build: Optional[Build] = None
    kinds: str = "biuf"
    native: FrozenSet[str] = NUM
    loop: str = "out"
    attrs: tuple = ()
    note: str = ""


def _one(op: str, **attrs) -> Build:
    return lambda cx, a, dt: cx.w.op(op, list(a), op.lower(), **attrs)


def _identity(cx: Ctx, a, dt) -> str:
    return cx.w.op("Identity", [a[0]], "same")


def _square(cx: Ctx, a, dt) -> str:
    return cx.w.op("Mul", [a[0], a[0]], "square")


def _trunc(cx: Ctx, a, dt) -> str:
    x = a[0]
    neg = cx.w.op("Less", [x, cx.w.const(0, dt)])
    return cx.w.op("Where", [neg, cx.w.op("Ceil", [x]), cx.w.op("Floor", [x])], "trunc")


def _rounding(op: Optional[str]) -> Build:
    """Floor / Ceil / Round (None: trunc) of floats; integers are their own value."""
    def build(cx: Ctx, a, dt) -> str:
        if dt.kind != "f":
            return _identity(cx, a, dt)
        return _trunc(cx, a, dt) if op is None else cx.w.op(op, [a[0]], op.lower())
    return build


def _negative(cx: Ctx, a, dt) -> str:
    if dt.kind == "u":
        return cx.w.op("Sub", [cx.w.const(np.zeros((), dt)), a[0]], "negative")
    return cx.w.op("Neg", [a[0]], "negative")


def _logical(op: str) -> Build:
    return lambda cx, a, dt: cx.w.op(op, list(a), op.lower())


#: core op -> its rule (the coverage table of the docs is generated from it)
RULES: Dict[str, Ew] = {
    "add": Ew(build=arith.add, native=NUM | {"bool"}),
    "subtract": Ew("Sub", kinds="iuf"),
    "multiply": Ew(build=arith.multiply, native=NUM | {"bool"}),
    "divide": Ew("Div", kinds="f", native=F),
    "floor_divide": Ew(build=arith.floor_divide, kinds="iuf", native=NUM,
                       note="Python's floor: a correction of ONNX's truncating Div; "
                            "x // 0 is 0 for integers as in NumPy"),
    "remainder": Ew(build=arith.remainder, kinds="iuf", native=NUM,
                    note="the sign of the divisor, as Python and NumPy"),
    "pow": Ew(build=arith.power, kinds="iuf", native=NUM,
              note="integers: small constant exponents as products; floats: Pow"),
    "negative": Ew(build=_negative, kinds="iuf", native=NUM,
                   note="unsigned integers wrap (0 - x), as NumPy"),
    "positive": Ew(build=_identity, kinds="iuf", native=ALL),
    "conj": Ew(build=_identity, kinds="biuf", native=ALL),
    "abs": Ew("Abs", kinds="biuf", native=NUM),
    "sign": Ew(build=arith.sign, kinds="iuf", native=NUM),
    "square": Ew(build=_square, kinds="biuf", native=NUM | {"bool"}),
    "sqrt": Ew("Sqrt", kinds="f", native=F),
    "reciprocal": Ew("Reciprocal", kinds="f", native=F),
    "exp": Ew("Exp", kinds="f", native=F),
    "expm1": Ew(build=arith.expm1, kinds="f", native=F,
                note="exp(x) - 1 corrected as (u - 1)*x/log(u) (Kahan): a few ulps"),
    "log": Ew("Log", kinds="f", native=F),
    "log1p": Ew(build=arith.log1p, kinds="f", native=F,
                note="log(1 + x) corrected as log(u)*x/(u - 1) (Kahan): a few ulps"),
    "log2": Ew(build=arith.log_base(2.0), kinds="f", native=F, note="log(x) / log(2)"),
    "log10": Ew(build=arith.log_base(10.0), kinds="f", native=F, note="log(x) / log(10)"),
    "sin": Ew("Sin", kinds="f", native=F),
    "cos": Ew("Cos", kinds="f", native=F),
    "tan": Ew("Tan", kinds="f", native=F32,
              note="float64 refused: sin/cos loses many ulps near the poles"),
    "asin": Ew("Asin", kinds="f", native=F32),
    "acos": Ew("Acos", kinds="f", native=F32),
    "atan": Ew("Atan", kinds="f", native=F32),
    "sinh": Ew(build=arith.native_f32("Sinh", arith.sinh64), kinds="f", native=F,
              note="float64: a composite of float64 ops (a few ulps)"),
    "cosh": Ew(build=arith.native_f32("Cosh", arith.cosh64), kinds="f", native=F,
              note="float64: a composite of float64 ops (a few ulps)"),
    "tanh": Ew("Tanh", kinds="f", native=F),
    "asinh": Ew(build=arith.native_f32("Asinh", arith.asinh64), kinds="f", native=F,
              note="float64: a composite of float64 ops (a few ulps)"),
    "acosh": Ew(build=arith.native_f32("Acosh", arith.acosh64), kinds="f", native=F,
              note="float64: a composite of float64 ops (a few ulps)"),
    "atanh": Ew(build=arith.native_f32("Atanh", arith.atanh64), kinds="f", native=F,
              note="float64: a composite of float64 ops (a few ulps)"),
    "atan2": Ew(build=arith.atan2, kinds="f", native=F32,
                note="atan(y/x) with the quadrant and signed zeros of atan2"),
    "hypot": Ew(build=arith.hypot, kinds="f", native=F,
                note="m*sqrt((x/m)**2 + (y/m)**2), m = max(|x|, |y|): no overflow"),
    "logaddexp": Ew(build=arith.logaddexp, kinds="f", native=F),
    "copysign": Ew(build=arith.copysign, kinds="f", native=F,
                   note="the sign of a negative NaN is not seen (ONNX has no bit cast)"),
    "floor": Ew(build=_rounding("Floor"), kinds="biuf", native=ALL),
    "ceil": Ew(build=_rounding("Ceil"), kinds="biuf", native=ALL),
    "trunc": Ew(build=_rounding(None), kinds="biuf", native=ALL),
    "round": Ew(build=_rounding("Round"), kinds="biuf", native=ALL,
                note="half to even, as NumPy"),
    "maximum": Ew(build=arith.maximum, kinds="biuf", native=MINMAX | {"bool"},
                  note="NaN propagates, as NumPy"),
    "minimum": Ew(build=arith.minimum, kinds="biuf", native=MINMAX | {"bool"},
                  note="NaN propagates, as NumPy"),
    "equal": Ew("Equal", loop="in", native=ALL),
    "not_equal": Ew(build=arith.not_equal, loop="in", native=ALL),
    "less": Ew("Less", loop="in", kinds="biuf", native=NUM),
    "less_equal": Ew("LessOrEqual", loop="in", kinds="biuf", native=NUM),
    "greater": Ew("Greater", loop="in", kinds="biuf", native=NUM),
    "greater_equal": Ew("GreaterOrEqual", loop="in", kinds="biuf", native=NUM),
    "logical_and": Ew(build=_logical("And"), loop="bool", native=frozenset({"bool"})),
    "logical_or": Ew(build=_logical("Or"), loop="bool", native=frozenset({"bool"})),
    "logical_xor": Ew(build=_logical("Xor"), loop="bool", native=frozenset({"bool"})),
    "logical_not": Ew(build=_logical("Not"), loop="bool", native=frozenset({"bool"})),
    "bitwise_and": Ew(build=arith.bitwise("And"), kinds="biu", native=INTS | {"bool"}),
    "bitwise_or": Ew(build=arith.bitwise("Or"), kinds="biu", native=INTS | {"bool"}),
    "bitwise_xor": Ew(build=arith.bitwise("Xor"), kinds="biu", native=INTS | {"bool"}),
    "bitwise_invert": Ew(build=arith.invert, kinds="biu", native=INTS | {"bool"}),
    "bitwise_left_shift": Ew(build=arith.shift_left, kinds="iu", native=INTS,
                             note="shifts by the bit width or more give 0, as NumPy"),
    "bitwise_right_shift": Ew(build=arith.shift_right, kinds="iu", native=INTS,
                              note="arithmetic for signed integers, as NumPy"),
    "isnan": Ew(build=arith.isnan, loop="in", native=ALL),
    "isinf": Ew(build=arith.isinf, loop="in", native=ALL - {"float16"}),
    "isfinite": Ew(build=arith.isfinite, loop="in", native=ALL - {"float16"}),
    "signbit": Ew(build=arith.signbit, loop="in", kinds="iuf", native=NUM,
                  note="the sign of a negative NaN is not seen (ONNX has no bit cast)"),
    "where": Ew(build=None, native=ALL),
    "astype": Ew(build=None, native=ALL),
    "nextafter": Ew(kinds="", note="refused: ONNX has no bit cast to step one ulp"),
}


def weak(x):
    """``x`` for ``np.result_type``: a node's dtype, a NumPy scalar's own dtype, a Python
    scalar (or a size) as the weak Python scalar it is."""
    if type(x) is Node:
        return x.dtype
    if type(x) in (Expr, Sym):
        return 0
    return x


def loop_dtype(rule: Ew, node: Node) -> np.dtype:
    """The dtype NumPy's loop computes ``node`` in (see ``Ew.loop``)."""
    if rule.loop == "bool":
        return BOOL
    if rule.loop == "in":
        return np.result_type(*[weak(x) for x in node.inputs])
    return node.dtype


def convert_ew(cx: Ctx, node: Node) -> str:
    """An elementwise core node through its rule."""
    rule = RULES[node.op]
    if node.op == "where":
        return _where(cx, node)
    if node.op == "astype":
        return cx.out(cx.operand(node.inputs[0], node.dtype))
    dt = loop_dtype(rule, node)
    if dt.kind not in rule.kinds or (rule.onnx is None and rule.build is None):
        raise refuse_dtype(node.op, dt) if rule.kinds else Refusal(rule.note)
    comp = compute_dtype(dt, rule.native)
    if comp is None:
        raise refuse_dtype(node.op, dt)
    args = [cx.operand(x, dt) for x in node.inputs]
    if comp != dt:
        args = [cx.cast(a, comp) for a in args]
    if rule.build is not None:
        res = rule.build(cx, args, comp)
    else:
        res = cx.w.op(rule.onnx, args, node.op, **dict(rule.attrs))
    res_dt = BOOL if rule.loop != "out" else comp
    if res_dt != node.dtype:
        res = cx.cast(res, node.dtype)
    return cx.out(res)


def _where(cx: Ctx, node: Node) -> str:
    c, a, b = node.inputs
    dt = node.dtype
    return cx.out(cx.where(cx.operand(c, BOOL), cx.operand(a, dt), cx.operand(b, dt), dt))
