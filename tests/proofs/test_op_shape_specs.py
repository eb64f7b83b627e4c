"""The NumPy shapes the op shape proofs compare against (``proofs/numpy_shapes.py``) agree
with real NumPy on concrete shapes: each spec, given ints, gives the shapes NumPy returns,
and its conditions hold exactly when NumPy accepts the call.  Also: shape rules that
accepted calls NumPy rejects (found while generalizing the proofs) now refuse them."""
from repo_paths import REPO
import itertools
import sys

import numpy as np
import pytest

ROOT = REPO
if ROOT not in sys.path:          # proofs/ lives at the top of the repository
    sys.path.insert(0, ROOT)

import symshape as ss  # noqa: E402
from proofs import numpy_shapes as N  # noqa: E402

A = ss.Dim.AUTO


def _agree(spec, call):
    """``spec()`` -> (shapes, conditions) against ``call()`` run by NumPy."""
    shapes, ok = spec()
    try:
        got = call()
    except (ValueError, IndexError, np.exceptions.AxisError):
        assert not all(ok), "NumPy rejects the call, every condition holds"
        return
    assert all(ok), "NumPy accepts the call, a condition fails: %s" % (ok,)
    got = got if isinstance(got, (tuple, list)) else (got,)
    assert [tuple(np.shape(g)) for g in got] == [tuple(s) for s in shapes]


SHAPES = [(), (0,), (1,), (5,), (3, 0), (3, 4), (1, 4, 2), (2, 3, 1, 4)]


@pytest.mark.parametrize("shape", SHAPES, ids=str)
def test_reductions_and_axes(shape):
    x = np.ones(shape)
    r = len(shape)
    axes = [None] + list(range(-r, r)) + [c for c in itertools.combinations(range(r), 2)]
    for axis, keep in itertools.product(axes, (False, True)):
        _agree(lambda: N.reduction(shape, axis, keep),
               lambda: np.sum(x, axis=axis, keepdims=keep))
        if axis is None or type(axis) is int:
            _agree(lambda: N.arg_reduction(shape, axis, keep),
                   lambda: np.argmax(x, axis=axis, keepdims=keep))
    for axis in [None] + list(range(-r, r)):
        if r:
            _agree(lambda: N.along_axis(shape, axis), lambda: np.cumsum(x, axis=axis))
            _agree(lambda: N.along_axis(shape, axis), lambda: np.argsort(x, axis=axis))
    for axis, n in itertools.product(range(-r, r), range(4)):
        _agree(lambda: N.diff(shape, n, axis), lambda: np.diff(x, n=n, axis=axis))


@pytest.mark.parametrize("shape", SHAPES, ids=str)
def test_permutations_expand_squeeze(shape):
    x = np.ones(shape)
    r = len(shape)
    for p in itertools.permutations(range(r)):
        _agree(lambda: N.transpose(shape, p), lambda: np.transpose(x, p))
    _agree(lambda: N.transpose(shape, None), lambda: np.transpose(x))
    for i, j in itertools.product(range(-r, r), repeat=2):
        _agree(lambda: N.swapaxes(shape, i, j), lambda: np.swapaxes(x, i, j))
        _agree(lambda: N.moveaxis(shape, i, j), lambda: np.moveaxis(x, i, j))
    for a in list(range(-r - 1, r + 1)) + [(0, -1)]:
        _agree(lambda: N.expand_dims(shape, a), lambda: np.expand_dims(x, a))
    _agree(lambda: N.squeeze(shape, None), lambda: np.squeeze(x))
    for a in range(-r, r):
        _agree(lambda: N.squeeze(shape, a), lambda: np.squeeze(x, a))


