"""Ops as CUDA C expressions: dtypes, literals, elementwise ufuncs, reductions.

Every translation follows NumPy's own loop selection: ``ufunc.resolve_dtypes`` names the
loop (the dtype each operand is cast to and the dtype computed), Python scalars stay weak
(NEP 50), and the result is cast to the node's dtype.  The C text per op and loop kind, and
each reduction's identity and combine, are entries of the op traits table
(``capture/ops/traits.py``: ``CTemplate``, ``ReduceTraits``); this module fills them in.
A translation returns ``None`` when it cannot match NumPy (float16, complex, object, an
unknown ufunc): the node then runs as the CuPy call instead of inside a kernel.

Helpers (NaN-propagating maximum, Python-style floor division, ...) are C++ templates
emitted once per kernel source under an include guard, so kernel sources can also be
concatenated (the nvcc tests compile many kernels as one translation unit).
"""
from __future__ import annotations

from typing import Dict, Optional, Sequence

import numpy as np

from symshape.capture.ir import Node
from symshape.capture.ops.traits import KERNEL_REDUCTIONS, REDUCE, CTemplate, traits_of
from symshape.algebra.expr import Expr

from ..loopnest.classify import Operand

CTYPES: Dict[str, str] = {
    "bool": "bool", "int8": "signed char", "int16": "short", "int32": "int",
    "int64": "long long", "uint8": "unsigned char", "uint16": "unsigned short",
    "uint32": "unsigned int", "uint64": "unsigned long long", "float32": "float",
    "float64": "double",
    # float16 values live in float registers, rounded to half precision after every op
    # (as NumPy's half loops compute: in float, rounded per op); memory holds the bits
    "float16": "float",
}
#: the C type of an array element in memory (differs from the value's type for float16)
STORAGE: Dict[str, str] = dict(CTYPES, float16="unsigned short")


def load_expr(text: str, dt) -> str:
    """A value of dtype ``dt`` from its in-memory element ``text``."""
    return "ss_h2f(%s)" % text if np.dtype(dt).name == "float16" else text


def store_expr(text: str, dt) -> str:
    """The in-memory element of the value ``text`` of dtype ``dt``."""
    return "ss_f2h(%s)" % text if np.dtype(dt).name == "float16" else text


def ctype(dt) -> Optional[str]:
    if dt is None or dt is int or dt is float or dt is bool:
        return None
    try:
        return CTYPES.get(np.dtype(dt).name)
    except TypeError:
        return None


def literal(v, dt) -> str:
    """C source for the Python / NumPy scalar ``v`` converted to dtype ``dt``."""
    dt = np.dtype(dt)
    ct = CTYPES[dt.name]
    if dt.kind == "b":
        return "true" if bool(v) else "false"
    if dt.kind == "f":
        f = float(v) if dt.itemsize > 2 else float(np.float16(v))
        if f != f or f in (float("inf"), float("-inf")):
            return _special(f, ct)
        text = repr(f)
        if "e" not in text and "." not in text:
            text += ".0"
        if ct == "float":
            # NumPy rounds the Python float (a double) to float32; a decimal float literal
            # would round the decimal directly, which differs in rare halfway cases
            text = text + "f" if float(np.float32(f)) == f else "(float)" + text
        return text if f >= 0 else "(%s)" % text
    iv = int(v)
    if dt.kind == "u":
        return "%dU" % iv if ct == "unsigned int" else "((%s)%dULL)" % (ct, iv)
    if iv == -2 ** 63:
        return "(-9223372036854775807LL - 1)"
    if ct == "int" and iv != -2 ** 31:
        return str(iv) if iv >= 0 else "(%d)" % iv
    if ct == "long long":
        return "%dLL" % iv if iv >= 0 else "(%dLL)" % iv
    return "((%s)%d)" % (ct, iv)


