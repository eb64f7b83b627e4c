"""Value-dependent dtypes follow eager (issue 40, part 6): ``np.linalg.eig`` / ``eigvals`` of
a real matrix are real when every eigenvalue is real and complex otherwise.  The program
takes the example's dtype (a PCA through ``eig`` of a covariance matrix gives float64, as
eager NumPy does) and checks at run time that the values still give it: inputs of the other
kind raise ``ValueDependentDtypeError`` naming the user's line from ``ep.module()``,
``ep.compile()`` and a loaded program, and ``ss.compile`` runs that call eagerly (eager's
dtype).  Never a silently different dtype."""
import warnings

import numpy as np
import pytest

import symshape as ss
from eager_compare import same
from symshape.errors import ValueDependentDtypeError


def pca(X):
    C = np.cov(X.T)
    w, v = np.linalg.eig(C)
    return (X - X.mean(axis=0)) @ v, w


def eigvals(A):
    return np.linalg.eigvals(A) * 2.0


def eig_pair(A):
    return np.linalg.eig(A)


def _samples(n, seed=0):
    return np.random.default_rng(seed).normal(size=(n, 4))


def _symmetric(n, seed=0):
    m = np.random.default_rng(seed).normal(size=(n, n))
    return m + m.T


def _rotation_like(n, seed=0):
    """A matrix with complex eigenvalues (a 2-d rotation block in its top-left corner)."""
    m = _symmetric(n, seed) * 0.01
    m[:2, :2] += [[0.0, -1.0], [1.0, 0.0]]
    return m


RUNNERS = ["module", "compile", "loaded"]


def _runner(ep, kind, tmp_path):
    if kind == "module":
        return ep.module()
    if kind == "compile":
        return ep.compile(backend="numpy")
    path = str(tmp_path / "p.ssp")
    ss.save(ep, path)
    return ss.load(path).module()


def _export_square(f, example):
    n = ss.Dim("n")
    return ss.export(f, (example,), dynamic_shapes={"A": {0: n, 1: n}})


@pytest.mark.parametrize("kind", RUNNERS)
def test_pca_through_eig_is_real_as_eager(kind, tmp_path):
    ep = ss.export(pca, (_samples(20),), dynamic_shapes={"X": {0: ss.Dim("n")}})
    run = _runner(ep, kind, tmp_path)
    for n, seed in ((20, 0), (7, 1), (33, 2)):
        X = _samples(n, seed)
        got, want = run(X), pca(X)
        assert want[1].dtype == np.float64            # eager: every eigenvalue is real
        assert [g.dtype for g in got] == [w.dtype for w in want]
        np.testing.assert_allclose(got[0], want[0], rtol=1e-9, atol=1e-9)
        np.testing.assert_allclose(got[1], want[1], rtol=1e-9, atol=1e-9)


@pytest.mark.parametrize("kind", RUNNERS)
def test_real_example_refuses_complex_eigenvalues(kind, tmp_path):
    ep = _export_square(eigvals, _symmetric(4))
    run = _runner(ep, kind, tmp_path)
    for n in (4, 6, 3):
        same(run(_symmetric(n, n)), eigvals(_symmetric(n, n)))
    bad = _rotation_like(5)
    assert eigvals(bad).dtype == np.complex128
    with pytest.raises(ValueDependentDtypeError) as e:
        run(bad)
    msg = str(e.value)
    assert "test_eig_dtype.py:%d" % (eigvals.__code__.co_firstlineno + 1) in msg
    assert "eager NumPy returns complex128" in msg and "float64" in msg
    assert "np.linalg.eigvals(a + 0j)" in msg


@pytest.mark.parametrize("kind", RUNNERS)
def test_complex_example_refuses_real_eigenvalues(kind, tmp_path):
    ep = _export_square(eig_pair, _rotation_like(4))
    run = _runner(ep, kind, tmp_path)
    for n in (4, 7, 3):
        got, want = run(_rotation_like(n, n)), eig_pair(_rotation_like(n, n))
        assert type(got) is type(want)
        assert [g.dtype for g in got] == [np.complex128] * 2 == [w.dtype for w in want]
        np.testing.assert_allclose(got.eigenvalues, want.eigenvalues, rtol=1e-12)
    with pytest.raises(ValueDependentDtypeError, match="every eigenvalue is real for these "
                                                      "inputs, so eager NumPy returns float64"):
        run(_symmetric(5))


def test_ss_compile_runs_the_other_kind_eagerly():
    for f, first, other in ((eigvals, _symmetric, _rotation_like),
                            (eig_pair, _rotation_like, _symmetric)):
        run = ss.compile(f, dynamic=True)
        for make in (first, first, other, first):
            for n in (4, 6):
                got, want = run(make(n, n)), f(make(n, n))
                got = got if isinstance(got, tuple) else (got,)
                want = want if isinstance(want, tuple) else (want,)
                assert [g.dtype for g in got] == [w.dtype for w in want]
                for g, w in zip(got, want):
                    np.testing.assert_allclose(g, w, rtol=1e-9, atol=1e-12)


def test_batched_eig_and_named_fields():
    def f(A):
        r = np.linalg.eig(A)
        return r.eigenvalues.sum(axis=-1), r.eigenvectors

    stack = np.stack([_symmetric(3, 1), _symmetric(3, 2)])
    ep = ss.export(f, (stack,), dynamic_shapes={"A": {0: ss.Dim("b")}})
    for b in (2, 5):
        x = np.stack([_symmetric(3, s) for s in range(b)])
        got, want = ep.module()(x), f(x)
        assert [g.dtype for g in got] == [w.dtype for w in want] == [np.float64] * 2
    mixed = np.stack([_symmetric(3, 1), _rotation_like(3, 2)])
    with pytest.raises(ValueDependentDtypeError):
        ep.module()(mixed)


def test_complex_input_is_complex_without_a_check():
    def f(A):
        return np.linalg.eigvals(A.astype(np.complex128))

    ep = _export_square(f, _symmetric(4))
    for make in (_symmetric, _rotation_like):
        same(ep.module()(make(5)), f(make(5)))
    assert not any(n.op == "item" for n in ep.graph.nodes)


def test_float32_and_state_matrix():
    M = _symmetric(3, 7).astype(np.float32)

    def f(x):
        return np.linalg.eigvals(M + x)          # M: a global constant of the program

    ep = ss.export(f, (np.float32(0.5) * np.ones((3, 3), np.float32),))
    x = np.full((3, 3), 0.25, np.float32)
    same(ep.module()(x), f(x))
    assert f(x).dtype == np.float32


def test_a_matrix_the_trace_cannot_compute_is_refused_at_export():
    def f(x):
        m = np.random.default_rng(1).normal(size=(3, 3))
        return np.linalg.eigvals(m + x)

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with pytest.raises(ss.UserError) as e:
            ss.export(f, (np.ones((3, 3)),))
    msg = str(e.value)
    assert "test_eig_dtype.py:%d" % (f.__code__.co_firstlineno + 2) in msg
    assert "np.linalg.eigvals(a + 0j)" in msg and "eigvalsh" in msg


def test_a_global_random_draw_is_never_run_to_find_the_dtype():
    def f(x):
        return np.linalg.eigvals(np.random.normal(size=(3, 3)) + x)

    np.random.seed(3)
    state = np.random.get_state()[1].copy()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with pytest.raises(ss.UserError, match="cannot compute the matrix's value"):
            ss.export(f, (np.ones((3, 3)),))
    assert np.array_equal(np.random.get_state()[1], state)
