"""Array API differential suite: every function of the standard, exported and compared.

Each case is a small program written against the array API standard (``xp = x.__array_namespace__()``).
It is exported with every axis ``Dim.AUTO``, the exported program is run on the example inputs
*and* on inputs of other sizes (the same shape template re-drawn), and each result is compared
with eager NumPy's array API namespace (``array_api_compat.numpy``) on the same inputs: dtype,
shape and values (NaN equal to NaN).  A case passes when every run agrees.

Run as a script it prints the pass rate over the whole table (cases and function names):

    python benchmarks/array_api_suite.py [--examples N] [--seed S] [-v]

``tests/capture/test_array_api.py`` runs every case under Hypothesis with a few examples.  The
standard's own suite, ``array-api-tests``, is not on the package index (so CI cannot install
it); with a checkout of it (and its ``array-api`` spec submodule, and ``ndindex`` installed),

    python benchmarks/array_api_suite.py --examples 2 --array-api-tests DIR [--modules ...]

also runs it twice, against eager NumPy and against ``exported_namespace()`` (every call on
arrays exported and compared with eager NumPy), and prints both pass rates.
"""
from __future__ import annotations

import argparse
import inspect
import os
import sys
import time
import warnings
from typing import Any, Callable, Dict, List, NamedTuple, Optional, Sequence, Tuple

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
os.environ.setdefault("OMP_NUM_THREADS", "1")
os.environ.setdefault("MKL_NUM_THREADS", "1")

import numpy as np  # noqa: E402

SIZE_RANGE = (2, 6)


class Arg(NamedTuple):
    """One array input: a shape template (letters are sizes drawn per run, ints are fixed)
    and the domain its values come from."""
    shape: Tuple[Any, ...]
    domain: str = "real"


class Case(NamedTuple):
    """``fn(xp, *arrays)`` over inputs drawn from ``args``; ``name`` is the standard's
    function it exercises; ``values=False`` compares only dtype and shape (``empty``)."""
    id: str
    name: str
    fn: Callable
    args: Tuple[Arg, ...]
    values: bool = True


def _draw(arg: Arg, sizes: Dict[str, int], rng: np.random.Generator) -> np.ndarray:
    shape = tuple(sizes[s] if isinstance(s, str) else s for s in arg.shape)
    d = arg.domain
    if d == "real":
        return rng.standard_normal(shape)
    if d == "f32":
        return rng.standard_normal(shape).astype(np.float32)
    if d == "pos":
        return rng.uniform(0.1, 3.0, shape)
    if d == "unit":
        return rng.uniform(-0.9, 0.9, shape)
    if d == "ge1":
        return rng.uniform(1.1, 3.0, shape)
    if d == "int":
        return rng.integers(-5, 6, shape).astype(np.int64)
    if d == "small":
        return rng.integers(0, 4, shape).astype(np.int64)
    if d == "bool":
        return rng.integers(0, 2, shape).astype(bool)
    if d == "complex":
        return rng.standard_normal(shape) + 1j * rng.standard_normal(shape)
    if d == "sorted":
        return np.sort(rng.standard_normal(shape), axis=-1)
    if d == "sorted_small":
        return np.sort(rng.integers(0, 4, shape).astype(np.int64), axis=-1)
    if d.startswith("index:"):
        return rng.integers(0, sizes[d[6:]], shape).astype(np.int64)
    if d == "repeats":
        return rng.integers(0, 3, shape).astype(np.int64)
    raise ValueError(d)


def _c(id_, fn, *args, name=None, values=True):
    return Case(id_, name or id_.split("[")[0], fn, tuple(args), values)


R2 = Arg(("a", "b"))
A_ = Arg(("a",))


def _unary(name, domain="real"):
    return _c(name, lambda xp, x, _n=name: getattr(xp, _n)(x), Arg(("a", "b"), domain))


def _binary(name, domain="real", domain2=None, bshape=("a", "b")):
    return _c(name + ("[broadcast]" if bshape != ("a", "b") else ""),
              lambda xp, x, y, _n=name: getattr(xp, _n)(x, y),
              Arg(("a", "b"), domain), Arg(bshape, domain2 or domain))