# NVRTC (what CuPy compiles with) includes no headers: no INFINITY / NAN macros, so the
# special values are written as bit patterns through CUDA's reinterpreting intrinsics
_BITS = {("float", "inf"): "__int_as_float(0x7f800000)",
         ("float", "-inf"): "__int_as_float((int)0xff800000u)",
         ("float", "nan"): "__int_as_float(0x7fc00000)",
         ("double", "inf"): "__longlong_as_double(0x7ff0000000000000LL)",
         ("double", "-inf"): "__longlong_as_double((long long)0xfff0000000000000ULL)",
         ("double", "nan"): "__longlong_as_double(0x7ff8000000000000LL)"}


def _special(f: float, ct: str) -> str:
    return _BITS[(ct, "nan" if f != f else ("inf" if f > 0 else "-inf"))]


def _extreme(dt, top: bool) -> str:
    """The identity of max (lowest value) or min (highest value) as a C literal."""
    dt = np.dtype(dt)
    if dt.kind == "f":
        return literal(float("inf") if top else float("-inf"), dt)
    if dt.kind == "b":
        return "true" if top else "false"
    info = np.iinfo(dt)
    return literal(info.max if top else info.min, dt)


def lowest(dt) -> str:
    return _extreme(dt, False)


def highest(dt) -> str:
    return _extreme(dt, True)


