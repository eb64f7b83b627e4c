"""Which public callables of ``numpy``, ``numpy.linalg`` and ``numpy.fft`` trace with
symbolic sizes.

For each callable the survey finds a call that eager NumPy accepts, from a fixed list of
argument patterns (``PATTERNS``) over a (5, 4) float array ``x``, a length-5 vector ``v``, a
4x4 square matrix ``m``, integer and uint8 arrays, sizes of inputs passed as arguments
(``np.hanning(len(v))``), lists of arrays (``multi_dot([m, m, m])``) and a few more; then it
exports that call with every axis ``Dim.AUTO`` and classifies it:

- ``symbolic``: the export keeps every input axis dynamic and ``module()`` equals eager NumPy
  on inputs of other sizes;
- ``specialises``: the export succeeds but pins a size (or differs on other sizes);
- ``unsupported``: export raises ``UserError`` (the first line of its message is kept);
- ``crash``: any other exception (a bug: every failure must be a ``UserError``).

A function that writes into its first argument and returns None (``np.copyto``, ``np.put``)
is compared by that argument.  Callables no pattern can call are ``not surveyed``: those
that take a callable (``fromfunction``, ``mask_indices``) or datetimes (``isnat``), return
lists or strings (``histogramdd``, ``einsum_path``), or index tuples (``ravel_multi_index``,
``unravel_index``).  Run::

    python benchmarks/numpy_coverage.py            # the table and the percentages
    python benchmarks/numpy_coverage.py --failing  # only what does not trace
"""
from __future__ import annotations

import inspect
import sys
import warnings
from typing import Callable, Dict, List, NamedTuple, Optional, Tuple

import numpy as np

import symshape as ss

# side effects, I/O, configuration, introspection: never called by the survey
SKIP = {
    "save", "savez", "savez_compressed", "savetxt", "load", "loadtxt", "genfromtxt",
    "fromfile", "fromregex", "memmap", "set_printoptions", "get_printoptions",
    "printoptions", "seterr", "geterr", "seterrcall", "geterrcall", "errstate", "info",
    "show_config", "show_runtime", "test", "setbufsize", "getbufsize", "get_include",
    "lookfor", "source", "who", "deprecate", "set_string_function", "add_newdoc",
    "add_docstring", "add_newdoc_ufunc", "from_dlpack", "frombuffer", "fromiter",
    "fromstring", "require", "asmatrix", "bmat", "mat", "may_share_memory", "shares_memory",
    "get_array_wrap", "set_array_function_like", "busday_count", "busday_offset",
    "is_busday", "datetime_as_string", "datetime_data", "nested_iters", "vectorize",
    "frompyfunc", "piecewise", "apply_along_axis", "apply_over_axes", "nditer", "ndindex",
    "ndenumerate", "broadcast", "iterable", "isscalar", "typename", "mintypecode",
    "result_type", "promote_types", "can_cast", "min_scalar_type", "common_type",
    "issubdtype", "isdtype", "finfo", "iinfo", "format_float_positional",
    "format_float_scientific", "array2string", "array_repr", "array_str", "base_repr",
    "binary_repr", "dtype", "ndarray", "recarray", "chararray", "matrix", "poly1d",
    "vdot_like", "sctype2char", "obj2sctype", "printoptions",
}

X = np.random.default_rng(0).standard_normal((5, 4))
V = np.random.default_rng(1).standard_normal(5)
M = np.random.default_rng(2).standard_normal((4, 4)) + 4 * np.eye(4)

I = np.random.default_rng(4).integers(0, 5, (5, 4))
U8 = np.random.default_rng(5).integers(0, 256, (5, 4)).astype(np.uint8)
VS = np.sort(V)
X3 = np.random.default_rng(6).standard_normal((5, 3))
T4 = np.random.default_rng(7).standard_normal((2, 3, 2, 3)).reshape(6, 6)
T4 = (T4 + 4 * np.eye(6)).reshape(2, 3, 2, 3)
X3D = np.random.default_rng(9).standard_normal((2, 3, 4))
IDX = np.random.default_rng(8).integers(0, 5, (5, 4))