CASES: List[Case] = [
    # ---------------------------------------------------------------- elementwise
    *[_unary(n) for n in ("abs", "asinh", "atan", "ceil", "conj", "cos", "cosh", "exp",
                          "expm1", "floor", "isfinite", "isinf", "isnan", "negative",
                          "positive", "real", "round", "sign", "signbit", "sin", "sinh",
                          "square", "tan", "tanh", "trunc")],
    *[_unary(n, "unit") for n in ("acos", "asin", "atanh")],
    _unary("acosh", "ge1"),
    *[_unary(n, "pos") for n in ("log", "log1p", "log2", "log10", "sqrt")],
    _unary("imag", "complex"),
    _c("real[complex]", lambda xp, x: xp.real(x), Arg(("a", "b"), "complex")),
    _unary("bitwise_invert", "int"),
    _unary("logical_not", "bool"),
    *[_binary(n) for n in ("add", "atan2", "copysign", "divide", "equal", "floor_divide",
                           "greater", "greater_equal", "hypot", "less", "less_equal",
                           "logaddexp", "maximum", "minimum", "multiply", "not_equal",
                           "remainder", "subtract")],
    _binary("add", bshape=("b",)),
    _binary("multiply", bshape=(1, "b")),
    _binary("pow", "pos"),
    *[_binary(n, "int") for n in ("bitwise_and", "bitwise_or", "bitwise_xor")],
    *[_binary(n, "int", "small") for n in ("bitwise_left_shift", "bitwise_right_shift")],
    *[_binary(n, "bool") for n in ("logical_and", "logical_or", "logical_xor")],
    _c("clip", lambda xp, x: xp.clip(x, min=-0.5, max=0.5), R2),
    _c("clip[array bounds]", lambda xp, x, lo: xp.clip(x, min=lo, max=lo + 1.0), R2,
       Arg(("b",))),
    # ---------------------------------------------------------------- creation
    _c("arange", lambda xp, x: xp.arange(x.shape[0]), A_),
    _c("arange[start stop step]", lambda xp, x: xp.arange(1, x.shape[0] * 3, 2,
                                                           dtype=xp.float64), A_),
    _c("asarray", lambda xp, x: xp.asarray(x, dtype=xp.float32), R2),
    _c("asarray[copy]", lambda xp, x: xp.asarray(x, copy=True) + 0, R2),
    _c("empty", lambda xp, x: xp.empty((x.shape[0], 3)), A_, values=False),
    _c("empty_like", lambda xp, x: xp.empty_like(x), R2, values=False),
    _c("eye", lambda xp, x: xp.eye(x.shape[0]), A_),
    _c("eye[cols k]", lambda xp, x: xp.eye(x.shape[0], x.shape[1], k=1), R2),
    _c("full", lambda xp, x: xp.full((x.shape[0], 2), 3.5), A_),
    _c("full_like", lambda xp, x: xp.full_like(x, 7), R2),
    _c("linspace", lambda xp, x: xp.linspace(0.0, 1.0, x.shape[0]), A_),
    _c("meshgrid", lambda xp, x, y: xp.meshgrid(x, y), A_, Arg(("b",))),
    _c("meshgrid[ij]", lambda xp, x, y: xp.meshgrid(x, y, indexing="ij"), A_, Arg(("b",))),
    _c("ones", lambda xp, x: xp.ones(x.shape, dtype=xp.int32), R2),
    _c("ones_like", lambda xp, x: xp.ones_like(x), R2),
    _c("tril", lambda xp, x: xp.tril(x, k=-1), R2),
    _c("triu", lambda xp, x: xp.triu(x), Arg(("c", "a", "b"))),
    _c("zeros", lambda xp, x: xp.zeros((x.shape[1], x.shape[0])), R2),
    _c("zeros_like", lambda xp, x: xp.zeros_like(x, dtype=xp.bool), R2),
    _c("from_dlpack", lambda xp, x: xp.from_dlpack(x), R2),
    # ---------------------------------------------------------------- data types
    _c("astype", lambda xp, x: xp.astype(x, xp.float32), Arg(("a", "b"), "int")),
    _c("astype[to int]", lambda xp, x: xp.astype(x, xp.int32), R2),
    _c("can_cast", lambda xp, x: x * (2.0 if xp.can_cast(x, xp.float64) else 3.0), R2),
    _c("finfo", lambda xp, x: x * xp.finfo(x.dtype).eps, R2),
    _c("iinfo", lambda xp, x: xp.minimum(x, xp.iinfo(x.dtype).max), Arg(("a",), "int")),
    _c("isdtype", lambda xp, x: x * (2 if xp.isdtype(x.dtype, "real floating") else 3), R2),
    _c("result_type", lambda xp, x, y: xp.astype(x, xp.result_type(x, y)) + y,
       Arg(("a",), "int"), Arg(("a",), "f32")),
    # ---------------------------------------------------------------- indexing
    _c("take", lambda xp, x, i: xp.take(x, i, axis=0), R2, Arg(("c",), "index:a")),
    _c("take[1-d]", lambda xp, x, i: xp.take(x, i), A_, Arg(("c",), "index:a")),
    _c("take_along_axis", lambda xp, x: xp.take_along_axis(x, xp.argsort(x, axis=1), axis=1),
       R2),
    # ---------------------------------------------------------------- linear algebra
    _c("matmul", lambda xp, x, y: xp.matmul(x, y), R2, Arg(("b", "c"))),
    _c("matmul[batched]", lambda xp, x, y: x @ y, Arg(("c", "a", "b")), Arg(("b", "a"))),
    _c("matrix_transpose", lambda xp, x: xp.matrix_transpose(x), Arg(("c", "a", "b"))),
    _c("tensordot", lambda xp, x, y: xp.tensordot(x, y, axes=1), R2, Arg(("b", "c"))),
    _c("tensordot[pairs]", lambda xp, x, y: xp.tensordot(x, y, axes=([0], [1])), R2,
       Arg(("c", "a"))),
    _c("vecdot", lambda xp, x, y: xp.vecdot(x, y), R2, Arg(("a", "b"))),
    _c("vecdot[axis broadcast]", lambda xp, x, y: xp.vecdot(x, y, axis=0), R2, A_),
    # ---------------------------------------------------------------- manipulation
    _c("broadcast_arrays", lambda xp, x, y: xp.broadcast_arrays(x, y), R2, Arg(("b",))),
    _c("broadcast_to", lambda xp, x, y: xp.broadcast_to(y, x.shape), R2, Arg((1, "b"))),
    _c("concat", lambda xp, x, y: xp.concat([x, y]), R2, Arg(("c", "b"))),
    _c("concat[axis]", lambda xp, x, y: xp.concat((x, y), axis=-1), R2, Arg(("a", "c"))),
    _c("concat[None]", lambda xp, x, y: xp.concat([x, y], axis=None), R2, Arg(("c",))),
    _c("expand_dims", lambda xp, x: xp.expand_dims(x, axis=1), R2),
    _c("flip", lambda xp, x: xp.flip(x), R2),
    _c("flip[axis]", lambda xp, x: xp.flip(x, axis=0), R2),
    _c("moveaxis", lambda xp, x: xp.moveaxis(x, 0, -1), Arg(("a", "b", "c"))),
    _c("permute_dims", lambda xp, x: xp.permute_dims(x, (2, 0, 1)), Arg(("a", "b", "c"))),
    _c("repeat", lambda xp, x: xp.repeat(x, 2, axis=0), R2),
    _c("repeat[array]", lambda xp, x, r: xp.repeat(x, r, axis=0), R2,
       Arg(("a",), "repeats")),
    _c("reshape", lambda xp, x: xp.reshape(x, (-1,)), R2),
    _c("reshape[swap]", lambda xp, x: xp.reshape(x, (x.shape[1], x.shape[0])), R2),
    _c("roll", lambda xp, x: xp.roll(x, 1, axis=0), R2),
    _c("roll[flat]", lambda xp, x: xp.roll(x, -3), R2),
    _c("squeeze", lambda xp, x: xp.squeeze(x, axis=1), Arg(("a", 1, "b"))),
    _c("stack", lambda xp, x, y: xp.stack([x, y], axis=1), R2, R2),
    _c("tile", lambda xp, x: xp.tile(x, (2, 1)), R2),
    _c("unstack", lambda xp, x: xp.unstack(x, axis=1), Arg(("a", 3))),
    # ---------------------------------------------------------------- searching
    _c("argmax", lambda xp, x: xp.argmax(x, axis=0), R2),
    _c("argmax[flat]", lambda xp, x: xp.argmax(x), R2),
    _c("argmin", lambda xp, x: xp.argmin(x, axis=1, keepdims=True), R2),
    _c("count_nonzero", lambda xp, x: xp.count_nonzero(x > 0, axis=1), R2),
    _c("nonzero", lambda xp, x: xp.nonzero(x > 0), R2),
    _c("searchsorted", lambda xp, x, v: xp.searchsorted(x, v), Arg(("a",), "sorted"),
       Arg(("b",))),
    _c("searchsorted[right]", lambda xp, x, v: xp.searchsorted(x, v, side="right"),
       Arg(("a",), "sorted_small"), Arg(("b",), "small")),
    _c("where", lambda xp, x, y: xp.where(x > 0, x, y), R2, Arg(("b",))),
    # ---------------------------------------------------------------- sets
    _c("unique_values", lambda xp, x: xp.unique_values(x), Arg(("a", "b"), "small")),
    _c("unique_counts", lambda xp, x: tuple(xp.unique_counts(x)), Arg(("a",), "small")),
    _c("unique_inverse", lambda xp, x: tuple(xp.unique_inverse(x)),
       Arg(("a", "b"), "small")),
    _c("unique_all", lambda xp, x: tuple(xp.unique_all(x)), Arg(("a",), "small")),
    # ---------------------------------------------------------------- sorting
    _c("sort", lambda xp, x: xp.sort(x), R2),
    _c("sort[descending]", lambda xp, x: xp.sort(x, axis=0, descending=True),
       Arg(("a", "b"), "small")),
    _c("argsort", lambda xp, x: xp.argsort(x, axis=0), Arg(("a", "b"), "small")),
    _c("argsort[descending]", lambda xp, x: xp.argsort(x, descending=True),
       Arg(("a", "b"), "small")),
    # ---------------------------------------------------------------- statistics
    _c("cumulative_sum", lambda xp, x: xp.cumulative_sum(x), A_),
    _c("cumulative_sum[initial]", lambda xp, x: xp.cumulative_sum(x, axis=1,
                                                                  include_initial=True), R2),
    _c("max", lambda xp, x: xp.max(x, axis=1), R2),
    _c("max[keepdims]", lambda xp, x: xp.max(x, axis=(0, 1), keepdims=True), R2),
    _c("mean", lambda xp, x: xp.mean(x, axis=0), R2),
    _c("min", lambda xp, x: xp.min(x), R2),
    _c("prod", lambda xp, x: xp.prod(x, axis=1), R2),
    _c("prod[int dtype]", lambda xp, x: xp.prod(x, axis=0, dtype=xp.int64),
       Arg(("a", "b"), "small")),
    _c("std", lambda xp, x: xp.std(x, axis=1, correction=1), R2),
    _c("sum", lambda xp, x: xp.sum(x, axis=0), R2),
    _c("sum[int]", lambda xp, x: xp.sum(x), Arg(("a", "b"), "int")),
    _c("var", lambda xp, x: xp.var(x, keepdims=True), R2),
    # ---------------------------------------------------------------- utility
    _c("all", lambda xp, x: xp.all(x, axis=1), Arg(("a", "b"), "bool")),
    _c("any", lambda xp, x: xp.any(x > 1.0), R2),
    # ---------------------------------------------------------------- array object
    _c("__getitem__", lambda xp, x: x[1:, ::-1][..., None], R2),
    _c("__getitem__[mask]", lambda xp, x: x[x > 0], R2),
    _c("__setitem__", lambda xp, x: _setitem(xp, x), R2),
    _c("mT", lambda xp, x: x.mT, Arg(("c", "a", "b"))),
    _c("T", lambda xp, x: x.T, R2),
    _c("device", lambda xp, x: xp.zeros_like(x, device=x.device) + x, R2),
    _c("to_device", lambda xp, x: x.to_device("cpu") * 2, R2),
    _c("__pow__", lambda xp, x: x ** 2 + 1.5 ** x, R2),
    _c("__matmul__", lambda xp, x, y: x @ y, R2, Arg(("b",))),
    _c("linalg.vecdot", lambda xp, x, y: xp.linalg.vecdot(x, y), R2, R2),
    _c("linalg.matrix_transpose", lambda xp, x: xp.linalg.matrix_transpose(x), R2),
    _c("linalg.vector_norm", lambda xp, x: xp.linalg.vector_norm(x, axis=1), R2),
    _c("linalg.trace", lambda xp, x: xp.linalg.trace(x, offset=1), Arg(("c", "a", "b"))),
    _c("linalg.outer", lambda xp, x, y: xp.linalg.outer(x, y), A_, Arg(("b",))),
]