@pytest.mark.parametrize("shape", [s for s in SHAPES if s], ids=str)
def test_join_split_index(shape):
    x = np.ones(shape)
    r = len(shape)
    for axis in [None] + list(range(-r, r)):
        _agree(lambda: N.concatenate([shape, shape], axis),
               lambda: np.concatenate([x, x], axis=axis))
        _agree(lambda: N.repeat(shape, 2, axis), lambda: np.repeat(x, 2, axis=axis))
        if x.size:          # index 0 on an empty axis is a value error, not a shape one
            _agree(lambda: N.take(shape, (2, 1), axis),
                   lambda: np.take(x, np.zeros((2, 1), int), axis=axis))
    for axis in range(-r, r):
        for k in (1, 2, 3):
            _agree(lambda: N.split_sections(N.INTS, shape, k, axis),
                   lambda: np.split(x, k, axis=axis))
            _agree(lambda: N.array_split_sections(N.INTS, shape, k, axis),
                   lambda: np.array_split(x, k, axis=axis))
        for pts in ((1, 3), (-2, -1), (4, 9), (3, -4)):
            _agree(lambda: N.split_indices(shape, pts, axis),
                   lambda: np.split(x, list(pts), axis=axis))
        ishape = tuple(1 if i != axis % r else 2 for i in range(r))
        if x.size:
            _agree(lambda: N.take_along_axis(shape, ishape, axis),
                   lambda: np.take_along_axis(x, np.zeros(ishape, int), axis))
    for pos, v, step in itertools.product(range(r), (-6, -1, 0, 2, 7), (1, 2, -1, -3)):
        for items in ((slice(None),) * pos + (v,), (slice(None),) * pos + (None, v),
                      (Ellipsis, slice(v, -1, step)), (slice(1, v, step), Ellipsis)):
            _agree(lambda: N.basic_index(shape, items), lambda: x[items])
    for w in (2, (1, 3), tuple((k, k + 1) for k in range(r))):
        _agree(lambda: N.pad(shape, w), lambda: np.pad(x, w))


@pytest.mark.parametrize("a,b", list(itertools.product([(3,), (1,), (2, 3), (4, 1, 3)],
                                                       [(3,), (3, 5), (2, 3, 2), (1, 3)])))
def test_products_and_broadcasting(a, b):
    x, y = np.ones(a), np.ones(b)
    _agree(lambda: N.dot(a, b), lambda: np.dot(x, y))
    _agree(lambda: N.broadcast(a, b), lambda: x + y)
    _agree(lambda: N.outer(a, b), lambda: np.outer(x, y))
    _agree(lambda: N.inner(a, b), lambda: np.inner(x, y))
    _agree(lambda: N.kron(a, b), lambda: np.kron(x, y))
    for k in range(0, min(len(a), len(b)) + 1):
        _agree(lambda: N.tensordot(a, b, k), lambda: np.tensordot(x, y, axes=k))


@pytest.mark.parametrize("a,b", list(itertools.product(
    [(3,), (1,), (2, 3), (4, 1, 3), (2, 1, 2, 3), (5, 2, 3)],
    [(3,), (3, 5), (2, 3, 2), (1, 3, 4), (4, 1, 3, 2), (2, 2)])))
def test_matmul(a, b):
    x, y = np.ones(a), np.ones(b)
    _agree(lambda: N.matmul(a, b), lambda: x @ y)


@pytest.mark.parametrize("c", [(), (1,), (3,), (2, 1), (4, 1, 3)], ids=str)
def test_three_operand_broadcasting(c):
    for a, b in itertools.product([(), (3,), (1,), (2, 3), (1, 1, 3), (5, 1, 1)], repeat=2):
        x, y, z = np.ones(c), np.ones(a), np.ones(b)
        _agree(lambda: N.broadcast(c, a, b), lambda: np.where(x > 0, y, z))
        _agree(lambda: N.broadcast(c, a, b), lambda: np.clip(x, y, z))