# --------------------------------------------------------------------------- helpers
HELPERS: Dict[str, str] = {
    # NumPy's maximum / minimum propagate NaN from either side
    "maximum": "template <typename T> __device__ __forceinline__ T ss_maximum(T a, T b) "
               "{ return (a > b || a != a) ? a : b; }",
    "minimum": "template <typename T> __device__ __forceinline__ T ss_minimum(T a, T b) "
               "{ return (a < b || a != a) ? a : b; }",
    # Python / NumPy floor division and remainder on integers (x // 0 == 0, as NumPy;
    # INT_MIN // -1 wraps to INT_MIN and INT_MIN % -1 is 0, as NumPy, instead of trapping)
    "ifloordiv": "template <typename T> __device__ __forceinline__ T ss_ifloordiv(T a, T b) "
                 "{ if (b == 0) return 0; if (b < (T)0 && b == (T)-1) return (T)(0 - a); "
                 "T q = a / b; "
                 "if ((a % b != 0) && ((a < 0) != (b < 0))) q -= 1; return q; }",
    "iremainder": "template <typename T> __device__ __forceinline__ T ss_iremainder(T a, T b) "
                  "{ if (b == 0) return 0; if (b < (T)0 && b == (T)-1) return 0; T r = a % b; "
                  "if (r != 0 && ((r < 0) != (b < 0))) r += b; return r; }",
    # npy_divmod for floats
    "ffloordiv": "template <typename T> __device__ __forceinline__ T ss_ffloordiv(T a, T b) {\n"
                 "  if (b == 0) return a / b;\n"
                 "  T mod = fmod(a, b); T div = (a - mod) / b;\n"
                 "  if (mod != 0) { if ((b < 0) != (mod < 0)) { div -= (T)1; } }\n"
                 "  T fl;\n"
                 "  if (div != 0) { fl = floor(div); if (div - fl > (T)0.5) fl += (T)1; }\n"
                 "  else { fl = copysign((T)0, a / b); }\n"
                 "  return fl;\n}",
    "fremainder": "template <typename T> __device__ __forceinline__ T ss_fremainder(T a, T b) {\n"
                  "  if (b == 0) return fmod(a, b);\n"
                  "  T mod = fmod(a, b);\n"
                  "  if (mod != 0) { if ((b < 0) != (mod < 0)) mod += b; }\n"
                  "  else { mod = copysign((T)0, b); }\n"
                  "  return mod;\n}",
    # NumPy raises ValueError for a negative exponent; a kernel cannot, so it gives the
    # power truncated toward zero (1 for a == 1, +-1 for a == -1, else 0) -- README
    "ipow": "template <typename T> __device__ __forceinline__ T ss_ipow(T a, T b) {\n"
            "  T r = 1;\n"
            "  if (b < 0) return (a == 1) ? (T)1 : (a == (T)-1) ? ((b & 1) ? a : (T)1) : (T)0;\n"
            "  while (b) { if (b & 1) r *= a; a *= a; b >>= 1; } return r;\n}",
    # NumPy's shifts: a shift count outside [0, bits) gives 0 (left) or the sign (right);
    # C leaves it undefined (x86 masks the count, PTX clamps it), so it is spelled out
    "lshift": "template <typename T, typename S> __device__ __forceinline__ T ss_lshift(T a, S b) "
              "{ return ((unsigned long long)b < sizeof(T) * 8) ? "
              "(T)((unsigned long long)a << b) : (T)0; }",
    "rshift": "template <typename T, typename S> __device__ __forceinline__ T ss_rshift(T a, S b) "
              "{ return ((unsigned long long)b < sizeof(T) * 8) ? (T)(a >> b) : "
              "(a < (T)0 ? (T)-1 : (T)0); }",
    # float -> integer conversions as NumPy gives them on x86-64 (cvttss2si): NaN and
    # out-of-range values become the lowest value of int32 / int64 (CUDA saturates and
    # maps NaN to 0); 8/16-bit targets go through int32, unsigned ones wrap negatives
    "f2i": "template <typename F> __device__ __forceinline__ int ss_f2i32(F x) "
           "{ return (x >= (F)-2147483648.0 && x < (F)2147483648.0) ? (int)x : "
           "(int)(-2147483647 - 1); }\n"
           "template <typename F> __device__ __forceinline__ long long ss_f2i64(F x) "
           "{ return (x >= (F)-9223372036854775808.0 && x < (F)9223372036854775808.0) ? "
           "(long long)x : (-9223372036854775807LL - 1); }\n"
           "template <typename F> __device__ __forceinline__ unsigned int ss_f2u32(F x) "
           "{ return (x >= (F)0 && x < (F)4294967296.0) ? (unsigned int)x : "
           "(x > (F)-2147483649.0 && x < (F)0) ? (unsigned int)(int)x : "
           "(x >= (F)4294967296.0) ? 0U : 2147483648U; }\n"
           "template <typename F> __device__ __forceinline__ unsigned long long ss_f2u64(F x) "
           "{ return (x >= (F)0 && x < (F)18446744073709551616.0) ? (unsigned long long)x : "
           "(x > (F)-9223372036854775808.0 && x < (F)0) ? "
           "(unsigned long long)(long long)x : "
           "(x >= (F)18446744073709551616.0) ? 0ULL : 9223372036854775808ULL; }",
    # float16 <-> float conversions (round to nearest even): PTX cvt on the GPU (NVRTC
    # needs no header for it), the same rounding in software for the emulator
    "half": "#ifdef __CUDA_ARCH__\n"
            "__device__ __forceinline__ float ss_h2f(unsigned short h) "
            "{ float f; asm(\"cvt.f32.f16 %0, %1;\" : \"=f\"(f) : \"h\"(h)); return f; }\n"
            "__device__ __forceinline__ unsigned short ss_f2h(float f) "
            "{ unsigned short h; asm(\"cvt.rn.f16.f32 %0, %1;\" : \"=h\"(h) : \"f\"(f)); "
            "return h; }\n"
            "__device__ __forceinline__ unsigned short ss_d2h(double d) "
            "{ unsigned short h; asm(\"cvt.rn.f16.f64 %0, %1;\" : \"=h\"(h) : \"d\"(d)); "
            "return h; }\n"
            "#else\n"
            "static inline float ss_h2f(unsigned short h) { return ss_emu_h2f(h); }\n"
            "static inline unsigned short ss_f2h(float f) { return ss_emu_d2h((double)f); }\n"
            "static inline unsigned short ss_d2h(double d) { return ss_emu_d2h(d); }\n"
            "#endif\n"
            "__device__ __forceinline__ float ss_hround(float f) { return ss_h2f(ss_f2h(f)); }\n"
            "__device__ __forceinline__ float ss_hround_d(double d) "
            "{ return ss_h2f(ss_d2h(d)); }",
    # warp shuffles of every accumulator type (CUDA has them for 32/64-bit types)
    "shfl": "template <typename T> __device__ __forceinline__ T ss_shfl_xor(T v, int m) "
            "{ return (T)__shfl_xor_sync(0xffffffffu, (int)v, m); }\n"
            + "\n".join("__device__ __forceinline__ %s ss_shfl_xor(%s v, int m) "
                         "{ return __shfl_xor_sync(0xffffffffu, v, m); }" % (t, t)
                         for t in ("int", "unsigned int", "long long", "unsigned long long",
                                   "float", "double")),
    "sign": "template <typename T> __device__ __forceinline__ T ss_sign(T a) "
            "{ return a != a ? a : (T)((a > 0) - (a < 0)); }",
}