def _setitem(xp, x):
    y = xp.zeros_like(x)
    y[0, :] = x[0, :] * 2
    return y


# --------------------------------------------------------------------------- running
def oracle():
    """Eager NumPy's array API namespace: the values every exported run must match."""
    try:
        import array_api_compat.numpy as xp
        return xp
    except ImportError:
        return np


def _program(case: Case):
    """``case.fn`` as a function of named array parameters that asks its first input for
    the namespace, the way library code does."""
    n = len(case.args)

    def ns(x):
        import array_api_compat
        return array_api_compat.array_namespace(x)

    if n == 1:
        def program(x):
            return case.fn(ns(x), x)
    elif n == 2:
        def program(x, y):
            return case.fn(ns(x), x, y)
    else:
        def program(x, y, z):
            return case.fn(ns(x), x, y, z)
    program.__name__ = case.id.replace("[", "_").replace("]", "").replace(" ", "_") \
        .replace(".", "_")
    return program


def _leaves(v) -> List[Any]:
    if isinstance(v, (tuple, list)):
        return [x for item in v for x in _leaves(item)]
    return [v]


def _compare(got, want, values: bool) -> Optional[str]:
    g, w = _leaves(got), _leaves(want)
    if len(g) != len(w):
        return "returned %d values, eager %d" % (len(g), len(w))
    for i, (a, b) in enumerate(zip(g, w)):
        a, b = np.asarray(a), np.asarray(b)
        if a.dtype != b.dtype:
            return "output %d has dtype %s, eager %s" % (i, a.dtype, b.dtype)
        if a.shape != b.shape:
            return "output %d has shape %s, eager %s" % (i, a.shape, b.shape)
        if values and not np.array_equal(a, b, equal_nan=a.dtype.kind in "fc"):
            if a.dtype.kind in "fc" and np.allclose(a, b, rtol=1e-12, atol=1e-14,
                                                    equal_nan=True):
                continue
            return "output %d differs from eager" % i
    return None


