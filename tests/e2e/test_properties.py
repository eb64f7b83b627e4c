"""Hypothesis properties across the whole pipeline:
  * random specs: a malformed spec raises UserError (never another exception);
  * random programs with random invalid inputs: rejected with UserError naming the axis;
  * random programs with named Dims on every dynamic axis: when export reports violations,
    applying the suggested fixes makes export succeed (the fixes round-trip).
"""
import os

import numpy as np
import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

import symshape as ss
from symshape import Dim
from symshape.capture.export import trace_program

from test_random_programs import make, programs

THOROUGH = os.environ.get("HYPOTHESIS_PROFILE") == "thorough"


def axis_specs():
    return st.one_of(
        st.none(), st.just(Dim.AUTO), st.just(Dim.DYNAMIC), st.just(Dim.STATIC),
        st.integers(-2, 9), st.sampled_from(["n", 2.5, object(), True]),
        st.builds(lambda lo, hi: Dim("d", min=lo, max=hi), st.integers(0, 6),
                  st.integers(2, 12)).filter(lambda d: True),
        st.builds(lambda k, b: k * Dim("r") + b, st.integers(1, 3), st.integers(-2, 3)))


def specs(ndim):
    per_input = st.one_of(
        st.none(),
        st.lists(axis_specs(), min_size=0, max_size=ndim + 1).map(tuple),
        st.dictionaries(st.integers(-3, 3), axis_specs(), max_size=3),
        axis_specs())
    return st.one_of(
        st.fixed_dictionaries({"x": per_input}),
        st.fixed_dictionaries({"x": per_input, "y": st.none()}),
        st.tuples(per_input),
        st.tuples(per_input, st.none()),
        st.sampled_from([None, "x", 3, ["x"]]))


def _safe_dim(lo, hi):
    try:
        return Dim("d", min=lo, max=hi)
    except ss.UserError:
        return None


@settings(max_examples=2000 if THOROUGH else 300, deadline=None, derandomize=True,
          suppress_health_check=[HealthCheck.too_slow])
@given(st.data())
def test_random_specs_raise_user_error_or_export(data):
    shape = data.draw(st.lists(st.integers(0, 6), min_size=1, max_size=3).map(tuple))
    try:
        spec = data.draw(specs(len(shape)))
    except ss.UserError:
        return                      # building the Dim itself was rejected: fine
    x = np.ones(shape)

    def f(x):
        return x * 2 + 1

    try:
        ep = ss.export(f, (x,), dynamic_shapes=spec)
    except ss.UserError as e:
        assert str(e)
        return
    np.testing.assert_array_equal(ep.module()(x), f(x))


@settings(max_examples=1000 if THOROUGH else 150, deadline=None, derandomize=True,
          suppress_health_check=[HealthCheck.too_slow])
@given(programs(), st.data())
def test_invalid_inputs_are_rejected_naming_the_axis(prog, data):
    shape, dynamic, ops, seed = prog
    spec = {"x": tuple(Dim.AUTO if d else None for d in dynamic)}
    f = make(ops)
    ep = trace_program(f, (np.ones(shape),), None, spec).program
    dims = ep.constraints.inputs[0].dims
    i = data.draw(st.integers(0, len(dims) - 1))
    d = dims[i]
    bad = list(shape)
    if isinstance(d, int):
        bad[i] = d + data.draw(st.sampled_from([1, -1]))
    else:
        s = d.as_symbol()
        assume(s is not None)
        lo = ep.constraints.ranges[s].lower
        assume(lo >= 1)
        bad[i] = lo - 1
    with pytest.raises(ss.UserError) as e:
        ep.module()(np.ones(bad))
    assert "x.shape[%d]" % i in str(e.value)


@settings(max_examples=600 if THOROUGH else 120, deadline=None, derandomize=True,
          suppress_health_check=[HealthCheck.too_slow])
@given(programs())
def test_suggested_fixes_round_trip(prog):
    shape, dynamic, ops, seed = prog
    assume(any(dynamic))
    spec = {"x": tuple(Dim("d%d" % i) if dyn else None for i, dyn in enumerate(dynamic))}
    f = make(ops)
    x = np.random.default_rng(seed).standard_normal(shape)
    try:
        ep = ss.export(f, (x,), dynamic_shapes=spec)
    except ss.ConstraintViolationError as e:
        assert e.suggested_fixes, str(e)
        fixed = spec
        for fix in e.suggested_fixes:
            fixed = fix.apply(fixed)
        ep = ss.export(f, (x,), dynamic_shapes=fixed)
    np.testing.assert_allclose(ep.module()(x), f(x), rtol=1e-12)
