"""The op traits table: what every op the tracer can emit *is*, in one place.

Each op name has one :class:`OpTraits` record:

* ``kind``: its family (:data:`KINDS`): elementwise, reduction, view, creation, ...;
* ``ufunc``: the single-output NumPy ufunc an elementwise op computes (array API spellings
  such as ``abs`` included), else None;
* ``core``: its name in the core op set of ``run_decompositions`` (docs/core_ops.md): the op
  itself when it is core, the array API name a NumPy-named ufunc is renamed to
  (``absolute`` -> ``abs``), None when it is lowered to other ops or has no core equivalent;
* ``fuse``: its role in the NumPy backend's blocked fusion (``codegen/fusion.py``): ``"ew"``
  (an elementwise member computed with ``out=``), ``"red"`` (a row-wise reduction), ``"view"``
  (basic indexing of a block), or None;
* ``reduce``: for the reductions NumPy computes row by row, how they accumulate
  (:class:`ReduceTraits`: identity, NumPy combine ufunc, C combine, finish);
* ``c``: how the CUDA backend writes an elementwise op as a C expression
  (:class:`CTemplate`), None when it has no C translation (the op runs as the CuPy call).

Readers: ``codegen/fusion.py`` and the NumPy backend (``fuse``, ``ufunc``, ``reduce``),
``codegen/loopnest/classify.py`` and ``codegen/cuda/cops.py`` (``kind``, ``c``, ``reduce``),
``capture/decomp.py`` (``core``, ``ufunc``), ``capture/array_api.py`` (the core ufunc ops),
``ops/reduction.py`` (``np.<ufunc>.reduce`` through ``combine``), ``registry.defop`` (every
defined op must have traits).  None of them keeps a set of op names of its own
(``tests/capture/test_op_traits.py``).
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Dict, FrozenSet, Optional, Tuple

import numpy as np

# --------------------------------------------------------------------------- kinds
PROGRAM = "program"            # input, constant
CREATION = "creation"          # zeros, arange, eye, ...
ELEMENTWISE = "elementwise"    # ufuncs, where, clip, astype, ...
REDUCTION = "reduction"        # sum, max, argmax, norm, ...
SCAN = "scan"                  # cumsum, diff, ...
SORT = "sort"                  # sort, argsort, searchsorted
VIEW = "view"                  # index remaps of one input: getitem, reshape, ...
MOVEMENT = "movement"          # data movement that copies: concat, pad, take, setitem, ...
DATADEP = "datadep"            # sizes known only at run time: argwhere, unique, item
LINALG = "linalg"              # matmul, einsum, linalg_*, fft_*, convolve, interp
RANDOM = "random"              # random_*, drawn_*, the program's generators
CONTROL = "control"            # cond, map, while_loop, tuple_get
CUSTOM = "custom"              # ss.custom_op ops ("ns::name")

KINDS: Tuple[str, ...] = (PROGRAM, CREATION, ELEMENTWISE, REDUCTION, SCAN, SORT, VIEW,
                          MOVEMENT, DATADEP, LINALG, RANDOM, CONTROL, CUSTOM)


def c_helpers(text: str) -> Tuple[str, ...]:
    """The ``ss_*`` helper functions C text calls (``ss_NAME(...)`` calls helper NAME)."""
    return tuple(sorted(set(re.findall(r"\bss_(\w+)\(", text))))


class ReduceTraits:
    """How a reduction that NumPy computes row by row accumulates.

    ``identity``: 0, 1, False, True, ``"lowest"`` / ``"highest"`` (of the accumulator dtype),
    or None (``var`` / ``std``: not a single combine); ``combine``: the NumPy ufunc that
    merges two partial results; ``c_combine``: the same as C text over ``{0}``, ``{1}`` (None:
    the CUDA backend has no kernel for it); ``acc``: the accumulator dtype, ``"result"`` (the
    result dtype), ``"widened"`` (the result dtype, float16 summed in float32) or ``"bool"``;
    ``finish``: None, or ``"mean"`` (divide by the count); ``half_acc``: NumPy itself sums
    float16 input in float32 and rounds once (``mean``), so the reduction written with
    ``out=`` into a float16 array (which rounds the sum first) differs from eager NumPy;
    ``helpers``: what ``c_combine`` calls.
    """

    __slots__ = ("identity", "combine", "c_combine", "acc", "finish", "half_acc", "helpers")

    def __init__(self, identity, combine: Optional[np.ufunc], c_combine: Optional[str],
                 acc: str, finish: Optional[str] = None, half_acc: bool = False) -> None:
        self.identity = identity
        self.combine = combine
        self.c_combine = c_combine
        self.acc = acc
        self.finish = finish
        self.half_acc = half_acc
        self.helpers = c_helpers(c_combine or "")

    def __repr__(self) -> str:
        return "ReduceTraits(identity=%r, combine=%s, finish=%r)" % (
            self.identity, getattr(self.combine, "__name__", None), self.finish)


class CTemplate:
    """An elementwise op as CUDA C text.

    ``forms`` maps a dtype kind of the computing loop (``b`` bool, ``i`` signed, ``u``
    unsigned, ``f`` float) to C text over the cast operands ``{0}``, ``{1}`` with ``{ct}`` (the
    loop's C type), ``{f}`` (``"f"`` for float, the suffix of C's float math functions) and
    ``{inf}`` (infinity of the loop type); a kind it lacks has no translation.  ``helpers``:
    the ``ss_*`` helper functions the text calls, per kind.  ``builder`` instead names the
    ``cops`` function that writes an op with attributes or mixed dtypes (``where``, ``clip``,
    ``astype``, ``copy``, ``round``).
    """

    __slots__ = ("forms", "helpers", "builder")

    def __init__(self, forms: Optional[Dict[str, str]] = None,
                 builder: Optional[str] = None) -> None:
        self.forms: Dict[str, str] = dict(forms or {})
        self.helpers: Dict[str, Tuple[str, ...]] = {k: c_helpers(t)
                                                    for k, t in self.forms.items()}
        self.builder = builder

    def __repr__(self) -> str:
        return "CTemplate(%s)" % (self.builder or ", ".join(sorted(self.forms)))


@dataclass(frozen=True, slots=True)
class OpTraits:
    """What one op is; see the module docstring for the fields."""

    name: str
    kind: str
    ufunc: Optional[np.ufunc] = None
    core: Optional[str] = None
    fuse: Optional[str] = None
    reduce: Optional[ReduceTraits] = None
    c: Optional[CTemplate] = None

    def __post_init__(self) -> None:
        assert self.kind in KINDS, self.kind

    @property
    def is_core(self) -> bool:
        """Whether the op itself is in the core op set."""
        return self.core == self.name


# --------------------------------------------------------------------------- the core set
#: NumPy ufunc name -> array API name (the core set spells ufuncs the array API way)
API_RENAMES: Dict[str, str] = {
    "absolute": "abs", "arccos": "acos", "arccosh": "acosh", "arcsin": "asin",
    "arcsinh": "asinh", "arctan": "atan", "arctan2": "atan2", "arctanh": "atanh",
    "invert": "bitwise_invert", "left_shift": "bitwise_left_shift",
    "right_shift": "bitwise_right_shift", "power": "pow", "conjugate": "conj",
}

_CORE_UFUNCS = frozenset([
    "abs", "acos", "acosh", "add", "asin", "asinh", "atan", "atan2", "atanh",
    "bitwise_and", "bitwise_invert", "bitwise_left_shift", "bitwise_or",
    "bitwise_right_shift", "bitwise_xor", "ceil", "conj", "copysign", "cos", "cosh",
    "divide", "equal", "exp", "expm1", "floor", "floor_divide", "greater", "greater_equal",
    "hypot", "isfinite", "isinf", "isnan", "less", "less_equal", "log", "log1p", "log2",
    "log10", "logaddexp", "logical_and", "logical_not", "logical_or", "logical_xor",
    "maximum", "minimum", "multiply", "negative", "nextafter", "not_equal", "positive",
    "pow", "reciprocal", "remainder", "sign", "signbit", "sin", "sinh", "sqrt", "square",
    "subtract", "tan", "tanh", "trunc",
])


# --------------------------------------------------------------------------- C formulas
def _infix(sym: str, kinds: str = "biuf") -> Dict[str, str]:
    return {k: "({0} %s {1})" % sym for k in kinds}


def _forms(kinds: str, text: str) -> Dict[str, str]:
    return {k: text for k in kinds}


def _math1(fn: str) -> Dict[str, str]:
    """A C math function of float operands (``expf`` for float32)."""
    return {"f": "%s{f}({0})" % fn}


def _rounding(fn: str) -> Dict[str, str]:
    """floor / ceil / trunc / rint / fabs: integer loops of these are the identity."""
    return dict(_forms("biu", "{0}"), f="%s{f}({0})" % fn)


def _math2(fn: str) -> Dict[str, str]:
    return {"f": "%s{f}({0}, {1})" % fn}


def _by_float(f: str, i: str, kinds: str = "iu") -> Dict[str, str]:
    return dict(_forms(kinds, i), f=f)


#: NumPy ufunc name -> its C text per loop kind (cops.ufunc_expr picks the loop with
#: ``ufunc.resolve_dtypes`` as NumPy does; ``power`` also has literal-exponent fast paths)
C_UFUNCS: Dict[str, Dict[str, str]] = {
    "add": dict(_infix("+", "iuf"), b="({0} || {1})"),
    "subtract": _infix("-", "iuf"),
    "multiply": dict(_infix("*", "iuf"), b="({0} && {1})"),
    "divide": _infix("/"),
    "less": _infix("<"), "less_equal": _infix("<="), "greater": _infix(">"),
    "greater_equal": _infix(">="), "equal": _infix("=="), "not_equal": _infix("!="),
    "bitwise_and": _infix("&", "biu"), "bitwise_or": _infix("|", "biu"),
    "bitwise_xor": _infix("^", "biu"),
    "left_shift": _forms("iu", "ss_lshift({0}, {1})"),
    "right_shift": _forms("iu", "ss_rshift({0}, {1})"),
    "maximum": _forms("biuf", "ss_maximum({0}, {1})"),
    "minimum": _forms("biuf", "ss_minimum({0}, {1})"),
    "fmax": _by_float("fmax{f}({0}, {1})", "ss_maximum({0}, {1})", "biu"),
    "fmin": _by_float("fmin{f}({0}, {1})", "ss_minimum({0}, {1})", "biu"),
    "logical_and": _forms("biuf", "(((bool){0}) && ((bool){1}))"),
    "logical_or": _forms("biuf", "(((bool){0}) || ((bool){1}))"),
    "logical_xor": _forms("biuf", "(((bool){0}) != ((bool){1}))"),
    "logical_not": _forms("biuf", "(!((bool){0}))"),
    "invert": dict(_forms("iu", "(~{0})"), b="(!{0})"),
    "negative": _forms("iuf", "(-{0})"),
    "positive": _forms("biuf", "{0}"),
    "square": _forms("biuf", "({0} * {0})"),
    "reciprocal": {"f": "(({ct})1 / {0})"},
    "absolute": dict(_forms("ub", "{0}"), i="({0} < 0 ? ({ct})(-{0}) : {0})",
                     f="fabs{f}({0})"),
    "sign": _forms("iuf", "ss_sign({0})"),
    "isnan": dict(_forms("biu", "false"), f="({0} != {0})"),
    "isinf": dict(_forms("biu", "false"), f="({0} == {inf} || {0} == -{inf})"),
    "isfinite": dict(_forms("biu", "true"), f="({0} - {0} == 0)"),
    "power": _by_float("pow{f}({0}, {1})", "ss_ipow({0}, {1})"),
    "floor_divide": _by_float("ss_ffloordiv({0}, {1})", "ss_ifloordiv({0}, {1})"),
    "remainder": _by_float("ss_fremainder({0}, {1})", "ss_iremainder({0}, {1})"),
}
C_UFUNCS.update({n: _math1(c) for n, c in (
    ("exp", "exp"), ("exp2", "exp2"), ("expm1", "expm1"), ("log", "log"), ("log2", "log2"),
    ("log10", "log10"), ("log1p", "log1p"), ("sqrt", "sqrt"), ("cbrt", "cbrt"),
    ("sin", "sin"), ("cos", "cos"), ("tan", "tan"), ("arcsin", "asin"), ("arccos", "acos"),
    ("arctan", "atan"), ("sinh", "sinh"), ("cosh", "cosh"), ("tanh", "tanh"),
    ("arcsinh", "asinh"), ("arccosh", "acosh"), ("arctanh", "atanh"))})
C_UFUNCS.update({n: _rounding(n) for n in ("floor", "ceil", "trunc", "rint", "fabs")})
C_UFUNCS.update({n: _math2(c) for n, c in (
    ("arctan2", "atan2"), ("hypot", "hypot"), ("copysign", "copysign"),
    ("nextafter", "nextafter"), ("fmod", "fmod"))})


# --------------------------------------------------------------------------- reductions
REDUCE: Dict[str, ReduceTraits] = {
    "sum": ReduceTraits(0, np.add, "{0} + {1}", "widened"),
    "mean": ReduceTraits(0, np.add, "{0} + {1}", "widened", finish="mean", half_acc=True),
    "prod": ReduceTraits(1, np.multiply, "{0} * {1}", "widened"),
    "max": ReduceTraits("lowest", np.maximum, "ss_maximum({0}, {1})", "result"),
    "min": ReduceTraits("highest", np.minimum, "ss_minimum({0}, {1})", "result"),
    # bitwise, not || / &&: short-circuiting would skip the warp shuffle in the operand on
    # some lanes
    "any": ReduceTraits(False, np.logical_or, "(bool)(({0}) | ({1}))", "bool"),
    "all": ReduceTraits(True, np.logical_and, "(bool)(({0}) & ({1}))", "bool"),
    # two moments (mean, then squared deviations): no single combine; NumPy still computes
    # each row on its own, so the blocked NumPy fusion takes them, the CUDA kernels do not
    "var": ReduceTraits(None, None, None, "result", finish="var"),
    "std": ReduceTraits(None, None, None, "result", finish="std"),
}


# --------------------------------------------------------------------------- the table
TRAITS: Dict[str, OpTraits] = {}


def _add(t: OpTraits) -> OpTraits:
    TRAITS[t.name] = t
    return t


def _numpy_ufuncs():
    """NumPy's own ufuncs, by their ``__name__`` (aliases such as ``true_divide`` skipped:
    the tracer names a node by the ufunc's ``__name__``)."""
    for n in sorted(dir(np)):
        u = getattr(np, n, None)
        if isinstance(u, np.ufunc) and u.__name__ == n:
            yield u