class Size(NamedTuple):
    """A size of an input array passed as an argument (``np.hanning(len(v))``): the array
    is an input of the exported function (with its own dynamic axes), the call receives its
    ``shape[axis]``."""
    arr: np.ndarray
    axis: int


class Seq(NamedTuple):
    """A list of input arrays passed as one argument (``np.linalg.multi_dot([m, m, m])``)."""
    arrs: tuple


# (label, example args, a second shape for every input array in the order they appear:
# array arguments, the array of a Size, the arrays of a Seq)
PATTERNS: List[Tuple[str, tuple, Tuple[tuple, ...]]] = [
    ("f(x)", (X,), ((7, 6),)),
    ("f(v)", (V,), ((9,),)),
    ("f(m)", (M,), ((6, 6),)),
    ("f(x, x)", (X, X), ((7, 6), (7, 6))),
    ("f(v, v)", (V, V), ((9,), (9,))),
    ("f(m, m)", (M, M), ((6, 6), (6, 6))),
    ("f(m, v4)", (M, V[:4]), ((6, 6), (6,))),
    ("f(x, 1)", (X, 1), ((7, 6),)),
    ("f(v, 2)", (V, 2), ((9,),)),
    ("f(x, x, x)", (X, X > 0, X), ((7, 6), (7, 6), (7, 6))),
    ("f([m, m, m])", (Seq((M, M, M)),), ((6, 6), (6, 6), (6, 6))),
    # sizes of inputs as arguments
    ("f(n)", (Size(V, 0),), ((9,),)),
    ("f(n, 2.0)", (Size(V, 0), 2.0), ((9,),)),
    ("f((n, k))", ((Size(X, 0), Size(X, 1)),), ((7, 6), (7, 6))),
    ("f(iv)", (I[:, 0],), ((7,),)),
    ("f('ij->j', x)", ("ij->j", X), ((7, 6),)),
    ("f(x, x.shape)", (X, (Size(X, 0), Size(X, 1))), ((7, 6), (7, 6), (7, 6))),
    # other kinds of arrays
    ("f(i)", (I,), ((7, 6),)),
    ("f(i, i)", (I, I), ((7, 6), (7, 6))),
    ("f(u8)", (U8,), ((7, 6),)),
    ("f(v, sorted v)", (V, VS), ((9,), (9,))),
    ("f(v, sorted v, v)", (VS, VS, V), ((9,), (9,), (9,))),
    ("f(x3, x3)", (X3, X3), ((7, 3), (7, 3))),
    ("f(t4)", (T4,), ((2, 3, 2, 3),)),
    ("f(x, 0, 1)", (X, 0, 1), ((7, 6),)),
    ("f(x, idx, 0)", (X, IDX, 0), ((7, 6), (7, 6))),
    ("f(x, idx, 1.0, 0)", (X, IDX, 1.0, 0), ((7, 6), (7, 6))),
    ("f(m, 2)", (M, 2), ((6, 6),)),
    ("f(v, v, 2)", (V, V, 2), ((9,), (9,))),
    ("f([x > 0], [x])", (Seq((X > 0,)), Seq((X,))), ((7, 6), (7, 6))),
    ("f(x, 'float32')", (X, "float32"), ((7, 6),)),
    ("f(x3d, 2)", (X3D, 2), ((3, 5, 8),)),
]


def _inputs(args) -> List[np.ndarray]:
    """The input arrays of a pattern, in order (see PATTERNS)."""
    out: List[np.ndarray] = []
    for a in args:
        if isinstance(a, np.ndarray):
            out.append(a)
        elif isinstance(a, Size):
            out.append(a.arr)
        elif isinstance(a, Seq):
            out.extend(a.arrs)
        elif isinstance(a, tuple):
            out.extend(_inputs(a))
    return out


class _In(NamedTuple):
    """Where an input goes in a call template: the array itself, its ``shape[axis]``, or
    ``count`` inputs as a list."""
    kind: str
    axis: int = 0
    count: int = 1


