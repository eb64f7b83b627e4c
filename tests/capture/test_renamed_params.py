"""Parameters named like what generated code uses (``type``, ``max``, ``np``, ``_ndarray``,
``s0``, the JIT dispatcher's ``_CNT`` / ``_ND0`` / ``_K0_0``) are renamed inside generated
code only: every message and recompile reason still says the user's name, and every backend
computes what eager NumPy computes."""
import ast
import builtins
import os
import shutil
import warnings

import numpy as np
import pytest

import symshape as ss
from symshape import Dim
from symshape.capture.ir import used_by_generated_code

A = Dim.AUTO
HAVE_CXX = shutil.which("g++") is not None or bool(os.environ.get("CXX"))


class Mixer:
    """A layer object whose forward takes parameters named like generated code's names:
    a pair of activations (``type``), a scale (``max``), a weight dict (``np``), a bias
    (``_ndarray``), a symbolic int (``s0``), a list (``_CNT``), an array (``_ND0``) and a
    float (``_K0_0``)."""

    def __init__(self, shift):
        self.shift = shift

    def __call__(self, type, max, np, _ndarray, s0, _CNT, _ND0, _K0_0):
        a, b = type
        h = (a + b) * max + np["w"] @ _ndarray
        return h[:s0] + _CNT[0][:s0] * _K0_0 - _ND0[:s0] + self.shift


NAMES = ("type", "max", "np", "_ndarray", "s0", "_CNT", "_ND0", "_K0_0")


def inputs(n=5, k=4, s=3, **change):
    rng = np.random.default_rng(n * 10 + k)
    v = dict(type=(rng.standard_normal(n), rng.standard_normal(n)), max=2,
             np={"w": rng.standard_normal((n, k))}, _ndarray=rng.standard_normal(k), s0=s,
             _CNT=[rng.standard_normal(n)], _ND0=rng.standard_normal(n), _K0_0=1.5)
    v.update(change)
    return v


model = Mixer(0.25)
SPEC = {"type": ((A,), (A,)), "max": None, "np": {"w": (A, A)}, "_ndarray": (A,),
        "s0": Dim.DYNAMIC, "_CNT": [(A,)], "_ND0": (A,), "_K0_0": None}

#: bad calls: (what changes, the user's name the message must say)
BAD = [
    (dict(type=(np.ones(5),)), "type"),
    (dict(type=(np.ones(5), np.ones(6))), "type[1]"),
    (dict(np={"v": np.ones((5, 4))}), "np"),
    (dict(np={"w": np.ones((5, 3))}), "np['w']"),
    (dict(_ndarray=np.ones(3)), "_ndarray"),
    (dict(_ndarray=np.ones(4, dtype=np.float32)), "_ndarray"),
    (dict(max=3), "max"),
    (dict(s0=2.0), "s0"),
    (dict(_CNT=np.ones(5)), "_CNT"),
    (dict(_CNT=[np.ones(2)]), "_CNT[0]"),
    (dict(_ND0=np.ones((5, 2))), "_ND0"),
    (dict(_K0_0=2.5), "_K0_0"),
    (dict(_K0_0="x"), "_K0_0"),
]


@pytest.fixture(scope="module")
def ep():
    return ss.export(model, (), inputs(), dynamic_shapes=SPEC)


def _runners(ep):
    out = [("module", ep.module()), ("numpy", ep.compile())]
    if HAVE_CXX:
        from symshape.codegen.cuda import compile_cupy
        from symshape.codegen.cuda.emulate import emulate
        out.append(("cupy (emulated)", emulate(compile_cupy(ep))))
    return out


def test_every_backend_computes_what_eager_computes(ep):
    for n, k, s in [(5, 4, 3), (7, 2, 1), (3, 6, 3)]:
        v = inputs(n, k, s)
        want = model(**v)
        for label, run in _runners(ep):
            np.testing.assert_allclose(run(**v), want, rtol=1e-6, err_msg=label)


def test_dask_computes_what_eager_computes(ep):
    da = pytest.importorskip("dask.array")
    v = inputs()
    fn = ep.compile(backend="dask")

    def wrap(x):
        if isinstance(x, np.ndarray):
            return da.from_array(x, chunks=2)
        if isinstance(x, (list, tuple)):
            return type(x)(wrap(y) for y in x)
        if isinstance(x, dict):
            return {k: wrap(y) for k, y in x.items()}
        return x
    got = fn(**{k: wrap(x) for k, x in v.items()})
    got = got.compute() if hasattr(got, "compute") else got
    np.testing.assert_allclose(got, model(**v), rtol=1e-6)


@pytest.mark.parametrize("change,name", BAD, ids=[n + ":" + ",".join(map(str, c.values()))[:20]
                                                  for c, n in BAD])
def test_messages_say_the_users_name(ep, change, name):
    v = inputs(**change)
    for label, run in _runners(ep):
        with pytest.raises(ss.UserError) as e:
            run(**v)
        text = str(e.value)
        assert name in text and "_p_" not in text, (label, text)


def test_the_generated_source_keeps_the_users_signature(ep):
    for src in (ep.module_source, ep.compile().source):
        assert "def mixer(type, max, np, _ndarray, s0, _CNT, _ND0, _K0_0)" in \
            src.replace("Mixer", "mixer").replace("__call__", "mixer") or \
            "(type, max, np, _ndarray, s0, _CNT, _ND0, _K0_0):" in src, src