# --------------------------------------------------------------------------- ufuncs
def _math(fn: str, ct: str) -> str:
    return fn + "f" if ct == "float" else fn


def cast(op: Operand, dt, helpers: Optional[set] = None) -> str:
    """``op`` converted to dtype ``dt`` (literals are written in ``dt`` directly)."""
    if op.value is not None and not isinstance(op.value, Expr):
        return literal(op.value, dt)
    if op.dtype is not None and not isinstance(op.dtype, type) and np.dtype(op.dtype) == dt:
        return op.text
    src = op.dtype if op.dtype is not None and not isinstance(op.dtype, type) else None
    return convert(op.text, src, dt, helpers)


#: float -> integer conversion helper per target width and signedness
_F2I = {("i", 1): "ss_f2i32", ("i", 2): "ss_f2i32", ("i", 4): "ss_f2i32", ("i", 8): "ss_f2i64",
        ("u", 1): "ss_f2i32", ("u", 2): "ss_f2i32", ("u", 4): "ss_f2u32", ("u", 8): "ss_f2u64"}


def convert(text: str, src, dt, helpers: Optional[set] = None) -> str:
    """C text converting ``text`` (of dtype ``src``, None if weak) to dtype ``dt`` the way
    NumPy's ``astype`` does (float -> integer through the ``f2i`` helpers)."""
    dt = np.dtype(dt)
    ct = CTYPES[dt.name]
    if dt.name == "float16":
        if helpers is None:
            raise ValueError("a conversion to float16 needs the helper set")
        helpers.add("half")
        if src is not None and np.dtype(src).name == "float16":
            return text
        if src is None or np.dtype(src).itemsize >= 4 and np.dtype(src).name != "float32":
            return "ss_hround_d((double)%s)" % text        # one rounding, as NumPy
        return "ss_hround((float)%s)" % text
    if src is not None and np.dtype(src).kind == "f" and dt.kind in "iu":
        if helpers is None:
            raise ValueError("a float -> integer conversion needs the helper set")
        helpers.add("f2i")
        return "((%s)%s(%s))" % (ct, _F2I[(dt.kind, dt.itemsize)], text)
    return "((%s)%s)" % (ct, text)


def ufunc_expr(name: str, ops: Sequence[Operand], out_dt, attrs: Dict,
               helpers: set) -> Optional[str]:
    """C text of ufunc op ``name`` on ``ops`` producing ``out_dt``, or None if unsupported."""
    t = traits_of(name)
    u = None if t is None else t.ufunc
    if u is None or t.c is None or len(ops) != u.nin or set(attrs) - {"dtype"}:
        return None
    try:
        loop = u.resolve_dtypes(tuple(o.dtype for o in ops) + (attrs.get("dtype"),))
    except Exception:
        return None
    if any(ctype(d) is None for d in loop):
        return None
    ins, res = loop[:-1], loop[-1]
    a = [cast(o, d, helpers) for o, d in zip(ops, ins)]
    t_in = np.dtype(ins[0])
    ct = CTYPES[t_in.name]
    body = _power_literal(a, ops, ct) if u is np.power and t_in.kind == "f" else None
    if body is None:
        body = _formula(t.c, a, ct, t_in.kind, helpers)
    if body is None:
        return None
    if np.dtype(res).name == "float16":
        helpers.add("half")
        body = "ss_hround(%s)" % body         # NumPy rounds every half op's float result
    if np.dtype(res) != np.dtype(out_dt):
        body = convert(body, res, out_dt, helpers)
    return body


