"""Random programs from the op catalogue with random dynamic specs (Hypothesis).

Each example draws an input shape, which axes are Dim.AUTO, and a sequence of ops that are
valid for the running example shape.  Properties:
  * export succeeds and ``module()`` equals eager NumPy on the example;
  * on random *valid* inputs (symbol values drawn inside ``range_constraints`` and mapped
    through ``input_shapes``) ``module()`` equals eager NumPy, or rejects the input with a
    ``UserError`` only when a recorded guard excludes it;
  * a wrong rank is always rejected with a ``UserError`` naming the input.
"""
import os

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import symshape as ss
from symshape import Dim
from symshape.capture.export import trace_program
from symshape.algebra.expr import evaluate

# (name, applicable(shape), fn) -- fn must be valid NumPy for every shape it is applied to
OPS = [
    ("affine", lambda s: True, lambda x: x * 2.0 + 1.0),
    ("exp_tanh", lambda s: True, lambda x: np.tanh(np.exp(-np.abs(x)))),
    ("relu", lambda s: True, lambda x: np.maximum(x, 0)),
    ("where", lambda s: True, lambda x: np.where(x > 0, x, -x)),
    ("center", lambda s: len(s) >= 1, lambda x: x - x.mean(axis=-1, keepdims=True)),
    ("softmax", lambda s: len(s) >= 1, lambda x: np.exp(x - x.max(axis=-1, keepdims=True))
     / np.exp(x - x.max(axis=-1, keepdims=True)).sum(axis=-1, keepdims=True)),
    ("sum0", lambda s: len(s) >= 2, lambda x: x.sum(axis=0)),
    ("transpose", lambda s: len(s) >= 2, lambda x: x.T),
    ("flatten", lambda s: len(s) >= 2, lambda x: x.reshape(-1)),
    ("drop_first", lambda s: len(s) >= 1 and s[0] >= 2, lambda x: x[1:]),
    ("head2", lambda s: len(s) >= 1, lambda x: x[:2]),
    ("stride2", lambda s: len(s) >= 1, lambda x: x[::2]),
    ("reverse", lambda s: len(s) >= 1, lambda x: x[::-1]),
    ("last_col", lambda s: len(s) >= 2, lambda x: x[:, -1:]),
    ("concat", lambda s: len(s) >= 1, lambda x: np.concatenate([x, x * 0.5], axis=-1)),
    ("expand", lambda s: len(s) <= 3, lambda x: x[None] + 1.0),
    ("squeeze_back", lambda s: len(s) >= 1, lambda x: np.squeeze(x[..., None], -1)),
    ("gram", lambda s: len(s) == 2, lambda x: x @ x.T),
    ("cumsum", lambda s: len(s) >= 1, lambda x: np.cumsum(x, axis=-1)),
    ("pad", lambda s: len(s) >= 1, lambda x: np.pad(x, [(0, 0)] * (x.ndim - 1) + [(1, 2)])),
    ("flip", lambda s: True, lambda x: np.flip(x)),
    ("tile", lambda s: len(s) >= 1, lambda x: np.tile(x, 2)),
    ("broadcast_row", lambda s: len(s) >= 2, lambda x: x + x[:1]),
    ("clip_sign", lambda s: True, lambda x: np.clip(x, -0.5, 0.5) + np.sign(x)),
    ("round_floor", lambda s: True, lambda x: np.round(x, 1) + np.floor(x) - np.ceil(x)),
    ("int_roundtrip", lambda s: True, lambda x: (x * 10).astype(np.int64) // 3 + 0.5),
    ("isfinite", lambda s: True, lambda x: np.where(np.isfinite(x) & ~np.isnan(x), x, 0.0)),
    ("swapaxes", lambda s: len(s) >= 2, lambda x: np.swapaxes(x, 0, -1)),
    ("moveaxis", lambda s: len(s) >= 3, lambda x: np.moveaxis(x, 0, -1)),
    ("stack", lambda s: len(s) <= 3, lambda x: np.stack([x, -x], axis=-1)),
    ("argmax_gather", lambda s: len(s) == 2,
     lambda x: np.take_along_axis(x, x.argmax(axis=1)[:, None], axis=1)),
    ("einsum_rows", lambda s: len(s) == 2, lambda x: np.einsum("ij,kj->ik", x, x)),
    ("take_first", lambda s: len(s) >= 1, lambda x: np.take(x, np.array([0, 0]), axis=0)),
    ("split_half", lambda s: len(s) >= 1 and s[0] % 2 == 0,
     lambda x: np.split(x, 2)[1] * 3.0),
    ("array_split", lambda s: len(s) >= 1 and s[0] >= 3,
     lambda x: np.concatenate(np.array_split(x, 3)[::-1])),
    ("roll", lambda s: True, lambda x: np.roll(x, 1)),
    ("var_std", lambda s: len(s) >= 1,
     lambda x: x.var(axis=-1, keepdims=True) + x.std(axis=-1, keepdims=True) + x),
    ("matmul_const", lambda s: len(s) >= 1 and s[-1] == 3, lambda x: x @ np.ones((3, 2))),
    ("mask_sum", lambda s: True, lambda x: x * x[x > 0].sum()),
]
NAMES = [o[0] for o in OPS]
BY_NAME = {o[0]: o for o in OPS}


@st.composite
def programs(draw):
    rank = draw(st.integers(1, 3))
    shape = tuple(draw(st.integers(2, 5)) for _ in range(rank))
    dynamic = tuple(draw(st.booleans()) for _ in range(rank))
    n = draw(st.integers(1, 5))
    ops = []
    probe = np.zeros(shape)
    for _ in range(n):
        ok = [name for name, app, _ in OPS if app(probe.shape) and probe.size <= 4096]
        if not ok:
            break
        name = draw(st.sampled_from(ok))
        probe = BY_NAME[name][2](probe)
        ops.append(name)
    seed = draw(st.integers(0, 2 ** 16))
    return shape, dynamic, ops, seed


def make(ops):
    fns = [BY_NAME[n][2] for n in ops]

    def f(x):
        for fn in fns:
            x = fn(x)
        return x
    return f


def valid_shapes(ep, rng, count: int):
    """``count`` shapes of ``ep``'s one input with every size symbol drawn inside its range
    (at most 6 above its lower bound)."""
    (dims,) = [tuple(d) for d in [ep.constraints.inputs[0].dims]]
    roots = ep.constraints.roots()
    for _ in range(count):
        vals = {}
        for s in roots:
            vr = ep.constraints.ranges[s]
            hi = vr.upper if isinstance(vr.upper, int) else vr.lower + 6
            vals[s] = int(rng.integers(vr.lower, min(hi, vr.lower + 6) + 1))
        yield tuple(d if isinstance(d, int) else evaluate(d, vals) for d in dims)


def _same(a, b):
    assert a.shape == b.shape and a.dtype == b.dtype
    np.testing.assert_allclose(a, b, rtol=1e-12, atol=1e-12)


@settings(max_examples=5000 if os.environ.get("HYPOTHESIS_PROFILE") == "thorough" else 500,
          deadline=None, derandomize=True,
          suppress_health_check=[HealthCheck.too_slow])
@given(programs())
def test_random_programs_match_eager(prog):
    shape, dynamic, ops, seed = prog
    rng = np.random.default_rng(seed)
    x = rng.standard_normal(shape)
    spec = {"x": tuple(Dim.AUTO if d else None for d in dynamic)}
    f = make(ops)
    tr = trace_program(f, (x,), None, spec)
    assert not tr.report.violations
    ep = tr.program
    m = ep.module()
    _same(m(x), f(x))
    # random valid inputs: symbol values inside their ranges
    for new_shape in valid_shapes(ep, rng, 3):
        x2 = rng.standard_normal(new_shape)
        try:
            got = m(x2)
        except ss.UserError as e:
            # only a residual guard may exclude a point inside the ranges
            assert ep.constraints.facts, (ops, shape, new_shape, str(e))
            continue
        _same(got, f(x2))
    with pytest.raises(ss.UserError, match="input x"):
        m(rng.standard_normal(shape + (1,)))
