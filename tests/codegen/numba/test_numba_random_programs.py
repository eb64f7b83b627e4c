"""The repository's random programs (``tests/e2e/test_random_programs.py``'s generator) under
``backend="numba"``, against eager NumPy, on every input layout: C, F, transposed,
strided, and a broadcast (0-stride, read-only) view.

The accuracy contract is ``symshape.codegen.numba_backend``'s docstring:

* a program of ops that NumPy rounds exactly (arithmetic, ``where``, ``clip``, casts, views,
  copies, ``argmax`` gathers) is bit-identical to eager;
* a math function (``exp``, ``tanh``) may differ by ``ULPS_MATH`` ulps and a sum or mean is
  a reordered sum (within ``2 (n - 1) eps sum|x|`` of NumPy's).  A program with such steps is
  held to the sum bound at its largest intermediate: ``|got - want| <= 2 n eps k S`` with
  ``n`` the most elements of any intermediate, ``k`` the inexact steps and ``S`` the largest
  magnitude of any intermediate (every ``eps``-relative difference a step makes is at most
  that, and the ops here amplify none by more than the sizes they sum over).

A step whose result jumps (``floor``, ``round``, a cast to int, ``sign``) turns a 1-ulp
difference into a unit: a generated program is cut before such a step once an inexact step
came before it (the contract bounds the difference, not where a jump lands).

numba compiles each new kernel (a fraction of a second), so the CI example count is small;
``HYPOTHESIS_PROFILE=thorough`` runs 300.
"""
import os
import sys

from repo_paths import TESTS

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

pytest.importorskip("numba")

import symshape as ss  # noqa: E402
from symshape import Dim  # noqa: E402
from test_numba_backend import layouts  # noqa: E402  (sets a private numba cache dir)
sys.path.insert(0, os.path.join(TESTS, "e2e"))   # the random-program generator's home
from test_random_programs import BY_NAME, make, programs, valid_shapes  # noqa: E402

#: steps whose result the contract lets differ from eager's by rounding
INEXACT = {"exp_tanh", "center", "softmax", "sum0", "gram", "cumsum", "var_std",
           "matmul_const", "mask_sum", "einsum_rows"}
#: steps whose result jumps where their input crosses a threshold
JUMPS = {"round_floor", "int_roundtrip", "clip_sign"}
LAYOUTS = ["C", "F", "T", "strided", "broadcast"]


def contract_ops(ops):
    """``ops`` up to the first jump that follows an inexact step."""
    seen_inexact = False
    for i, name in enumerate(ops):
        if name in JUMPS and seen_inexact:
            return ops[:i]
        seen_inexact |= name in INEXACT
    return ops


def in_layout(a: np.ndarray, layout: str) -> np.ndarray:
    """``a``'s values in ``layout``; ``broadcast`` repeats ``a``'s first entry along axis 0
    (a 0-stride, read-only view: the same array goes to eager and compiled)."""
    if layout == "broadcast":
        return np.broadcast_to(a[:1], a.shape)
    return layouts(a).get(layout, np.ascontiguousarray(a))


def tolerance(ops, x: np.ndarray) -> float:
    """The contract's bound for ``ops`` applied to ``x`` (0: bit-identical)."""
    k = sum(name in INEXACT for name in ops)
    if k == 0:
        return 0.0
    n, scale, y = x.size, float(np.abs(x).max(initial=0)), x
    for name in ops:
        y = BY_NAME[name][2](y)
        n = max(n, y.size)
        if y.dtype.kind == "f":
            scale = max(scale, float(np.abs(y).max(initial=0)))
    eps = float(np.finfo(x.dtype).eps)
    return 2 * max(n, 1) * eps * k * max(scale, 1.0)


def assert_contract(got, want, tol: float) -> None:
    assert got.shape == want.shape and got.dtype == want.dtype, (
        got.shape, got.dtype, want.shape, want.dtype)
    if tol == 0 or want.dtype.kind != "f":
        np.testing.assert_array_equal(got, want)
        return
    assert np.array_equal(np.isnan(got), np.isnan(want))
    err = np.abs(got.astype(np.float64) - want.astype(np.float64))
    err = np.where(np.isnan(want), 0.0, err)
    assert err.max(initial=0) <= tol, (err.max(), tol)


@settings(max_examples=300 if os.environ.get("HYPOTHESIS_PROFILE") == "thorough" else 12,
          deadline=None, derandomize=True, suppress_health_check=[HealthCheck.too_slow])
@given(programs(), st.sampled_from([np.float64, np.float32]), st.sampled_from(LAYOUTS))
def test_random_programs_numba_within_contract(prog, dtype, layout):
    shape, dynamic, ops, seed = prog
    ops = contract_ops(ops)
    rng = np.random.default_rng(seed)
    x = rng.standard_normal(shape).astype(dtype)
    f = make(ops)
    ep = ss.export(f, (x,), dynamic_shapes={
        "x": tuple(Dim.AUTO if d else None for d in dynamic)})
    c = ep.compile(backend="numba")
    for s in [shape, *valid_shapes(ep, rng, 2)]:
        xs = in_layout(rng.standard_normal(s).astype(dtype), layout)
        want = f(xs)
        try:
            got = c(xs)
        except ss.UserError:
            # only a residual guard may exclude a point inside the ranges (as module())
            assert ep.constraints.facts and s != shape, (ops, shape, s)
            continue
        assert_contract(got, want, tolerance(ops, xs))
