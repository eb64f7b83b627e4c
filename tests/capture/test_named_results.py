"""NumPy's named-tuple results returned by the program keep their type and field names
(``np.linalg.svd(x).S``, ``slogdet(x).sign``...) through every runner: module(),
ep.compile() (NumPy, dask, the CuPy backend under the emulator), a save/load round trip and
ss.compile; compared with eager NumPy."""
import json
import warnings

import numpy as np
import pytest

import symshape as ss
from eager_compare import same
from runners import runner
from symshape import Dim
from symshape.capture.serialize import digest
from symshape.errors import UserError

A = Dim.AUTO


def svd(x):
    return np.linalg.svd(x)


def svd_thin(x):
    return np.linalg.svd(x, full_matrices=False)


def slogdet(x):
    return np.linalg.slogdet(x)


def eigh(x):
    return np.linalg.eigh(x)


def eig(x):
    return np.linalg.eig(x)


def qr(x):
    return np.linalg.qr(x)


def nested(x):
    return {"svd": np.linalg.svd(x), "pair": [np.linalg.qr(x), x.sum()]}


LINALG = [svd, svd_thin, slogdet, eigh, eig, qr]


def _square(n, seed):
    x = np.random.default_rng(seed).standard_normal((n, n))
    return x @ x.T + n * np.eye(n)


def _export(f, x):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return ss.export(f, (x,), dynamic_shapes={"x": (A, A)})


def _same_named(got, want):
    assert type(got) is type(want), (type(got), type(want))
    for field in type(want)._fields:
        same(getattr(got, field), getattr(want, field))


@pytest.mark.parametrize("kind", ["module", "compile", "loaded", "dask", "cupy"])
@pytest.mark.parametrize("f", LINALG, ids=lambda f: f.__name__)
def test_linalg_results_keep_their_type(f, kind, tmp_path):
    ep = _export(f, _square(4, 0))
    try:
        run = runner(ep, kind, tmp_path)
    except UserError as e:           # a backend that refuses an op says so at compile
        pytest.skip("%s: %s" % (kind, str(e).splitlines()[0]))
    for n in (4, 6, 3):
        x = _square(n, n)
        got = run(x)
        if kind == "dask":
            # dask's own decompositions may pick other signs for singular / eigen vectors:
            # the type, fields, shapes and dtypes are what this test is about
            got = type(got)(*(np.asarray(v.compute() if hasattr(v, "compute") else v)
                              for v in got))
            want = f(x)
            assert type(got) is type(want)
            for g, w in zip(got, want):
                assert g.shape == w.shape and g.dtype == w.dtype
            continue
        _same_named(got, f(x))


@pytest.mark.parametrize("f", LINALG, ids=lambda f: f.__name__)
def test_ss_compile_keeps_the_type(f):
    run = ss.compile(f, fullgraph=True)
    for n in (4, 5, 7):
        x = _square(n, n)
        _same_named(run(x), f(x))


def test_fields_by_name_and_nesting(tmp_path):
    ep = _export(nested, _square(4, 0))
    ss.save(ep, tmp_path / "p.json")
    x = _square(5, 1)
    want = nested(x)
    for run in (ep.module(), ep.compile(), ss.load(tmp_path / "p.json").module()):
        got = run(x)
        _same_named(got["svd"], want["svd"])
        _same_named(got["pair"][0], want["pair"][0])
        same(got["svd"].S, want["svd"].S)
        assert got["pair"][0].R.shape == (5, 5)


def test_unique_results_keep_their_type(tmp_path):
    def f(x):
        return np.unique_counts(x), np.unique_inverse(x), np.unique_all(x)

    x = np.array([3, 1, 3, 2, 1, 3])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        ep = ss.export(f, (x,), dynamic_shapes={"x": (A,)})
    for kind in ("module", "compile", "loaded"):
        run = runner(ep, kind, tmp_path)
        for v in (x, np.array([5, 5, 4, 0, 0, 0, 7, 1])):
            for g, w in zip(run(v), f(v)):
                _same_named(g, w)


def test_printed_graph_names_the_type():
    text = str(_export(svd, _square(3, 0)).graph)
    assert "return SVDResult(" in text


def _saved(tmp_path, f=slogdet):
    ss.save(_export(f, _square(3, 0)), tmp_path / "p.json", format="json")
    return json.loads((tmp_path / "p.json").read_text())


def _write_signed(path, doc):
    doc["checksum"] = digest(doc["program"])      # re-signed, as a hostile author would
    path.write_text(json.dumps(doc))


def _find_named(j):
    if isinstance(j, dict):
        if "namedtuple" in j:
            return j
        for v in j.values():
            found = _find_named(v)
            if found is not None:
                return found
    elif isinstance(j, list):
        for v in j:
            found = _find_named(v)
            if found is not None:
                return found
    return None


@pytest.mark.parametrize("name", ["os.system", "collections.OrderedDict", "tuple", "",
                                  "__builtins__", 3, None])
def test_load_resolves_only_numpy_result_types(tmp_path, name):
    saved = _saved(tmp_path)
    spec = _find_named(saved)
    assert spec["namedtuple"][0] == "SlogdetResult"
    spec["namedtuple"][0] = name
    _write_signed(tmp_path / "bad.json", saved)
    with pytest.raises(UserError, match="unknown result type"):
        ss.load(tmp_path / "bad.json")


def test_load_refuses_a_wrong_field_count(tmp_path):
    saved = _saved(tmp_path)
    spec = _find_named(saved)
    spec["namedtuple"][1].append(None)
    _write_signed(tmp_path / "bad.json", saved)
    with pytest.raises(UserError, match="SlogdetResult has 2 fields"):
        ss.load(tmp_path / "bad.json")


def test_ss_compile_across_a_graph_break():
    def f(x):
        y = x * 2
        if float(y.sum()) > 0:          # a value branch: ss.compile runs f in pieces
            y = y + 1
        return np.linalg.svd(y), {"qr": np.linalg.qr(y), "slogdet": np.linalg.slogdet(x)}

    run = ss.compile(f)
    for n in (4, 5, 6):
        x = _square(n, n)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            got = run(x)
        want = f(x)
        _same_named(got[0], want[0])
        for k in ("qr", "slogdet"):
            _same_named(got[1][k], want[1][k])
