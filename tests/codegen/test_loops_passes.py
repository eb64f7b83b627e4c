"""A ``for_loop`` node (a Python ``for`` over a symbolic count, issue 41) passes through the
graph-level passes that walk subgraphs: the NumPy backend (fusion, memory plan, in-place
writes), chunking, the cost estimate, the drawings, ``ss.explain`` and ``ss.compile``."""
import os

import numpy as np

import symshape as ss
from symshape.codegen.chunking import ChunkInfo
from symshape.codegen.cost import group_ns

RNG = np.random.default_rng(2)
W = RNG.standard_normal((4, 4)) * 0.4
U = RNG.standard_normal((4, 4)) * 0.4


def elman(x):
    h = np.zeros(4)
    outs = []
    for t in range(x.shape[0]):
        h = np.tanh(x[t] @ W + h @ U)
        outs.append(h)
    return np.exp(np.stack(outs)) * 2.0 + 1.0, h


def written(x):
    y = np.zeros_like(x)
    for t in range(x.shape[0]):
        y[t] = np.sin(x[t]) * 2.0 + 1.0
    return y + 1.0


def _same(got, want):
    got = got if isinstance(got, tuple) else (got,)
    want = want if isinstance(want, tuple) else (want,)
    for g, w in zip(got, want):
        assert np.shape(g) == np.shape(w)
        np.testing.assert_allclose(g, w, rtol=1e-12, atol=1e-12)


def _ep(f, lo):
    return ss.export(f, (RNG.standard_normal((5, 4)),),
                     dynamic_shapes={"x": {0: ss.Dim("T", min=lo)}})


def test_numpy_backend_compiles_the_loop_with_its_passes():
    for f, lo in ((elman, 1), (written, 0)):
        ep = _ep(f, lo)
        c = ep.compile()
        assert "for_loop" in c.source
        for n in sorted({lo, 1, 5, 37}):
            x = RNG.standard_normal((n, 4))
            _same(c(x), f(x))


def test_drawings_show_the_body(tmp_path):
    ep = _ep(elman, 1)
    for ext in ("svg", "dot", "html"):
        p = os.path.join(str(tmp_path), "loop." + ext)
        ep.draw(p)
        with open(p) as fh:
            assert "for_body_0" in fh.read()


def test_chunking_and_cost_see_the_loop_node():
    ep = _ep(elman, 1)
    info = ChunkInfo(ep.graph.nodes)
    loop = [n for n in ep.graph.nodes if n.op == "for_loop"][0]
    # the loop reads every row of x: it never runs chunk by chunk along T
    assert not info.local(loop, frozenset(info.symbol))
    assert group_ns([loop]) >= 0


def test_explain_and_ss_compile():
    x = RNG.standard_normal((5, 4))
    assert ss.explain(elman, x).graph_count == 1
    jf = ss.compile(elman, dynamic=True)
    for n in (3, 8, 20):
        x = RNG.standard_normal((n, 4))
        _same(jf(x), elman(x))
    assert len(jf.variants) == 1