def _formula(c: CTemplate, a: Sequence[str], ct: str, kind: str,
             helpers: set) -> Optional[str]:
    """The table's C text for the loop kind ``kind`` (None: no translation)."""
    text = c.forms.get(kind)
    if text is None:
        return None
    helpers.update(c.helpers[kind])
    inf = _special(float("inf"), ct) if "{inf}" in text else ""
    return text.format(*a, ct=ct, f="f" if ct == "float" else "", inf=inf)


def _power_literal(a: Sequence[str], ops: Sequence[Operand], ct: str) -> Optional[str]:
    """x ** 2, x ** 1, x ** 0.5, x ** -1 of floats with a literal exponent, as NumPy's fast
    paths compute them; None for any other exponent."""
    e = ops[1].value
    if e is None or isinstance(e, Expr) or isinstance(e, bool):
        return None
    if e == 2:
        return "(%s * %s)" % (a[0], a[0])
    if e == 1:
        return a[0]
    if e == 0.5:
        return "%s(%s)" % (_math("sqrt", ct), a[0])
    if e == -1:
        return "((%s)1 / %s)" % (ct, a[0])
    return None


def where_expr(ops: Sequence[Operand], out_dt, helpers: set) -> str:
    return "(%s ? %s : %s)" % (cast(ops[0], np.dtype(bool), helpers),
                               cast(ops[1], out_dt, helpers), cast(ops[2], out_dt, helpers))


def clip_expr(ops: Sequence[Optional[Operand]], out_dt, helpers: set) -> str:
    out = cast(ops[0], out_dt, helpers)
    if ops[1] is not None:
        helpers.add("maximum")
        out = "ss_maximum(%s, %s)" % (out, cast(ops[1], out_dt, helpers))
    if ops[2] is not None:
        helpers.add("minimum")
        out = "ss_minimum(%s, %s)" % (out, cast(ops[2], out_dt, helpers))
    return out


def round_expr(op: Operand, dt, decimals: int) -> Optional[str]:
    dt = np.dtype(dt)
    ct = CTYPES[dt.name]
    if dt.kind != "f":
        return op.text if decimals >= 0 else None
    if dt.name == "float16":
        return None                      # NumPy rounds half values through several ops
    if decimals == 0:
        return "%s(%s)" % (_math("rint", ct), op.text)
    if decimals > 0:
        p = literal(10.0 ** decimals, dt)
        return "(%s(%s * %s) / %s)" % (_math("rint", ct), op.text, p, p)
    p = literal(10.0 ** -decimals, dt)
    return "(%s(%s / %s) * %s)" % (_math("rint", ct), op.text, p, p)


def _where(ops, out_dt, attrs, helpers) -> Optional[str]:
    return where_expr(ops, out_dt, helpers) if len(ops) == 3 and None not in ops else None


def _clip(ops, out_dt, attrs, helpers) -> Optional[str]:
    # absent bounds are None; the clipped operand must be an array
    if len(ops) != 3 or ops[0] is None or ops[0].value is not None:
        return None
    return clip_expr(ops, out_dt, helpers)


def _astype(ops, out_dt, attrs, helpers) -> Optional[str]:
    return cast(ops[0], out_dt, helpers) if len(ops) == 1 and ops[0] is not None else None


def _copy(ops, out_dt, attrs, helpers) -> Optional[str]:
    return ops[0].text if len(ops) == 1 and ops[0] is not None else None


def _round(ops, out_dt, attrs, helpers) -> Optional[str]:
    d = attrs.get("decimals", 0)
    if len(ops) != 1 or ops[0] is None or type(d) is not int:
        return None
    return round_expr(ops[0], out_dt, d)


