"""Eager semantics under ss.compile (issue 29): ``try`` / ``except`` / ``finally`` and
``with`` around traced work, compiled code that raises, one view of what compiled
(``variants`` / ``recompile_reasons`` over every segment), ``explain`` counting graphs as
torch's explain does, and size-1 axes that flip.  Each compares outputs and state with
eager NumPy."""
import warnings
import zlib

import numpy as np
import pytest

import symshape as ss


def quiet(cf, *args, **kwargs):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return cf(*args, **kwargs)


def outcome(fn, *args):
    """(result or the exception's type, the arguments after the call)."""
    args = [a.copy() if isinstance(a, np.ndarray) else a for a in args]
    try:
        res = quiet(fn, *args)
    except Exception as e:           # the oracle raises too: compare the type
        res = ("raised", type(e))
    return res, args


def assert_same(a, b):
    if isinstance(b, tuple) and b[:1] == ("raised",):
        assert a == b
        return
    if isinstance(b, (tuple, list)):
        assert type(a) is type(b) and len(a) == len(b)
        for x, y in zip(a, b):
            assert_same(x, y)
        return
    if b is None:
        assert a is None
        return
    np.testing.assert_array_equal(a, b)
    assert np.asarray(a).dtype == np.asarray(b).dtype


def check(f, calls, cf=None):
    cf = cf or ss.compile(f)
    for args in calls:
        got, got_args = outcome(cf, *args)
        want, want_args = outcome(f, *args)
        assert_same(got, want)
        assert_same(got_args, want_args)
    return cf


SPD, NOT_PD = np.eye(3) * 2 + 0.5, -np.eye(3)
LINE = lambda f, k: "%s:%d" % (f.__code__.co_filename, f.__code__.co_firstlineno + k)  # noqa


# --------------------------------------------------------------------------- try / except
def chol_or_zero(A):
    try:
        L = np.linalg.cholesky(A)
    except np.linalg.LinAlgError:
        L = np.zeros_like(A)
    return L * 2


def test_except_branch_taken_exactly_when_eager_takes_it():
    cf = check(chol_or_zero, [(SPD,), (NOT_PD,), (SPD,), (NOT_PD,)])
    assert cf.mode == "split"
    assert cf.break_reasons == ["%s: try statement (runs as Python on every call, so that "
                                "its except / finally blocks see what the array work "
                                "raises; the code in its blocks runs compiled)"
                                % LINE(chol_or_zero, 1)]


def writes_then_raises(x, A):
    try:
        x += 1
        L = np.linalg.cholesky(A)
        x *= 5
    except np.linalg.LinAlgError:
        L = None
    return x.sum(), L


def test_partial_effects_before_the_raise_are_eagers():
    check(writes_then_raises, [(np.ones(3), SPD), (np.ones(3), NOT_PD), (np.ones(3), SPD)])


def slice_then_raises(x, A):
    x[0] = 7.0                          # an in-place slice write, then an op that raises
    return np.linalg.cholesky(A) + x[0]


def add_then_raises(x, A):
    x += 1                              # written back after the compiled work, eagerly before
    return np.linalg.cholesky(A) + x[0]


@pytest.mark.parametrize("f", [slice_then_raises, add_then_raises])
def test_compiled_code_that_raises_leaves_eagers_state_and_error(f):
    cf = check(f, [(np.ones(3), SPD), (np.ones(3), NOT_PD), (np.ones(3), NOT_PD)])
    assert cf.mode == "graph" and len(cf.variants) == 1    # no recompile for a raise


def warns_then_raises(x, A):
    z = np.sqrt(x)                      # a RuntimeWarning, then an op that raises
    return np.linalg.cholesky(A) + np.where(np.isnan(z), 0.0, z)


def guarded_warns_then_raises(x, A):
    try:
        y = warns_then_raises(x, A)
    except np.linalg.LinAlgError:
        y = x
    return y


@pytest.mark.parametrize("f", [warns_then_raises, guarded_warns_then_raises])
def test_a_raise_after_a_warning_warns_once_as_eager(f):
    cf = ss.compile(f)
    x = np.array([-1.0, 2.0, 3.0])
    for A in (SPD, NOT_PD, NOT_PD):
        got = []
        for fn in (cf, f):
            with warnings.catch_warnings(record=True) as w:
                warnings.simplefilter("always")
                try:
                    fn(x.copy(), A)
                except np.linalg.LinAlgError:
                    pass
            got.append([str(m.message) for m in w if m.category is RuntimeWarning])
        assert got[0] == got[1] == ["invalid value encountered in sqrt"]


def safe_chol(A):
    try:
        return np.linalg.cholesky(A)
    except np.linalg.LinAlgError:
        return np.eye(A.shape[0])


def calls_safe_chol(A):
    return safe_chol(A) * 3


def test_try_inside_a_helper_takes_eagers_branch():
    cf = check(calls_safe_chol, [(SPD,), (NOT_PD,), (SPD,)])
    assert cf.mode == "graph"           # one graph; a call that raises runs eagerly