def _template(args) -> tuple:
    """The pattern's arguments with every array replaced by an ``_In`` mark: the function
    the survey exports must hold no example array (it would be traced as model state)."""
    def mark(a):
        if isinstance(a, np.ndarray):
            return _In("array")
        if isinstance(a, Size):
            return _In("size", a.axis)
        if isinstance(a, Seq):
            return _In("list", count=len(a.arrs))
        if isinstance(a, tuple):
            return tuple(mark(b) for b in a)
        return a
    return tuple(mark(a) for a in args)


def _substitute(template: tuple, xs: list) -> tuple:
    """The call's arguments: the inputs ``xs`` (consumed in order) put in the template."""
    it = iter(xs)

    def sub(a):
        if isinstance(a, _In):
            if a.kind == "array":
                return next(it)
            if a.kind == "size":
                return next(it).shape[a.axis]
            return [next(it) for _ in range(a.count)]
        if isinstance(a, tuple):
            return tuple(sub(b) for b in a)
        return a
    return tuple(sub(a) for a in template)


def _another(a: np.ndarray, shape: tuple, rng) -> np.ndarray:
    """An input like ``a`` (dtype, sortedness, diagonal dominance) of another shape."""
    if a.dtype == bool:
        return rng.standard_normal(shape) > 0
    if a.dtype.kind in "iu":
        hi = 256 if a.dtype == np.uint8 else int(a.max()) + 1
        return rng.integers(0, hi, shape).astype(a.dtype)
    out = rng.standard_normal(shape)
    if a.ndim == 1 and a.size > 1 and np.all(np.diff(a) >= 0):
        return np.sort(out)
    if len(shape) == 2 and shape[0] == shape[1] and a.shape[0] == a.shape[1]:
        return out + 4 * np.eye(shape[0])
    if a.ndim == 4:                             # the invertible 4-D tensor of tensorinv
        n = shape[0] * shape[1]
        return (out.reshape(n, -1) + 4 * np.eye(n)).reshape(shape)
    return out


class Row(NamedTuple):
    module: str
    name: str
    status: str          # symbolic / specialises / unsupported / crash / not surveyed
    pattern: str
    detail: str


def public_callables() -> List[Tuple[str, str, Callable]]:
    out = []
    for modname, mod in (("numpy", np), ("numpy.linalg", np.linalg), ("numpy.fft", np.fft)):
        names = getattr(mod, "__all__", None) or [n for n in dir(mod) if not n.startswith("_")]
        for name in sorted(set(names)):
            obj = getattr(mod, name, None)
            if obj is None or inspect.ismodule(obj) or inspect.isclass(obj):
                continue
            if not callable(obj) or name in SKIP:
                continue
            out.append((modname, name, obj))
    return out


def _eager(fn, args) -> Optional[object]:
    try:
        with warnings.catch_warnings(), np.errstate(all="ignore"):
            warnings.simplefilter("ignore")
            out = fn(*args)
    except Exception:
        return None
    leaves = out if isinstance(out, (tuple, list)) else (out,)
    if not leaves or not all(isinstance(v, (np.ndarray, np.generic, float, int, bool, complex))
                             for v in leaves):
        return None
    if any(getattr(np.asarray(v), "dtype", None) == object for v in leaves):
        return None
    return out


# their values are whatever memory held: only shapes and dtypes are compared
VALUELESS = {"empty", "empty_like"}


def _same(a, b, values: bool = True) -> bool:
    a = a if isinstance(a, (tuple, list)) else (a,)
    b = b if isinstance(b, (tuple, list)) else (b,)
    if len(a) != len(b):
        return False
    for x, y in zip(a, b):
        x, y = np.asarray(x), np.asarray(y)
        if x.shape != y.shape or x.dtype != y.dtype:
            return False
        if values and not np.allclose(x, y, equal_nan=True, rtol=1e-9, atol=1e-9):
            return False
    return True