EINSUM = [("ij,jk->ik", [(2, 3), (3, 4)]), ("ij,jk", [(2, 3), (4, 5)]), ("ji", [(2, 3)]),
          ("ii->i", [(3, 3)]), ("ii->i", [(1, 3)]), ("ii", [(3, 3)]), ("iij->ji", [(2, 2, 3)]),
          ("i,i->i", [(1,), (3,)]), ("i,i", [(2,), (3,)]), ("ij->", [(2, 3)]),
          ("i,j->ij", [(2,), (3,)]), ("ki,ij", [(2, 3), (3, 4)]), (",i", [(), (3,)]),
          ("bij,bjk->bik", [(2, 3, 4), (1, 4, 5)]), ("...ij,...jk", [(2, 3, 4), (4, 5)]),
          ("...i,...i", [(1, 3), (2, 3)]), ("...i,...i", [(2, 3), (4, 3)]),
          ("i...->...i", [(2, 3, 4)]), ("...", [()]), ("ij,jk,kl->li", [(2, 3), (3, 4), (4, 5)]),
          ("iji->j", [(2, 3, 2)]), ("iji->j", [(2, 3, 3)])]


@pytest.mark.parametrize("sub,shapes", EINSUM, ids=[e[0] for e in EINSUM])
def test_einsum(sub, shapes):
    _agree(lambda: N.einsum(sub, shapes),
           lambda: np.einsum(sub, *[np.ones(s) for s in shapes]))


@pytest.mark.parametrize("shape", SHAPES, ids=str)
def test_ravel_and_atleast(shape):
    x = np.ones(shape)
    for f in (np.ravel, lambda x: x.reshape(-1), lambda x: x.flatten()):
        _agree(lambda: N.ravel(shape), lambda: f(x))
    for nd, f in ((1, np.atleast_1d), (2, np.atleast_2d), (3, np.atleast_3d)):
        _agree(lambda: N.atleast_nd([shape], nd), lambda: f(x))
        _agree(lambda: N.atleast_nd([shape, (), (3,)], nd), lambda: f(x, np.ones(()), np.ones(3)))


def test_arange_and_meshgrid():
    for a, b, step in itertools.product(range(-6, 7, 3), range(-7, 8, 2), (-4, -3, -1, 1, 2, 4)):
        _agree(lambda: N.arange(N.INTS, a, b, step), lambda: np.arange(a, b, step))
    for shapes in ([(2,)], [(2,), (3,)], [(2,), (3,), (4,)], [(2, 3), ()], [(0,), (3,)]):
        xs = [np.ones(s) for s in shapes]
        for ix, sp in itertools.product(("xy", "ij"), (False, True)):
            _agree(lambda: N.meshgrid(shapes, ix, sp),
                   lambda: tuple(np.meshgrid(*xs, indexing=ix, sparse=sp)))


@pytest.mark.parametrize("shape", [(3, 4), (4, 2, 3), (2, 3, 4, 5)], ids=str)
def test_diagonal(shape):
    x = np.ones(shape)
    r = len(shape)
    for a1, a2 in itertools.permutations(range(-r, r), 2):
        for off in range(-5, 6):
            if a1 % r == a2 % r:
                continue
            _agree(lambda: N.diagonal(shape, off, a1, a2),
                   lambda: np.diagonal(x, off, a1, a2))


# ------------------------------------------------------------------- rules that were wrong
@pytest.mark.parametrize("f,x", [
    (lambda x: np.diff(x, n=-1), np.ones(5)),                       # grew the axis
    (lambda x: np.diagonal(x, axis1=2, axis2=1), np.ones((4, 5))),  # axis wrapped around
    (lambda x: np.diagonal(x, axis1=-3, axis2=1), np.ones((4, 5))),
    (lambda x: np.repeat(x, -1, axis=0), np.ones((4, 5))),          # negative size
    (lambda x: np.tile(x, (2, -1)), np.ones((4, 5))),
], ids=["diff-negative-n", "diagonal-axis-past-rank", "diagonal-axis-below-rank",
        "repeat-negative", "tile-negative"])