# --------------------------------------------------------------------------- ss.compile
def test_ss_compile_runs_and_names_the_users_parameters():
    for dynamic in (None, True):
        cf = ss.compile(model, dynamic=dynamic)
        calls = [inputs(), inputs(), inputs(7, 4, 3), inputs(max=3), inputs(_K0_0=2.5),
                 inputs(_CNT=[np.ones(5), np.ones(5)]), inputs(s0=2)]
        for v in calls:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                np.testing.assert_allclose(cf(**v), model(**v), rtol=1e-6)
        # the user's list is never touched by the dispatcher's call counter
        v = inputs()
        before = v["_CNT"][0].copy()
        cf(**v)
        np.testing.assert_array_equal(v["_CNT"][0], before)
        assert cf.variants and sum(x.calls for x in cf.variants) >= 2
        text = "\n".join(cf.recompile_reasons) + cf.report()
        assert "_p_" not in text, text
        assert any("max" in r for r in cf.recompile_reasons), cf.recompile_reasons
        assert any("_K0_0" in r for r in cf.recompile_reasons), cf.recompile_reasons
        assert any("_CNT" in r for r in cf.recompile_reasons), cf.recompile_reasons


def test_ss_compile_frozen_miss_names_the_users_parameter():
    cf = ss.compile(model)
    cf(**inputs())
    cf.freeze()
    with pytest.raises(ss.UserError) as e:
        cf(**inputs(max=3))
    assert "max" in str(e.value) and "_p_" not in str(e.value)


def _names(src: str) -> set:
    tree = ast.parse(src)
    out = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Name):
            out.add(node.id)
        elif isinstance(node, ast.arg):
            out.add(node.arg)
        elif isinstance(node, ast.FunctionDef):
            out.add(node.name)
    return out


def test_a_parameter_never_shares_a_name_the_dispatcher_uses():
    # every name the dispatcher's body uses other than the (renamed) parameters and the
    # variables the input check gives array inputs is one that renames a parameter
    plain = Mixer(0.0)

    def forward(x, w, n, opts):
        return plain(x, 2, {"w": w}, np.ones(w.shape[1]), n, [x[0]], x[1], opts["k"])

    cf = ss.compile(forward)
    x, w = np.ones((2, 5)), np.ones((5, 4))
    cf(x, w, 3, {"k": 1.0})
    cf(np.ones((2, 6)), np.ones((6, 4)), 3, {"k": 1.0})
    cf(x, w, 3, {"k": 2.0})
    node_vars = {n.name for v in cf.variants for n in v.program.graph.inputs}
    for src in (cf.dispatch_source,):
        for name in _names(src) - {"x", "w", "n", "opts"} - node_vars:
            assert used_by_generated_code(name) or hasattr(builtins, name), name


@pytest.mark.parametrize("name", ["_", "_ss_self", "_ONCE", "_CNT", "_W", "_DRIVER",
                                  "_core0", "_ND0", "_K0_0", "_S0_0", "_r", "_a0", "_x_0",
                                  "_impl_call", "s0", "u0", "type", "np", "_rt"])
def test_every_dispatcher_name_is_renamed_when_a_parameter_has_it(name):
    assert used_by_generated_code(name)
    src = "def f(%s, y):\n    return %s * y + 1\n" % (name, name)
    ns = {}
    exec(src, ns)
    f = ns["f"]
    cf = ss.compile(f, dynamic=True)
    for n in (3, 4, 5):
        a, b = np.arange(n, dtype=float), np.ones(n)
        np.testing.assert_array_equal(cf(a, b), f(a, b))
        np.testing.assert_array_equal(a, np.arange(n, dtype=float))
    np.testing.assert_array_equal(cf(2.0, np.ones(3)), f(2.0, np.ones(3)))
    assert "_p_" not in "\n".join(cf.recompile_reasons) + cf.report()
    assert "def __call__(_ss_self, %s, y)" % name in cf.dispatch_source or name == "_ss_self"


# --------------------------------------------------------------------------- input paths
def test_dict_keys_that_look_like_subscripts_reach_their_leaves():
    # an input is reached by its parameter and typed keys, never by re-reading a path
    # text: keys holding brackets or quotes work like any other key
    def pool(feats, _r):
        return feats["a]b"] * _r + feats["c['d']"][0].sum()

    feats = {"a]b": np.arange(4.0), "c['d']": [np.ones((2, 3))]}
    ep = ss.export(pool, (feats, 2.0),
                   dynamic_shapes={"feats": {"a]b": (A,), "c['d']": [(A, A)]}, "_r": None})
    for run in (ep.module(), ep.compile()):
        np.testing.assert_array_equal(run(feats, 2.0), pool(feats, 2.0))
        other = {"a]b": np.arange(6.0), "c['d']": [np.ones((3, 5))]}
        np.testing.assert_array_equal(run(other, 2.0), pool(other, 2.0))
        with pytest.raises(ss.UserError, match=r"feats\[\"c\['d'\]\"\]\[0\]|c\['d'\]"):
            run({"a]b": np.arange(4.0), "c['d']": [np.ones(3)]}, 2.0)
        with pytest.raises(ss.UserError, match=r"input _r\b") as e:
            run(feats, 3.0)
        assert "_p_" not in str(e.value)
