"""Parameters left at a default that is not data (an activation function, a config object)
are part of the program: leaving them out works everywhere, passing another value is a
UserError, never silently ignored (also after save / load)."""
import functools

import numpy as np
import pytest

import symshape as ss


class Config:
    eps = 1e-5


def layer(x, act=np.tanh, cfg=Config(), scale=2.0):
    return act(x / (np.abs(x).max() + cfg.eps)) * scale


X = np.linspace(-1.0, 1.0, 6)


def test_function_and_object_defaults_are_not_inputs():
    ep = ss.export(layer, (X,), dynamic_shapes={"x": (ss.Dim.AUTO,)})
    for v in (X, np.linspace(-3.0, 2.0, 9)):
        np.testing.assert_array_equal(ep.module()(v), layer(v))
        np.testing.assert_array_equal(ep.compile()(v), layer(v))
        np.testing.assert_array_equal(ep.module()(v, scale=2.0), layer(v))


@pytest.mark.parametrize("runner", ["module", "compile", "loaded"])
def test_passing_another_value_is_refused(runner, tmp_path):
    ep = ss.export(layer, (X,), dynamic_shapes={"x": (ss.Dim.AUTO,)})
    if runner == "loaded":
        ss.save(ep, tmp_path / "layer.json")
        ep = ss.load(tmp_path / "layer.json")
    run = ep.compile() if runner == "compile" else ep.module()
    np.testing.assert_array_equal(run(X), layer(X))
    with pytest.raises(ss.UserError, match=r"argument act: .*tanh.*functools.partial"):
        run(X, np.exp)
    with pytest.raises(ss.UserError, match="argument cfg"):
        run(X, cfg=Config())


def test_partial_exports_another_configuration():
    f = functools.partial(layer, act=np.sin)
    ep = ss.export(f, (X,))
    np.testing.assert_array_equal(ep.module()(X), layer(X, np.sin))