def _caller(modname: str, name: str, args: tuple, n_inputs: int) -> Callable:
    """The function over the pattern's inputs as named parameters ``a0, a1, ...``; it is
    looked up by name at each call, as user code (``np.asarray(x)``) looks it up."""
    mod = sys.modules[modname]
    template = _template(args)

    def build(*xs):
        out = getattr(mod, name)(*_substitute(template, list(xs)))
        # a function that writes into its first argument and returns None: that argument
        return xs[0] if out is None and xs else out
    params = ", ".join("a%d" % k for k in range(n_inputs))
    ns = {"build": build}
    exec("def call(%s):\n    return build(%s)\n" % (params, params), ns)
    return ns["call"]


def survey_one(modname: str, name: str, fn: Callable) -> Row:
    for label, args, shapes in PATTERNS:
        inputs = _inputs(args)
        # every call gets fresh copies: functions with out= / in-place writes (np.sqrt(x, x),
        # np.copyto) must not change the shared examples for the rows after them
        call = _caller(modname, name, args, len(inputs))
        if _eager(call, tuple(a.copy() for a in inputs)) is None:
            continue
        example = tuple(a.copy() for a in inputs)
        spec = {"a%d" % k: tuple(ss.Dim.AUTO for _ in a.shape) for k, a in enumerate(inputs)}
        try:
            with warnings.catch_warnings(), np.errstate(all="ignore"):
                warnings.simplefilter("ignore")
                ep = ss.export(call, example, dynamic_shapes=spec)
        except ss.UserError as e:
            return Row(modname, name, "unsupported", label, str(e).splitlines()[0][:160])
        except Exception as e:          # a crash: every failure must be a UserError
            return Row(modname, name, "crash", label, "%s: %s" % (type(e).__name__,
                                                                   str(e)[:140]))
        n_axes = sum(a.ndim for a in inputs)
        dynamic = len({str(s) for d in ep.graph.inputs for s in d.shape
                       if not isinstance(s, int)})
        rng = np.random.default_rng(3)
        other = [_another(a, shape, rng) for a, shape in zip(inputs, shapes)]
        want = _eager(call, tuple(a.copy() for a in other))
        try:
            with warnings.catch_warnings(), np.errstate(all="ignore"):
                warnings.simplefilter("ignore")
                got = ep.module()(*[a.copy() for a in other])
        except ss.UserError as e:
            return Row(modname, name, "specialises", label, str(e).splitlines()[0][:160])
        except Exception as e:
            return Row(modname, name, "crash", label, "module(): %s: %s"
                       % (type(e).__name__, str(e)[:140]))
        if want is None or not _same(got, want, name not in VALUELESS):
            return Row(modname, name, "crash", label, "module() differs from eager NumPy")
        status = "symbolic" if dynamic and dynamic >= min(n_axes, 1) else "specialises"
        return Row(modname, name, status, label, "")
    return Row(modname, name, "not surveyed", "", "no argument pattern fits")


def survey() -> List[Row]:
    return [survey_one(m, n, f) for m, n, f in public_callables()]


def summary(rows: List[Row]) -> Dict[str, int]:
    counts: Dict[str, int] = {}
    for r in rows:
        counts[r.status] = counts.get(r.status, 0) + 1
    return counts


def main(argv: List[str]) -> None:
    import logging
    logging.getLogger("symshape").setLevel(logging.ERROR)   # the survey's own specialisations
    rows = survey()
    failing = "--failing" in argv
    for r in rows:
        if failing and r.status in ("symbolic", "not surveyed"):
            continue
        print("%-13s %-12s %-26s %-10s %s" % (r.status, r.module, r.name, r.pattern, r.detail))
    counts = summary(rows)
    surveyed = sum(v for k, v in counts.items() if k != "not surveyed")
    print()
    print("callables: %d, surveyed (some call works eagerly): %d" % (len(rows), surveyed))
    for k in ("symbolic", "specialises", "unsupported", "crash", "not surveyed"):
        v = counts.get(k, 0)
        print("  %-13s %4d  %5.1f%% of surveyed" % (k, v, 100.0 * v / max(surveyed, 1)))


if __name__ == "__main__":
    main(sys.argv[1:])