def run_case(case: Case, sizes: Sequence[Dict[str, int]], seed: int) -> Optional[str]:
    """Export ``case`` on inputs drawn with ``sizes[0]``, run it on every ``sizes`` draw,
    and compare with eager NumPy.  Returns None on agreement, else what went wrong."""
    import symshape as ss
    xp = oracle()
    rng = np.random.default_rng(seed)
    draws = [[_draw(a, s, rng) for a in case.args] for s in sizes]
    program = _program(case)
    spec = tuple(tuple(ss.Dim.AUTO for _ in a.shape) for a in draws[0])
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            ep = ss.export(program, tuple(draws[0]), dynamic_shapes=spec)
    except ss.UserError as e:
        return "export: " + str(e).splitlines()[0]
    except Exception as e:  # noqa: BLE001 - a crash is what the suite looks for
        return "export crashed: %s: %s" % (type(e).__name__, e)
    module = ep.module()
    for inputs in draws:
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                want = case.fn(xp, *[x.copy() for x in inputs])
        except Exception:   # noqa: BLE001 - eager rejects these sizes: nothing to compare
            continue
        try:
            got = module(*[x.copy() for x in inputs])
        except ss.UserError as e:
            if inputs is draws[0]:
                return "run on the example: " + str(e).splitlines()[0]
            # the contract may be narrower than these sizes (a specialised axis): allowed
            continue
        except Exception as e:  # noqa: BLE001
            return "run crashed: %s: %s" % (type(e).__name__, e)
        bad = _compare(got, want, case.values)
        if bad:
            return bad
    return None


