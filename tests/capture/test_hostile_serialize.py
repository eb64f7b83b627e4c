"""Hostile checks on save / load: a program whose arithmetic mixes sizes and floats
(``d ** -0.5``, ``1 / (n - 1)``) round-trips and still gives eager NumPy's values and dtypes;
a crafted float expression in a file is refused, never run."""
import json

import numpy as np
import pytest

import symshape as ss
from symshape.capture.serialize import _digest

A = ss.Dim.AUTO


def scaled(x):
    n, d = x.shape
    return x * d ** -0.5 + np.arange(n)[:, None] / (n - 1), -(1 / n) * x.sum()


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_size_float_arithmetic_round_trips(dtype, tmp_path):
    ep = ss.export(scaled, (np.ones((4, 3), dtype),), dynamic_shapes={"x": (A, A)})
    ss.save(ep, tmp_path / "p.json")
    loaded = ss.load(tmp_path / "p.json")
    for shape in [(4, 3), (7, 5), (2, 9)]:
        x = np.random.default_rng(0).random(shape).astype(dtype)
        for run in (loaded.module(), loaded.compile()):
            for o, r in zip(run(x), scaled(x)):
                o, r = np.asarray(o), np.asarray(r)
                assert o.dtype == r.dtype and o.shape == r.shape
                np.testing.assert_allclose(o, r, rtol=1e-6)


@pytest.mark.parametrize("bad", [["pow", [{"expr": "s1"}, 10 ** 9]], ["pow", [1.0]],
                                 ["exec", [1, 2]], ["add", [1, "s0"]]])
def test_crafted_float_expression_is_refused(bad, tmp_path):
    ep = ss.export(scaled, (np.ones((4, 3)),), dynamic_shapes={"x": (A, A)})
    ss.save(ep, tmp_path / "p.json", format="json")
    doc = json.loads((tmp_path / "p.json").read_text())
    good = json.dumps({"float_expr": ["pow", [{"expr": "s1"}, -0.5]]})
    text = json.dumps(doc["program"])
    assert good in text
    doc["program"] = json.loads(text.replace(good, json.dumps({"float_expr": bad})))
    doc["checksum"] = _digest(doc["program"])
    (tmp_path / "p.json").write_text(json.dumps(doc))
    with pytest.raises(ss.UserError, match="float expression|integer power|takes 2 arg|size"):
        ss.load(tmp_path / "p.json")


def scatter_counts(counts, idx):
    np.add.at(counts, idx, 1.0)
    return counts * 2


def test_ufunc_at_round_trips(tmp_path):
    ep = ss.export(scatter_counts, (np.zeros(5), np.array([0, 0, 2])),
                   dynamic_shapes={"counts": (A,), "idx": (A,)})
    ss.save(ep, tmp_path / "p.json")
    run = ss.load(tmp_path / "p.json").module()
    mine, eager = np.zeros(6), np.zeros(6)
    idx = np.array([1, 1, 1, 3])
    np.testing.assert_array_equal(run(mine, idx), scatter_counts(eager, idx))
    np.testing.assert_array_equal(mine, eager)


@pytest.mark.parametrize("name", ["system", "frompyfunc", "linalg", 7])
def test_a_ufunc_tag_names_only_numpy_ufuncs(name, tmp_path):
    ep = ss.export(scatter_counts, (np.zeros(5), np.array([0, 0, 2])),
                   dynamic_shapes={"counts": (A,), "idx": (A,)})
    ss.save(ep, tmp_path / "p.json", format="json")
    doc = json.loads((tmp_path / "p.json").read_text())
    text = json.dumps(doc["program"])
    assert '{"ufunc": "add"}' in text
    doc["program"] = json.loads(text.replace('{"ufunc": "add"}', json.dumps({"ufunc": name})))
    doc["checksum"] = _digest(doc["program"])
    (tmp_path / "p.json").write_text(json.dumps(doc))
    with pytest.raises(ss.UserError):
        ss.load(tmp_path / "p.json")