def test_calls_numpy_rejects_are_refused_at_export(f, x):
    with pytest.raises((ValueError, np.exceptions.AxisError)):
        f(x)
    with pytest.raises(ss.UserError):
        ss.export(f, (x,), dynamic_shapes={"x": tuple(A for _ in x.shape)})


def test_histogram_with_empty_edges_is_not_admitted():
    """np.histogram(x, bins=edges) with a symbolic number of edges: the count is edges - 1,
    which an empty edges array made -1 (NumPy gives 0); the contract now requires an edge."""
    def f(x, e):
        return np.histogram(x, bins=e)
    x, e = np.ones(5), np.arange(4.0)
    ep = ss.export(f, (x, e), dynamic_shapes={"x": (A,), "e": (A,)})
    for n in (2, 3, 7):
        edges = np.arange(float(n))
        assert [r.shape for r in ep.module()(x, edges)] == [r.shape for r in f(x, edges)]
    with pytest.raises(ss.UserError):
        ss.export(f, (x, e), dynamic_shapes={"x": (A,), "e": (ss.Dim("e", min=0),)})


@pytest.mark.parametrize("f", [lambda x: np.hstack(x), lambda x: np.vstack(x),
                               lambda x: np.dstack(x), lambda x: np.concatenate(x),
                               lambda x: np.stack(x)],
                         ids=["hstack", "vstack", "dstack", "concatenate", "stack"])
def test_joining_the_rows_of_an_array_needs_a_row(f):
    """One array where NumPy wants a sequence is its rows: with none, NumPy raises, so an
    axis that may be 0 is refused (it was admitted, with a shape NumPy never gives)."""
    with pytest.raises(ValueError):
        f(np.ones((0, 3)))
    x = np.ones((4, 3))
    ep = ss.export(f, (x,), dynamic_shapes={"x": (A, A)})
    for n in (2, 5):
        assert ep.module()(np.ones((n, 3))).shape == f(np.ones((n, 3))).shape
    with pytest.raises(ss.UserError) as e:
        ss.export(f, (x,), dynamic_shapes={"x": (ss.Dim("n", min=0), A)})
    assert "x.shape[0]" in str(e.value) or "rows" in str(e.value) or "n" in str(e.value)


@pytest.mark.parametrize("f", [lambda x: np.nanmax(x, axis=0), lambda x: np.nanmin(x),
                               lambda x: np.nanargmin(x, axis=-2),
                               lambda x: np.nanargmax(x, axis=0, keepdims=True),
                               lambda x: np.percentile(x, 50, axis=0),
                               lambda x: np.quantile(x, [0.2, 0.5], axis=(0, 1))],
                         ids=["nanmax", "nanmin-all", "nanargmin", "nanargmax", "percentile",
                              "quantile"])
@pytest.mark.filterwarnings("ignore::RuntimeWarning")     # NumPy's "Mean of empty slice"
def test_reduction_needing_elements_refuses_an_empty_extent(f):
    """NumPy raises on an empty reduced extent of these (no identity; quantiles index the
    last element): an axis that may be 0 was admitted and the program raised NumPy's error
    at run time; it is now a guard, as for np.max."""
    with pytest.raises((ValueError, IndexError)):
        f(np.ones((0, 3)))
    x = np.ones((4, 3))
    ep = ss.export(f, (x,), dynamic_shapes={"x": (ss.Dim("n", min=1), A)})
    for n in (1, 2, 5):
        y = np.arange(n * 3.0).reshape(n, 3)
        assert np.array_equal(ep.module()(y), f(y))
    with pytest.raises(ss.ConstraintViolationError):
        ss.export(f, (x,), dynamic_shapes={"x": (ss.Dim("n", min=0), A)})
    # the NaN-quantiles and the reductions with an identity accept it, as NumPy does
    g = lambda x: np.nanpercentile(x, 50, axis=0) + np.nanmean(x, axis=0)  # noqa: E731
    ep = ss.export(g, (x,), dynamic_shapes={"x": (ss.Dim("n", min=0), A)})
    assert ep.module()(np.ones((0, 3))).shape == (3,)