# --------------------------------------------------------------------------- exported namespace
def exported_namespace():
    """An array API namespace whose every call on NumPy arrays is exported with symshape
    (each array input's axes ``Dim.AUTO``), run through the exported program, and compared
    with eager NumPy (``array_api_compat.numpy``); a disagreement raises AssertionError.
    Calls without array inputs, or whose results hold no array, run eagerly.  This is the
    namespace the official ``array-api-tests`` run against (``--array-api-tests DIR``)."""
    import types

    from symshape.capture import array_api as traced

    eager = oracle()
    ns = types.ModuleType("symshape_exported_namespace")
    for name in dir(traced):
        if name.startswith("_") and name not in ("__array_api_version__",
                                                 "__array_namespace_info__"):
            continue
        v = getattr(traced, name)
        if callable(v) and not isinstance(v, type) and name != "__array_namespace_info__" \
                and getattr(v, "__module__", None) == traced.__name__:
            v = _exported_call(name, v, getattr(eager, name, None))
        setattr(ns, name, v)
    linalg = types.SimpleNamespace()
    for name in dir(traced.linalg):
        if not name.startswith("_"):
            setattr(linalg, name, _exported_call(
                "linalg." + name, getattr(traced.linalg, name),
                getattr(getattr(eager, "linalg", None), name, None)))
    ns.linalg = linalg
    return ns