#: the writers the traits table's ``CTemplate.builder`` names
BUILDERS = {"where": _where, "clip": _clip, "astype": _astype, "copy": _copy, "round": _round}


def pointwise_expr(op: str, ops: Sequence[Optional[Operand]], out_dt, attrs: Dict,
                   helpers: set) -> Optional[str]:
    """C text of elementwise op ``op`` (a ufunc or a builder op of the traits table) on
    ``ops`` (None: an absent optional operand), or None when it has no translation."""
    t = traits_of(op)
    if t is None or t.c is None:
        return None
    if t.c.builder is not None:
        return BUILDERS[t.c.builder](ops, out_dt, attrs, helpers)
    if any(o is None for o in ops):
        return None
    return ufunc_expr(op, ops, out_dt, attrs, helpers)


# --------------------------------------------------------------------------- reductions
class Reduction:
    """How a reduction accumulates: accumulator dtype, identity, combine, finish."""

    def __init__(self, op: str, in_dt, out_dt) -> None:
        self.op = op
        self.traits = r = REDUCE[op]
        in_dt, out_dt = np.dtype(in_dt), np.dtype(out_dt)
        if r.acc == "widened":
            # every sum accumulates in its result dtype, as NumPy's add.reduce does: a
            # float32 sum that overflows is inf here too.  The order differs (per-thread
            # running sums, then a tree over threads, where NumPy sums pairwise in blocks
            # of 8), so float results agree to rounding, not bit for bit (README)
            acc = out_dt if out_dt.name != "float16" else np.dtype("float32")
        elif r.acc == "bool":
            acc = np.dtype(bool)
        else:
            acc = out_dt
        self.acc = acc
        self.acc_c = CTYPES[acc.name]
        self.out_dt = out_dt
        self.out_c = CTYPES[out_dt.name]

    def identity(self) -> str:
        i = self.traits.identity
        if type(i) is str:
            return lowest(self.acc) if i == "lowest" else highest(self.acc)
        return literal(i, self.acc)

    def load(self, text: str, in_dt, helpers: set) -> str:
        """An element of the reduced array as an accumulator value."""
        return "(%s)" % convert(text, in_dt, self.acc, helpers)

    def combine(self, a: str, b: str, helpers: set) -> str:
        """Two partial results merged (the table's C combine)."""
        helpers.update(self.traits.helpers)
        return self.traits.c_combine.format(a, b)

    def finish(self, acc: str, count: str) -> str:
        if self.out_dt.name == "float16":         # summed in float32, rounded once
            if self.traits.finish == "mean":
                acc = "(%s / (float)%s)" % (acc, count)
            return "ss_hround(%s)" % acc
        if self.traits.finish == "mean":
            # NumPy divides the sum (in its dtype) by the count: float32 / float32
            div = self.acc_c if self.acc.kind == "f" else "double"
            return "((%s)(%s / (%s)%s))" % (self.out_c, acc, div, count)
        if self.acc != self.out_dt:
            return "((%s)%s)" % (self.out_c, acc)
        return acc


#: the reductions written as kernels: the traits table's, those with a C combine (``var`` /
#: ``std`` have none and run as the CuPy call)
REDUCTIONS = KERNEL_REDUCTIONS


def reduction_supported(node) -> bool:
    """Whether reduction ``node`` can be a kernel's reduction phase."""
    if node.op not in REDUCTIONS or set(node.attrs) - {"axis", "keepdims", "dtype"}:
        return False
    src = node.inputs[0] if node.inputs else None
    if src is None or not isinstance(src, Node) or ctype(src.dtype) is None:
        return False
    ax = node.attrs.get("axis")
    if ax is not None and not isinstance(ax, tuple):
        return False
    return ctype(node.dtype) is not None


def helper_source(names) -> str:
    out = []
    for n in sorted(names):
        guard = "SS_HELPER_%s" % n.upper()
        out.append("#ifndef %s\n#define %s\n%s\n#endif" % (guard, guard, HELPERS[n]))
    return "\n".join(out)