def reshape_or_wrap(x):
    try:
        y = x.reshape(3, -1)
    except ValueError:
        y = x[None]
    return y * 2


def test_except_of_a_shape_error_matches_eager_for_every_size():
    check(reshape_or_wrap, [(np.ones(n),) for n in (6, 4, 9, 5, 12, 7)])


def float_or_zero(x):
    y = x * 2
    try:
        v = float(y.sum())               # a graph break inside the try
    except Exception:
        v = 0.0
    return y + v


def swallow_in_helper(x):
    try:
        v = float(x.sum())
    except Exception:                    # would swallow the tracer's graph break
        v = 0.0
    return x * v


def calls_swallowing_helper(x):
    y = x + 1
    z = swallow_in_helper(y)
    return z - 1


@pytest.mark.parametrize("f", [float_or_zero, calls_swallowing_helper])
def test_a_broad_except_never_swallows_a_graph_break(f):
    check(f, [(np.ones(3),), (np.full(3, 2.0),), (np.arange(3.0),)])


# --------------------------------------------------------------------------- finally
def finally_writes(x, A, out):
    try:
        L = np.linalg.cholesky(A)
    finally:
        out[0] += 1                      # an in-place write on every call, raise or not
    return L + x


def test_finally_runs_on_every_call_also_when_the_body_raises():
    out_c, out_e = np.zeros(1), np.zeros(1)
    cf = ss.compile(finally_writes)
    for A in (SPD, NOT_PD, SPD, NOT_PD):
        got, _ = outcome(cf, np.ones(3), A, out_c)
        want, _ = outcome(finally_writes, np.ones(3), A, out_e)
        assert_same(got, want)
    # outcome copies arrays: run once more on the shared counters themselves
    for A in (SPD, NOT_PD, SPD):
        for fn, out in ((cf, out_c), (finally_writes, out_e)):
            try:
                quiet(fn, np.ones(3), A, out)
            except np.linalg.LinAlgError:
                pass
    assert out_c[0] == out_e[0] == 3


LOG = []


def finally_appends(x):
    try:
        y = np.tanh(x) + 1
    finally:
        LOG.append("fin")
    return y


def test_finally_python_side_effect_runs_every_call():
    LOG.clear()
    cf = ss.compile(finally_appends)
    for _ in range(3):
        quiet(cf, np.ones(3))
    assert LOG == ["fin"] * 3


# --------------------------------------------------------------------------- with
class Counting:
    """A context manager counting its enters and exits; suppresses LinAlgError."""

    def __init__(self):
        self.enters = self.exits = 0
        self.seen = []

    def __enter__(self):
        self.enters += 1
        return self

    def __exit__(self, typ, exc, tb):
        self.exits += 1
        self.seen.append(typ)
        return typ is np.linalg.LinAlgError


CM = Counting()


def with_counting(x, A):
    y = x * 0
    with CM:
        y = x * 2 + 1
        L = np.linalg.cholesky(A)
        y = y + L[0]
    return y


def test_with_enters_and_exits_every_call_and_sees_the_exception():
    cf = ss.compile(with_counting)
    eager = Counting()
    for A in (SPD, NOT_PD, SPD, NOT_PD):
        before = (CM.enters, CM.exits, len(CM.seen))
        got = quiet(cf, np.ones(3), A)
        mid = (CM.enters, CM.exits, list(CM.seen[before[2]:]))
        want = with_counting(np.ones(3), A)
        after = (CM.enters, CM.exits, list(CM.seen[mid[2] and before[2] + len(mid[2]):]))
        assert_same(got, want)
        assert mid[0] - before[0] == after[0] - mid[0] == 1
        assert mid[1] - before[1] == after[1] - mid[1] == 1
        assert mid[2] == after[2]                 # __exit__ saw the same exception
    del eager
    assert cf.mode == "split" and any("with statement" in r for r in cf.break_reasons)


def errstate_divide(x):
    with np.errstate(divide="raise"):
        try:
            y = 1.0 / x
        except FloatingPointError:
            y = np.zeros_like(x)
    return y


def test_errstate_applies_to_the_compiled_body():
    check(errstate_divide, [(np.ones(3),), (np.zeros(3),), (np.arange(3.0),),
                            (np.full(4, 2.0),)])


def helper_in_counting(x):
    with CM:
        y = x * 2
    return y


def calls_helper_with(x):
    z = x + 1
    w = helper_in_counting(z)
    return w - 1


def calls_helper_with_only(x):
    return helper_in_counting(x + 1)


def errstate_helper(x):
    with np.errstate(divide="raise"):
        return 1.0 / x


def calls_errstate_helper(x):
    try:
        y = errstate_helper(x)
    except FloatingPointError:
        y = x * 0
    return y + 1