def _exported_call(name: str, traced_fn, eager_fn):
    import symshape as ss

    def call(*args, **kwargs):
        reference = eager_fn if eager_fn is not None else traced_fn
        want = reference(*args, **kwargs)          # eager errors are the namespace's errors
        arrays: List[np.ndarray] = []
        template = _template((args, kwargs), arrays)
        if not arrays or not any(isinstance(x, np.ndarray) for x in _leaves(want)):
            return want

        def program(inputs):
            a, kw = _fill(template, inputs)
            out = traced_fn(*a, **kw)
            # named results (unique_counts) leave the program as plain tuples
            return tuple(out) if isinstance(out, tuple) else out

        spec = {"inputs": [tuple(ss.Dim.AUTO for _ in x.shape) for x in arrays]}
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            ep = ss.export(program, ([x.copy() for x in arrays],), dynamic_shapes=spec)
            got = ep.module()([x.copy() for x in arrays])
        got_leaves = [np.asarray(x) if isinstance(x, np.generic) else x
                      for x in _leaves(got)]
        bad = _compare(got_leaves, _leaves(want), name not in ("empty", "empty_like"))
        if bad:
            raise AssertionError("exported %s differs from eager NumPy: %s" % (name, bad))
        if isinstance(want, tuple) and type(want) is not tuple:    # named results
            return type(want)(*got_leaves)
        if isinstance(got, (tuple, list)):      # the container the namespace returns
            return type(got)(got_leaves)
        return got_leaves[0]

    call.__name__ = name.rsplit(".", 1)[-1]
    call.__doc__ = traced_fn.__doc__
    try:
        call.__signature__ = inspect.signature(traced_fn)   # the namespace's own signature
    except (TypeError, ValueError):
        pass
    return call


class _Slot(NamedTuple):
    index: int


def _template(v, arrays: List[np.ndarray]):
    """``v`` with every NumPy array replaced by a slot numbering it in ``arrays``."""
    if isinstance(v, np.ndarray):
        arrays.append(v)
        return _Slot(len(arrays) - 1)
    if isinstance(v, dict):
        return {k: _template(x, arrays) for k, x in v.items()}
    if isinstance(v, (list, tuple)) and type(v) in (list, tuple):
        return type(v)(_template(x, arrays) for x in v)
    return v


def _fill(v, inputs):
    if isinstance(v, _Slot):
        return inputs[v.index]
    if isinstance(v, dict):
        return {k: _fill(x, inputs) for k, x in v.items()}
    if isinstance(v, (list, tuple)) and type(v) in (list, tuple):
        return type(v)(_fill(x, inputs) for x in v)
    return v