def ufunc_traits(u: np.ufunc) -> OpTraits:
    """The traits of the op of NumPy ufunc ``u`` (named ``u.__name__``)."""
    name = u.__name__
    if u.signature is not None:            # matmul, vecdot, ...: generalized ufuncs
        return OpTraits(name, LINALG, core=name if name == "matmul" else None)
    if u.nout != 1:                        # divmod, modf, frexp: one op per output
        return OpTraits(name, ELEMENTWISE)
    api = API_RENAMES.get(name, name)
    forms = C_UFUNCS.get(name)
    return OpTraits(name, ELEMENTWISE, ufunc=u, core=api if api in _CORE_UFUNCS else None,
                    fuse="ew", c=CTemplate(forms) if forms else None)


def _build() -> None:
    for u in _numpy_ufuncs():
        _add(ufunc_traits(u))
        if u.nout > 1:
            for i in range(u.nout):
                _add(OpTraits("%s_%d" % (u.__name__, i), ELEMENTWISE))
    # array API spellings of renamed ufuncs: the same ufunc, emitted as the NumPy-named op
    # is; not fused by the NumPy backend, which writes np.<op>(..., out=)
    for np_name, api in API_RENAMES.items():
        base = TRAITS[np_name]
        _add(OpTraits(api, ELEMENTWISE, ufunc=base.ufunc, core=api, c=base.c))
    for name in ("where", "clip", "astype"):
        _add(OpTraits(name, ELEMENTWISE, core=name if name != "clip" else None, fuse="ew",
                      c=CTemplate(builder=name)))
    _add(OpTraits("copy", ELEMENTWISE, c=CTemplate(builder="copy")))
    _add(OpTraits("round", ELEMENTWISE, core="round", c=CTemplate(builder="round")))
    for name in ("real", "imag"):
        _add(OpTraits(name, ELEMENTWISE))
    for name, r in REDUCE.items():
        _add(OpTraits(name, REDUCTION, core=name if r.finish is None else None, fuse="red",
                      reduce=r))
    # the other ops by kind; a trailing * marks a core op
    groups = {
        PROGRAM: ("input*", "constant*"),
        CREATION: ("zeros*", "ones*", "empty*", "full*", "arange*", "eye*", "linspace"),
        REDUCTION: ("argmax*", "argmin*", "norm"),
        SCAN: ("cumsum", "cumprod", "cumulative_sum*", "cumulative_prod*", "diff"),
        SORT: ("sort*", "argsort*", "searchsorted"),
        VIEW: ("getitem*", "expand_dims*", "squeeze*", "permute_dims*", "broadcast_to*",
               "reshape*"),
        MOVEMENT: ("concat*", "stack", "tile", "repeat", "pad", "flip", "roll", "diagonal",
                   "take*", "take_along_axis*", "index*", "setitem*", "setitem_owned", "index_put*",
                   "ufunc_at"),
        DATADEP: ("argwhere*", "flatnonzero*", "unique*", "item*", "repeat_counts"),
        LINALG: ("dot", "einsum", "tensordot", "outer", "convolve", "interp"),
        RANDOM: ("random_generator",),
        CONTROL: ("cond*", "map*", "while_loop*", "for_loop*", "tuple_get*"),
    }
    for kind, members in groups.items():
        for n in members:
            core = n.endswith("*")
            n = n.rstrip("*")
            # basic indexing is the one view a block of a fused group can take
            _add(OpTraits(n, kind, core=n if core else None,
                          fuse="view" if n == "getitem" else None))


