"""Which public callables of ``numpy``, ``numpy.linalg`` and ``numpy.fft`` trace with
symbolic sizes.

For each callable the survey finds a call that eager NumPy accepts, from a fixed list of
argument patterns over a (5, 4) float array ``x``, a length-5 vector ``v`` and a 4x4 square
matrix ``m``; then it exports that call with every axis ``Dim.AUTO`` and classifies it:

- ``symbolic``: the export keeps every input axis dynamic and ``module()`` equals eager NumPy
  on inputs of other sizes;
- ``specialises``: the export succeeds but pins a size (or differs on other sizes);
- ``unsupported``: export raises ``UserError`` (the first line of its message is kept);
- ``crash``: any other exception (a bug: every failure must be a ``UserError``).

Callables no pattern can call (classes, dtypes, printing and file helpers, functions that
need arguments of another kind) are ``not surveyed``.  Run::

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

# (name, example args, which args are arrays with dynamic axes, a second shape per array)
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
]


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


def _same(a, b) -> bool:
    a = a if isinstance(a, (tuple, list)) else (a,)
    b = b if isinstance(b, (tuple, list)) else (b,)
    if len(a) != len(b):
        return False
    for x, y in zip(a, b):
        x, y = np.asarray(x), np.asarray(y)
        if x.shape != y.shape or x.dtype != y.dtype:
            return False
        if not np.allclose(x, y, equal_nan=True, rtol=1e-9, atol=1e-9):
            return False
    return True


def _caller(modname: str, name: str, args: tuple, arrays: List[int]) -> Callable:
    """The function over ``args`` with the arrays as named parameters ``a0, a1, ...``; it is
    looked up by name at each call, as user code (``np.asarray(x)``) looks it up."""
    mod = sys.modules[modname]

    def build(*xs):
        full = list(args)
        for i, xv in zip(arrays, xs):
            full[i] = xv
        return getattr(mod, name)(*full)
    params = ", ".join("a%d" % k for k in range(len(arrays)))
    ns = {"build": build}
    exec("def call(%s):\n    return build(%s)\n" % (params, params), ns)
    return ns["call"]


def survey_one(modname: str, name: str, fn: Callable) -> Row:
    for label, args, shapes in PATTERNS:
        if _eager(fn, args) is None:
            continue
        arrays = [i for i, a in enumerate(args) if isinstance(a, np.ndarray)]

        call = _caller(modname, name, args, arrays)
        example = tuple(args[i] for i in arrays)
        spec = {"a%d" % k: tuple(ss.Dim.AUTO for _ in args[i].shape)
                for k, i in enumerate(arrays)}
        try:
            with warnings.catch_warnings(), np.errstate(all="ignore"):
                warnings.simplefilter("ignore")
                ep = ss.export(call, example, dynamic_shapes=spec)
        except ss.UserError as e:
            return Row(modname, name, "unsupported", label, str(e).splitlines()[0][:160])
        except Exception as e:          # a crash: every failure must be a UserError
            return Row(modname, name, "crash", label, "%s: %s" % (type(e).__name__,
                                                                   str(e)[:140]))
        n_axes = sum(len(args[i].shape) for i in arrays)
        dynamic = len({str(s) for d in ep.graph.inputs for s in d.shape
                       if not isinstance(s, int)})
        rng = np.random.default_rng(3)
        other = []
        for i, shape in zip(arrays, shapes):
            a = args[i]
            if a.dtype == bool:
                other.append(rng.standard_normal(shape) > 0)
            elif shape[0] == shape[-1] and len(shape) == 2 and a.shape[0] == a.shape[1]:
                other.append(rng.standard_normal(shape) + 4 * np.eye(shape[0]))
            else:
                other.append(rng.standard_normal(shape))
        want = _eager(call, tuple(other))
        try:
            with warnings.catch_warnings(), np.errstate(all="ignore"):
                warnings.simplefilter("ignore")
                got = ep.module()(*other)
        except ss.UserError as e:
            return Row(modname, name, "specialises", label, str(e).splitlines()[0][:160])
        except Exception as e:
            return Row(modname, name, "crash", label, "module(): %s: %s"
                       % (type(e).__name__, str(e)[:140]))
        if want is None or not _same(got, want):
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