def run_array_api_tests(checkout: str, modules: Sequence[str], max_examples: int,
                        namespace: str) -> Tuple[int, int, float, List[str]]:
    """Run the official suite in ``checkout`` against ``namespace`` ("exported" or
    "numpy"); returns (passed, failed, seconds, the failing tests' summary lines)."""
    import re
    import subprocess
    here = os.path.dirname(os.path.abspath(__file__))
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([here, env.get("PYTHONPATH", "")])
    env["ARRAY_API_TESTS_MODULE"] = (
        "exec('import array_api_suite as s; xp = s.exported_namespace()')"
        if namespace == "exported" else "array_api_compat.numpy")
    targets = [os.path.join("array_api_tests", m) for m in modules] or ["array_api_tests"]
    t0 = time.perf_counter()
    r = subprocess.run([sys.executable, "-m", "pytest", *targets, "-q", "-p",
                        "no:cacheprovider", "--max-examples", str(max_examples),
                        "--disable-deadline", "--derandomize", "-rf"],
                       cwd=checkout, env=env, capture_output=True, text=True)
    elapsed = time.perf_counter() - t0
    tail = r.stdout.strip().splitlines()[-1] if r.stdout.strip() else r.stderr[-500:]
    counts = {k: int(n) for n, k in re.findall(r"(\d+) (passed|failed|error|errors)", tail)}
    if not counts:
        raise SystemExit("array-api-tests did not run:\n%s\n%s" % (r.stdout[-2000:],
                                                                    r.stderr[-2000:]))
    failed = [line[len("FAILED "):] for line in r.stdout.splitlines()
              if line.startswith("FAILED ")]
    return counts.get("passed", 0), counts.get("failed", 0) + counts.get("error", 0) + \
        counts.get("errors", 0), elapsed, failed


def random_sizes(rng: np.random.Generator, n: int) -> List[Dict[str, int]]:
    return [{k: int(rng.integers(SIZE_RANGE[0], SIZE_RANGE[1] + 1)) for k in "abc"}
            for _ in range(n)]


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--examples", type=int, default=20, help="runs per case (default 20)")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("-v", "--verbose", action="store_true", help="print every failure")
    p.add_argument("--array-api-tests", metavar="DIR",
                   help="also run the official array-api-tests checkout in DIR (with its "
                        "array-api spec submodule) against the exported namespace")
    p.add_argument("--modules", nargs="*", default=[],
                   help="array-api-tests test modules to run (default: all)")
    a = p.parse_args(argv)
    rng = np.random.default_rng(a.seed)
    failures: Dict[str, str] = {}
    t0 = time.perf_counter()
    for case in CASES:
        for _ in range(a.examples):
            why = run_case(case, random_sizes(rng, 3), int(rng.integers(2 ** 31)))
            if why:
                failures[case.id] = why
                break
    elapsed = time.perf_counter() - t0
    names = sorted({c.name for c in CASES})
    bad_names = {c.name for c in CASES if c.id in failures}
    n_ok = len(CASES) - len(failures)
    print("array API differential suite: %d examples per case, %d size draws each"
          % (a.examples, 3))
    print("cases:     %d / %d pass (%.1f%%)" % (n_ok, len(CASES), 100.0 * n_ok / len(CASES)))
    print("functions: %d / %d pass (%.1f%%)" % (len(names) - len(bad_names), len(names),
                                                100.0 * (len(names) - len(bad_names))
                                                / len(names)))
    print("time: %.1f s" % elapsed)
    if failures:
        print("failing cases:")
        for k, v in failures.items():
            print("  %-28s %s" % (k, v if a.verbose else v[:110]))
    if a.array_api_tests:
        print()
        print("array-api-tests (%s), %d examples per test:"
              % (", ".join(a.modules) or "all modules", a.examples))
        for which in ("numpy", "exported"):
            ok, bad, secs, failed = run_array_api_tests(a.array_api_tests, a.modules,
                                                        a.examples, which)
            label = "eager NumPy (array_api_compat.numpy)" if which == "numpy" else \
                "exported with symshape"
            print("  %-38s %d / %d pass (%.1f%%) in %.0f s"
                  % (label, ok, ok + bad, 100.0 * ok / max(1, ok + bad), secs))
            for line in failed:
                print("      failed: %s" % (line if a.verbose else line[:150]))
            sys.stdout.flush()
    return 0


if __name__ == "__main__":
    sys.exit(main())