_build()

#: op-name prefixes of op families whose members are made per NumPy function
#: (``linalg_svd``, ``fft_rfft``, ``random_normal``, ``global_random_rand``, ``drawn_beta``;
#: ``np_percentile``: a NumPy function the generated code calls, ``ops/npcall.py``)
PREFIXES: Tuple[Tuple[str, str], ...] = (
    ("linalg_", LINALG), ("fft_", LINALG), ("random_", RANDOM), ("global_random_", RANDOM),
    ("drawn_", RANDOM), ("np_", LINALG))


def traits_of(op: str) -> Optional[OpTraits]:
    """The traits of op ``op``; None for a name no op can have."""
    t = TRAITS.get(op)
    if t is not None:
        return t
    if "::" in op:
        return _add(OpTraits(op, CUSTOM))
    for prefix, kind in PREFIXES:
        if op.startswith(prefix):
            return _add(OpTraits(op, kind))
    return None


def names(kind: Optional[str] = None, *, fuse: Optional[str] = None) -> FrozenSet[str]:
    """The op names of the static table with ``kind`` (and NumPy fusion role ``fuse``)."""
    return frozenset(n for n, t in TRAITS.items()
                     if (kind is None or t.kind == kind) and (fuse is None or t.fuse == fuse))


#: the core op set of run_decompositions (docs/core_ops.md)
CORE_OPS: FrozenSet[str] = frozenset(n for n, t in TRAITS.items() if t.is_core)
#: the reductions NumPy computes row by row (the NumPy backend fuses them)
ROW_REDUCTIONS: FrozenSet[str] = frozenset(REDUCE)
#: elementwise ops whose every result element is one exactly rounded (or exact) IEEE
#: operation on the operands' elements: NumPy's SIMD and strided loops agree bit for bit,
#: so a block over a strided view computes what the whole-array call computes.  (Not
#: ``exp``, ``tanh``, ``power``...: their vector and scalar kernels may round differently.)
#: Read by the NumPy backend's blocked path over strided operands.
LAYOUT_FREE_OPS: FrozenSet[str] = frozenset((
    "add", "subtract", "multiply", "divide", "true_divide", "negative", "positive",
    "absolute", "fabs", "sqrt", "square", "reciprocal", "maximum", "minimum", "fmax",
    "fmin", "sign", "copysign", "floor", "ceil", "trunc", "rint", "greater",
    "greater_equal", "less", "less_equal", "equal", "not_equal", "logical_and",
    "logical_or", "logical_xor", "logical_not", "bitwise_and", "bitwise_or", "bitwise_xor",
    "invert", "isnan", "isinf", "isfinite", "signbit", "astype", "where", "clip"))

#: the reductions the CUDA backend writes as kernels (those with a C combine)
KERNEL_REDUCTIONS: FrozenSet[str] = frozenset(n for n, r in REDUCE.items()
                                              if r.c_combine is not None)