@pytest.mark.parametrize("axis", [0, -1, (0, 1)], ids=str)
def test_average_refuses_an_empty_result(axis):
    """np.average without weights divides a.size by the result's size: NumPy raises
    ZeroDivisionError when the result is empty, where the contract admitted it."""
    f = lambda x: np.average(x, axis=axis)  # noqa: E731
    x = np.ones((4, 3, 2))
    with pytest.raises(ZeroDivisionError):
        f(np.ones((4, 0, 2)) if axis != (0, 1) else np.ones((4, 3, 0)))
    ep = ss.export(f, (x,), dynamic_shapes={"x": (A, A, A)})
    y = np.arange(5 * 3 * 2.0).reshape(5, 3, 2)
    assert np.array_equal(ep.module()(y), f(y))
    D = [ss.Dim("a", min=0), ss.Dim("b", min=0), ss.Dim("c", min=0)]
    with pytest.raises(ss.ConstraintViolationError):
        ss.export(f, (x,), dynamic_shapes={"x": tuple(D)})


def test_partition_spec():
    for n, kth, axis in itertools.product((0, 1, 2, 3), (0, 2, -1, -3, [1, -3]), (0, -1, None)):
        x = np.ones((n, 2))
        _agree(lambda: N.partition(x.shape, kth, axis), lambda: np.argpartition(x, kth, axis))


@pytest.mark.parametrize("f", [lambda x: np.partition(x, 2, axis=0),
                               lambda x: np.argpartition(x, -3, axis=0),
                               lambda x: np.argpartition(x, [0, 2], axis=0)],
                         ids=["partition", "argpartition-negative", "argpartition-list"])
def test_partition_refuses_an_axis_shorter_than_kth(f):
    """NumPy raises when a kth is outside [-n, n): the contract admitted every size and
    the program then sorted (np.partition) or raised NumPy's error (np.argpartition)."""
    with pytest.raises(ValueError):
        f(np.ones((2, 3)))
    x = np.ones((4, 3))
    ep = ss.export(f, (x,), dynamic_shapes={"x": (A, A)})
    with pytest.raises(ss.UserError):
        ep.module()(np.ones((2, 3)))
    y = np.arange(15.0)[::-1].reshape(5, 3)
    assert ep.module()(y).shape == f(y).shape


@pytest.mark.parametrize("shape", [(), (3,), (0, 4), (2, 1, 3), (2, 3, 1, 4)], ids=str)
def test_stack_tile_and_advanced_index(shape):
    x = np.ones(shape)
    for axis in range(-len(shape) - 1, len(shape) + 1):
        _agree(lambda: N.stack([shape, shape], axis), lambda: np.stack([x, x], axis=axis))
    _agree(lambda: N.stack([shape, shape + (2,)], 0), lambda: np.stack([x, np.ones(shape + (2,))]))
    for reps in ((2,), (2, 3), (3, 2, 2), (2, 3, 2, 3)):
        _agree(lambda: N.tile(shape, reps), lambda: np.tile(x, reps))
    for n in range(1, min(len(shape), 3) + 1):
        for pos in itertools.combinations(range(len(shape)), n):
            for lens in ((2,) * n, (1,) + (3,) * (n - 1), (2, 3, 2)[:n]):
                idx = [np.zeros(k, np.intp) for k in lens]
                items = tuple(idx[pos.index(a)] if a in pos else slice(None)
                              for a in range(len(shape)))
                if any(shape[a] == 0 for a in pos):
                    continue                  # an index 0 on an empty axis: data, not shape
                _agree(lambda: N.advanced_index(shape, [(k,) for k in lens], pos),
                       lambda: x[items])
