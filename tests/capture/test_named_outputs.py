"""A named tuple the program returns comes back with its type, as eager code gives it:
``out.loss`` works on ``ep.module()``, ``ep.compile()`` and ``ss.compile``, nested in lists and
dicts too.  A saved program names only NumPy's result types (loading never imports what a file
names), so a loaded one returns the same items as a plain tuple."""
import collections
import typing

import numpy as np

import symshape as ss

A = ss.Dim.AUTO
Out = collections.namedtuple("Out", ["loss", "grad"])


class Step(typing.NamedTuple):
    value: np.ndarray
    scale: float


def model(x):
    return Out(loss=(x * x).sum(), grad=2 * x)


def nested(x):
    return {"step": Step(x + 1, 0.5), "outs": [Out(x.sum(), x)]}


def _export(f, n=5):
    return ss.export(f, (np.arange(n, dtype=np.float64),), dynamic_shapes={"x": (A,)})


def test_module_returns_the_users_named_tuple():
    ep = _export(model)
    x = np.arange(7, dtype=np.float64)
    got, want = ep.module()(x), model(x)
    assert type(got) is Out and got._fields == ("loss", "grad")
    assert got.loss == want.loss and np.array_equal(got.grad, want.grad)


def test_compiled_forms_return_it_too():
    x = np.arange(9, dtype=np.float64)
    for run in (_export(model).compile(), ss.compile(model)):
        got = run(x)
        assert type(got) is Out and np.array_equal(got.grad, 2 * x)


def test_nested_named_tuples_keep_their_types():
    ep = _export(nested)
    x = np.arange(6, dtype=np.float64)
    got = ep.module()(x)
    assert type(got["step"]) is Step and got["step"].scale == 0.5
    assert np.array_equal(got["step"].value, x + 1)
    assert type(got["outs"][0]) is Out and got["outs"][0].loss == x.sum()


def test_numpys_results_still_keep_theirs():
    def f(x):
        return np.linalg.eigh(x @ x.T)
    ep = ss.export(f, (np.eye(3),))
    assert type(ep.module()(np.eye(3))).__name__ == "EighResult"


def test_a_loaded_program_returns_the_items_as_a_plain_tuple(tmp_path):
    ep = _export(model)
    ss.save(ep, tmp_path / "m.json")
    loaded = ss.load(tmp_path / "m.json")
    x = np.arange(4, dtype=np.float64)
    got = loaded.module()(x)
    assert type(got) is tuple and got[0] == (x * x).sum() and np.array_equal(got[1], 2 * x)


def test_two_classes_of_one_name_stay_apart():
    First = collections.namedtuple("Pair", ["a", "b"])
    Second = collections.namedtuple("Pair", ["a", "b"])
    ep1 = _export(lambda x: First(x, x + 1))
    ep2 = _export(lambda x: Second(x, x - 1))
    x = np.ones(3)
    assert type(ep1.module()(x)) is First and type(ep2.module()(x)) is Second