@pytest.mark.parametrize("f", [calls_helper_with, calls_helper_with_only])
def test_a_with_inside_a_helper_enters_on_every_call(f):
    cf = ss.compile(f)
    quiet(cf, np.ones(3))                          # the first call traces
    for n in (3, 3, 4):
        before = CM.enters
        got = quiet(cf, np.ones(n))
        mid = CM.enters
        want = f(np.ones(n))
        assert_same(got, want)
        assert mid - before == CM.enters - mid == 1
    assert any("with statement in helper_in_counting" in r for r in cf.break_reasons)


def test_errstate_inside_a_helper_applies_to_its_work():
    check(calls_errstate_helper, [(np.zeros(3),), (np.ones(3),), (np.zeros(3),)])


def test_explain_reports_a_with_inside_a_helper():
    e = ss.explain(calls_helper_with, np.ones(3))
    assert e.break_reasons == ["%s: with statement in helper_in_counting (its context "
                               "manager would enter and exit once, while tracing): the call "
                               "runs eagerly" % LINE(helper_in_counting, 1)]
    assert e.graph_count == 2


def test_fullgraph_refuses_a_try_with_its_line():
    cf = ss.compile(chol_or_zero, fullgraph=True)
    with pytest.raises(ss.UserError, match="fullgraph=True") as e:
        cf(SPD)
    assert "%s: try statement" % LINE(chol_or_zero, 1) in str(e.value)


# --------------------------------------------------------------------------- one view
def two_breaks(x):
    y = x * 2
    c = zlib.crc32(y.tobytes()) % 7
    z = y + c
    d = zlib.crc32(z.tobytes()) % 5
    return z * d


def test_variants_and_recompile_reasons_cover_every_segment():
    cf = ss.compile(two_breaks)
    for n in (3, 4, 5, 6):
        quiet(cf, np.arange(float(n)))
    segs = cf.segments
    assert len(segs) == 3
    assert len(cf.variants) == sum(len(s.variants) for s in segs) > 0
    assert {id(v) for v in cf.variants} == {id(v) for s in segs for v in s.variants}
    assert len(cf.recompile_reasons) == sum(len(s.recompile_reasons) for s in segs) > 0
    first = LINE(two_breaks, 1).split(":")[-1]
    assert cf.recompile_reasons[0] == "lines %s-%s of two_breaks: x.shape[0] == 3 (got 4)" % (
        first, first)
    assert repr(cf).startswith("<ss.compile(two_breaks): %d variants" % len(cf.variants))


def test_explain_counts_graphs_as_torch_for_unsupported_calls():
    e = ss.explain(two_breaks, np.arange(4.0))
    # two breaks between array work: three graphs
    assert (e.graph_count, e.graph_break_count) == (3, 2)
    assert e.ops_per_graph == [["multiply"], ["add"], ["multiply"]]
    assert e.break_reasons[0].startswith("%s: " % LINE(two_breaks, 2))
    assert e.break_reasons[1].startswith("%s: " % LINE(two_breaks, 4))
    assert_same(e.result, two_breaks(np.arange(4.0)))


def test_explain_reports_try_and_with_as_breaks():
    e = ss.explain(with_counting, np.ones(3), SPD)
    assert e.break_reasons == ["%s: with statement (its context manager enters and exits on "
                               "every call, as Python; the code in its body runs compiled)"
                               % LINE(with_counting, 2)]
    assert (e.graph_count, e.graph_break_count) == (2, 1)
    e = ss.explain(chol_or_zero, NOT_PD)
    assert_same(e.result, chol_or_zero(NOT_PD))
    assert e.break_reasons[0].startswith("%s: try statement" % LINE(chol_or_zero, 1))


def test_explain_keeps_prints_once_and_in_order(capsys):
    def f(x):
        print("a")
        h = zlib.crc32(x.tobytes())
        print("b", h % 3)
        return x + h % 3
    e = ss.explain(f, np.ones(2))
    assert capsys.readouterr().out == "a\nb %d\n" % (zlib.crc32(np.ones(2).tobytes()) % 3)
    assert e.graph_break_count == 3


# --------------------------------------------------------------------------- size 1
def rows(x):
    return np.tanh(x) * 2 + x[:, :1]


def rows_split(x):
    y = np.tanh(x) * 2
    print(end="")
    return y + y[:1]


@pytest.mark.parametrize("f", [rows, rows_split])
@pytest.mark.parametrize("seq", [(1, 5, 1, 5, 1, 5), (5, 1, 5, 1, 5, 1)])
def test_a_size_one_axis_that_flips_compiles_as_torch_would(f, seq):
    cf = ss.compile(f)
    for n in seq:
        x = np.arange(n * 3.0).reshape(n, 3)
        assert_same(quiet(cf, x), f(x))
    # torch: a static variant, then one for the other size (0/1 specialization): 2
    per = [cf] if f is rows else cf.segments
    assert all(len(c.variants) <= 2 for c in per)


def test_a_function_defined_inside_a_with_block_is_not_in_it():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")

        def helper(x):
            return x * 2

        def f(x):
            return helper(x) + 1
        cf = ss.compile(f)
        assert_same(cf(np.ones(3)), f(np.ones(3)))
    assert cf.mode == "graph" and cf.break_reasons == []
