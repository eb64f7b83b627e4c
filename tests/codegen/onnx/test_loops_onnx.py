"""Loops over a symbolic count (issue 41) through ``ep.to_onnx()``: the ``for_loop`` node is
one ONNX ``Loop`` (trip count from the sizes, carried values loop-carried, appended rows
scan outputs), the model passes the strict checker and shape inference, and onnxruntime
matches eager NumPy at several counts, 0 included where the contract admits it; the
contract's guards stay in the graph."""
import numpy as np
import pytest

import symshape as ss

from loop_programs import cumulative, leapfrog, make_elman, nested, odd_rows
from loop_programs import written_plus_t as written
from onnx_compare import checked_model, feeds, same_results, session

RNG = np.random.default_rng(11)
W = RNG.standard_normal((4, 4)) * 0.4
U = RNG.standard_normal((4, 4)) * 0.4
T0 = ss.Dim("T", min=0)
T1 = ss.Dim("T", min=1)
elman = make_elman(W, U)


def backwards(x):
    acc = np.zeros(x.shape[1])
    outs = []
    for t in reversed(range(x.shape[0])):
        acc = 0.5 * acc + x[t]
        outs.append(acc * 2.0)
    return acc, np.stack(outs)


def offset(x):
    acc = x[0]
    for t in range(1, x.shape[0]):
        acc = np.maximum(acc, x[t] - x[t - 1])
    return acc


def _ops(model, op):
    return [n for n in model.graph.node if n.op_type == op]


def _run(ep, f, counts, make):
    model = checked_model(ep)
    assert len(_ops(model, "Loop")) == 1
    sess = session(model)
    for n in counts:
        args = make(n)
        got = sess.run(None, feeds(model, args, ep))
        same_results(got, f(*args), rtol=1e-12)
    return model


@pytest.mark.parametrize("f, dim, counts", [
    (elman, T1, (1, 2, 5, 37)),
    (cumulative, T0, (0, 1, 5, 37)),
    (written, T0, (0, 1, 5, 37)),
    (backwards, T1, (1, 2, 9)),
    (offset, ss.Dim("T", min=1), (1, 2, 6)),
], ids=lambda v: getattr(v, "__name__", None))
def test_loop_programs_match_eager(f, dim, counts):
    ep = ss.export(f, (RNG.standard_normal((5, 4)),), dynamic_shapes={"x": {0: dim}})
    _run(ep, f, counts, lambda n: (RNG.standard_normal((n, 4)),))


def test_count_from_an_integer_input():
    q, p = RNG.standard_normal(3), RNG.standard_normal(3)
    ep = ss.export(leapfrog, (q, p, 7, 0.1), dynamic_shapes={
        "q": None, "p": None, "n": ss.Dim("n", min=0), "dt": None})
    model = checked_model(ep)
    assert len(_ops(model, "Loop")) == 1
    sess = session(model)
    for n in (0, 1, 5, 30):
        got = sess.run(None, feeds(model, (q, p, n, 0.1), ep))
        same_results(got, leapfrog(q, p, n, 0.1), rtol=1e-12)


def test_scan_output_of_a_loop_that_does_not_run_has_its_row_shape():
    def stacked(x):
        outs = []
        for t in range(x.shape[0]):
            outs.append(x[t] * 2.0)
        return np.stack(outs)
    ep = ss.export(stacked, (RNG.standard_normal((5, 4)),), dynamic_shapes={"x": {0: T0}})
    model = checked_model(ep)
    got = session(model).run(None, feeds(model, (np.zeros((0, 4)),), ep))
    assert got[0].shape == (0, 4)


def test_the_contract_guard_stays_in_the_graph():
    ep = ss.export(cumulative, (RNG.standard_normal((5, 4)),),
                   dynamic_shapes={"x": {0: T0, 1: ss.Dim("K", min=2, max=6)}})
    model = checked_model(ep)
    sess = session(model)
    same_results(sess.run(None, feeds(model, (np.ones((3, 5)),), ep)),
                 cumulative(np.ones((3, 5))))
    with pytest.raises(Exception, match="symshape guard failed"):
        sess.run(None, feeds(model, (np.ones((3, 9)),), ep))


def test_backend_onnxruntime_runs_the_loop():
    ep = ss.export(elman, (RNG.standard_normal((5, 4)),), dynamic_shapes={"x": {0: T1}})
    c = ep.compile(backend="onnxruntime")
    for n in (1, 3, 20):
        x = RNG.standard_normal((n, 4))
        same_results(c(x), elman(x), rtol=1e-12)


def test_a_loop_inside_a_loop_is_a_loop_inside_the_body():
    ep = ss.export(nested, (RNG.standard_normal((5, 4)),),
                   dynamic_shapes={"x": {0: T0, 1: ss.Dim("K", min=1)}})
    model = checked_model(ep)
    (outer,) = _ops(model, "Loop")
    body = [a.g for a in outer.attribute if a.name == "body"][0]
    assert [n.op_type for n in body.node].count("Loop") == 1
    sess = session(model)
    for n, k in ((0, 3), (1, 1), (5, 3), (9, 6)):
        x = RNG.standard_normal((n, k))
        same_results(sess.run(None, feeds(model, (x,), ep)), nested(x), rtol=1e-12)


def test_a_step_and_a_start_other_than_0_and_1():
    ep = ss.export(odd_rows, (RNG.standard_normal((6, 3)),), dynamic_shapes={"x": {0: T0}})
    _run(ep, odd_rows, (0, 1, 2, 3, 6, 7), lambda n: (RNG.standard_normal((n, 3)),))
