"""Differential fuzzing of ``to_onnx``: random programs from the random-program generator
(``test_random_programs``), exported with random dynamic axes, run in onnxruntime at several
admitted shapes against eager NumPy, and at violating shapes, where the model must fail
in-graph (a guard node, or onnxruntime's own rank / static-size check) as ``module()``
rejects the input."""
import glob
import importlib.util
import os

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings

import symshape as ss
from symshape import Dim
from symshape.capture.export import trace_program
from symshape.algebra.expr import evaluate

from onnx_compare import checked_model, feeds, same_results, session


def _generator():
    """The random-program generator's module, wherever the suite keeps it."""
    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    (path,) = glob.glob(os.path.join(root, "**", "test_random_programs.py"), recursive=True)
    spec = importlib.util.spec_from_file_location("_onnx_fuzz_random_programs", path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


G = _generator()


def violating_shapes(ep, shape):
    """Shapes of the one input outside the contract: a symbol just below its range or just
    above it, mapped through the input's dims."""
    (dims,) = [tuple(d) for d in [ep.constraints.inputs[0].dims]]
    roots = ep.constraints.roots()
    base = {s: ep.constraints.ranges[s].lower for s in roots}
    for s in roots:
        vr = ep.constraints.ranges[s]
        for v in (vr.lower - 1, vr.upper + 1 if isinstance(vr.upper, int) else None):
            if v is None or v < 0:
                continue
            vals = dict(base)
            vals[s] = v
            new = tuple(d if isinstance(d, int) else evaluate(d, vals) for d in dims)
            if all(n >= 0 for n in new):
                yield new


@settings(max_examples=3000 if os.environ.get("HYPOTHESIS_PROFILE") == "thorough" else 60,
          deadline=None, derandomize=True, suppress_health_check=[HealthCheck.too_slow])
@given(G.programs())
def test_random_programs_in_onnxruntime_match_eager(prog):
    shape, dynamic, ops, seed = prog
    rng = np.random.default_rng(seed)
    x = rng.standard_normal(shape)
    f = G.make(ops)
    tr = trace_program(f, (x,), None, {"x": tuple(Dim.AUTO if d else None for d in dynamic)})
    ep = tr.program
    model = checked_model(ep)
    s = session(model)
    same_results(s.run(None, feeds(model, (x,))), f(x), rtol=1e-9)
    for new_shape in G.valid_shapes(ep, rng, 3):
        x2 = rng.standard_normal(new_shape)
        try:
            ep.module()(x2)
        except ss.UserError:
            with pytest.raises(Exception, match="symshape guard failed"):
                s.run(None, feeds(model, (x2,)))
            continue
        same_results(s.run(None, feeds(model, (x2,))), f(x2), rtol=1e-9)
    for bad in violating_shapes(ep, shape):
        x3 = rng.standard_normal(bad)
        with pytest.raises(ss.UserError):
            ep.module()(x3)
        with pytest.raises(Exception, match="symshape guard failed|Got invalid dimensions"):
            s.run(None, feeds(model, (x3,)))
    with pytest.raises(Exception, match="Invalid rank"):
        s.run(None, {model.graph.input[0].name: rng.standard_normal(shape + (1,))})
