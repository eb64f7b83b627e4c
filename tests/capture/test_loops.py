"""Python loops over a symbolic count stay loops (issue 41): a ``for`` over ``range`` of
sizes, over the rows of an array, over ``enumerate`` / ``zip`` of those becomes one
``for_loop`` node; carried arrays, Python numbers, appended lists, writes into arrays made
before the loop and object state; refusals name their lines; guards of the body join the
contract.  Every program is compared with eager NumPy at several counts."""
import os

import numpy as np
import pytest

import symshape as ss
from symshape.errors import ConstraintViolationError, UserError

from loop_programs import Filter, leapfrog, make_elman

RNG = np.random.default_rng(0)
T = ss.Dim("T", min=0)


def _same(a, b):
    if isinstance(a, tuple):
        assert isinstance(b, tuple) and len(a) == len(b)
        for x, y in zip(a, b):
            _same(x, y)
        return
    a, b = np.asarray(a), np.asarray(b)
    assert a.shape == b.shape
    np.testing.assert_allclose(b, a, rtol=1e-10, atol=1e-12)


def _ops(ep):
    return [n.op for n in ep.graph.nodes]


def _check(f, make, spec, counts=(0, 1, 2, 7)):
    ep = ss.export(f, make(5), dynamic_shapes=spec)
    assert "for_loop" in _ops(ep)
    m = ep.module()
    for n in counts:
        args = make(n)
        try:
            want = f(*args)
        except ValueError:          # np.stack([]) in eager code: nothing to compare
            continue
        _same(want, m(*args))
    return ep


# --------------------------------------------------------------------------- programs
W = RNG.standard_normal((4, 5))
U = RNG.standard_normal((5, 5))
elman = make_elman(W, U)


def columns(x):
    h = np.zeros(x.shape[0])
    for t in range(x.shape[1]):
        h = np.tanh(x[:, t] + 0.5 * h)
    return h


def rows_total(x):
    total = 0.0
    for row in x:
        total = total + row.sum()
    return total


def enumerated(x):
    acc = np.zeros(x.shape[1])
    for i, row in enumerate(x, start=1):
        acc = acc + row * i
    return acc


def zipped(x, y):
    acc = np.zeros(x.shape[1])
    for a, b in zip(x, y):
        acc += a * b
    return acc


def written(x):
    y = np.zeros((x.shape[1], x.shape[0]))
    h = np.zeros(x.shape[1])
    for t in range(x.shape[0]):
        h = 0.5 * h + x[t]
        y[:, t] = h
    return y


def counters(x):
    n = 0
    s = 0.0
    for t in range(1, x.shape[0], 2):
        n += 1
        s += x[t, 0] * t
    return n, s


def reversed_cumsum(x):
    out = np.zeros_like(x)
    run = np.zeros(x.shape[1])
    for t in reversed(range(x.shape[0])):
        run = run + x[t]
        out[t] = run
    return out


def with_continue(x):
    acc = np.zeros(x.shape[1])
    for row in x:
        acc = acc + 1.0
        continue
    return acc


def nested(x):
    acc = np.zeros(x.shape[1])
    for i in range(x.shape[0]):
        for j in range(x.shape[1]):
            acc[j] += x[i, j] * j
        for _ in range(2):             # a static inner loop
            acc = acc * 0.5
    return acc


def summed(x):
    parts = []
    for row in x:
        parts.append(row * 2.0)
    return sum(parts), np.array(parts), np.concatenate(parts), np.vstack(parts)


def mat(n, k=3):
    return lambda m: (RNG.standard_normal((m, k)),)


@pytest.mark.parametrize("f", [elman, rows_total, enumerated, written, counters,
                               reversed_cumsum, with_continue, nested])
def test_loop_over_rows_matches_eager(f):
    make = (lambda m: (RNG.standard_normal((m, 4)),))
    spec = {"x": {0: T}}
    if f is nested:
        spec = {"x": {0: T, 1: ss.Dim("K", min=0)}}
    counts = (0, 1, 2, 7) if f not in (counters,) else (1, 2, 7)
    _check(f, make, spec, counts)


def test_loop_over_columns():
    _check(columns, lambda m: (RNG.standard_normal((3, m)),), {"x": {1: T}})


def test_zip_of_two_arrays():
    _check(zipped, lambda m: (RNG.standard_normal((m, 3)), RNG.standard_normal((m, 3))),
           {"x": {0: T}, "y": {0: T}})


def test_list_stacked_summed_concatenated_after_the_loop():
    _check(summed, lambda m: (RNG.standard_normal((m, 3)),), {"x": {0: ss.Dim("T", min=1)}},
           (1, 2, 6))


def test_loop_count_is_an_integer_input():
    q, p = RNG.standard_normal(3), RNG.standard_normal(3)
    ep = ss.export(leapfrog, (q, p, 7, 0.1), dynamic_shapes={"q": None, "p": None,
                                                             "n": ss.Dim("n", min=0),
                                                             "dt": None})
    assert "for_loop" in _ops(ep)
    for n in (0, 1, 5, 30):
        _same(leapfrog(q, p, n, 0.1), ep.module()(q, p, n, 0.1))


# --------------------------------------------------------------------------- consumers
def test_print_shows_the_loop_and_its_body():
    ep = ss.export(elman, (RNG.standard_normal((5, 4)),), dynamic_shapes={"x": {0: T}})
    text = str(ep)
    assert "for_loop" in text and "class for_body_0" in text and "np.tanh" in text
    assert "in elman, code: for t in range(x.shape[0]):" in text


def test_compile_save_load_and_ss_compile():
    ep = ss.export(elman, (RNG.standard_normal((5, 4)),), dynamic_shapes={"x": {0: T}})
    c = ep.compile()
    x = RNG.standard_normal((9, 4))
    _same(elman(x), c(x))
    b = ss.dumps(ep) if hasattr(ss, "dumps") else None
    if b is not None:
        _same(elman(x), ss.loads(b).module()(x))
    jf = ss.compile(elman, dynamic=True)
    # (sizes 0 and 1 get variants of their own under ss.compile, loop or not)
    for n in (3, 4, 8, 12, 2, 30):
        x = RNG.standard_normal((n, 4))
        _same(elman(x), jf(x))
    assert len(jf.variants) == 1            # one variant for every trip count
    auto = ss.compile(elman)                # static first, dynamic once the size changed
    for n in (3, 4, 8, 12, 2, 30):
        x = RNG.standard_normal((n, 4))
        _same(elman(x), auto(x))
    assert len(auto.variants) == 2


def test_save_load_round_trip(tmp_path):
    ep = ss.export(written, (RNG.standard_normal((5, 3)),), dynamic_shapes={"x": {0: T}})
    p = os.path.join(str(tmp_path), "loop.ssp")
    ss.save(ep, p)
    back = ss.load(p)
    for n in (0, 3, 11):
        x = RNG.standard_normal((n, 3))
        _same(written(x), back.module()(x))


# --------------------------------------------------------------------------- state
def test_state_written_in_the_body_is_replayed_every_iteration():
    kf = Filter()
    ep = ss.export(kf.batch_filter, (RNG.standard_normal((6, 1)),),
                   dynamic_shapes={"zs": {0: ss.Dim("T", min=1)}})
    assert kf.x.tolist() == [0.0, 0.0]          # export leaves the object alone
    m = ep.module()
    for n in (1, 4, 9):
        zs = RNG.standard_normal((n, 1))
        eager = Filter()
        want = eager.batch_filter(zs)
        kf.x, kf.P = np.zeros(2), np.eye(2)
        _same(want, m(zs))
        _same(eager.x, kf.x)
        _same(eager.P, kf.P)


# --------------------------------------------------------------------------- refusals
def grows(x):
    acc = x[0]
    for t in range(1, x.shape[0]):
        acc = np.concatenate([acc, x[t]])
    return acc


def breaks(x):
    acc = x[0]
    for t in range(1, x.shape[0]):
        if t > 3:
            break
        acc = acc + x[t]
    return acc


def test_a_carried_shape_that_changes_is_refused_naming_the_line_and_value():
    with pytest.raises(UserError) as e:
        ss.export(grows, (RNG.standard_normal((6, 3)),), dynamic_shapes={"x": {0: T}})
    msg = str(e.value)
    assert "acc" in msg and "test_loops.py:%d" % (grows.__code__.co_firstlineno + 2) in msg
    assert "changes from one iteration to the next" in msg


def test_a_break_is_refused_naming_its_line():
    with pytest.raises(ConstraintViolationError) as e:
        ss.export(breaks, (RNG.standard_normal((6, 3)),), dynamic_shapes={"x": {0: T}})
    assert "breaks out of the loop (line %d)" % (breaks.__code__.co_firstlineno + 4) \
        in str(e.value)


def test_a_user_except_exception_does_not_swallow_the_conversion():
    def guarded(x):
        h = np.zeros(3)
        try:
            for row in x:
                h = h + row
        except Exception:
            h = h - 1
        return h
    _check(guarded, lambda m: (RNG.standard_normal((m, 3)),), {"x": {0: T}})


def test_static_loops_are_left_as_python_loops():
    def static(x):
        for _ in range(3):
            x = x * 2
        return x
    ep = ss.export(static, (np.ones((4, 3)),), dynamic_shapes={"x": {0: T}})
    assert "for_loop" not in _ops(ep)
    assert static.__code__.co_name == "static"


def test_the_function_gets_its_own_code_back():
    code = elman.__code__
    ss.export(elman, (RNG.standard_normal((5, 4)),), dynamic_shapes={"x": {0: T}})
    assert elman.__code__ is code


# --------------------------------------------------------------------------- contract
def test_guards_of_the_body_hold_for_every_iteration_and_join_the_contract():
    def two(x, y):
        acc = np.zeros(3)
        for t in range(len(x)):
            acc = acc + x[t] * y[t]
        return acc
    # y[t] for every t < len(x) needs len(x) <= len(y): a relation the two Dims do not state
    with pytest.raises(ConstraintViolationError) as e:
        ss.export(two, (RNG.standard_normal((5, 3)), RNG.standard_normal((6, 3))),
                  dynamic_shapes={"x": {0: T}, "y": {0: ss.Dim("M", min=0)}})
    assert "T <= M" in str(e.value) and "acc = acc + x[t] * y[t]" in str(e.value)
    # with the relation stated, it exports and checks it
    M = ss.Dim("M", min=0)
    ep = ss.export(two, (RNG.standard_normal((5, 3)), RNG.standard_normal((6, 3))),
                   dynamic_shapes={"x": {0: M}, "y": {0: M + 1}})
    x, y = RNG.standard_normal((4, 3)), RNG.standard_normal((5, 3))
    _same(two(x, y), ep.module()(x, y))


def test_index_within_its_range_needs_no_check():
    ep = ss.export(columns, (RNG.standard_normal((3, 6)),), dynamic_shapes={"x": {1: T}})
    body = next(n for n in ep.graph.nodes if n.op == "for_loop").attrs["body"]
    assert body.checks == []


# --------------------------------------------------------------------------- while, [F] * n
def counted_while(x):
    i = 0
    acc = np.zeros(x.shape[1])
    while i < x.shape[0]:
        acc = acc + x[i] * i
        i += 1
    return acc, i


def stepped_while(x):
    i = 1
    acc = np.zeros(x.shape[1])
    while i <= len(x) - 1:
        acc = acc * 0.5 + x[i]
        i = i + 2
    return acc, i


@pytest.mark.parametrize("f", [counted_while, stepped_while])
def test_a_while_counting_up_to_a_size_is_a_loop(f):
    ep = ss.export(f, (RNG.standard_normal((5, 3)),), dynamic_shapes={"x": {0: T}})
    assert "for_loop" in _ops(ep)
    for n in (0, 1, 2, 5, 8):
        x = RNG.standard_normal((n, 3))
        want, got = f(x), ep.module()(x)
        _same(want[0], got[0])
        assert want[1] == got[1]


def test_a_list_repeated_by_a_size_is_zipped_and_indexed_by_the_loop():
    def smooth(xs, F):
        n = len(xs)
        Fs = [F] * n
        out = xs.copy()
        for k in range(n - 2, -1, -1):
            out[k] = out[k] + Fs[k + 1] @ out[k + 1] * 0.1
        total = np.zeros(2)
        for x, G in zip(xs, Fs):
            total = total + G @ x
        return out, total, len(Fs)
    F = np.array([[1.0, 0.5], [0.0, 1.0]])
    ep = ss.export(smooth, (RNG.standard_normal((6, 2)), F),
                   dynamic_shapes={"xs": {0: ss.Dim("T", min=1)}, "F": None})
    assert _ops(ep).count("for_loop") == 2
    for n in (1, 2, 9):
        xs = RNG.standard_normal((n, 2))
        _same(smooth(xs, F), ep.module()(xs, F))


def test_a_list_repeated_by_a_size_used_otherwise_specializes_as_before():
    def f(x):
        parts = [1.0] * x.shape[0]
        return x * sum(parts)
    with pytest.raises(ConstraintViolationError) as e:
        ss.export(f, (np.ones((4, 2)),), dynamic_shapes={"x": {0: T}})
    assert "iterating over a list repeated by a size" in str(e.value)


class Counter:
    def __init__(self):
        self.c = np.zeros(3)

    def run(self, x):
        """Sum the rows.

        (A method with a multi-line docstring: its source is parsed as indented as it is,
        never dedented, so the rewritten code's constants are the code's own.)
        """
        print("before the loop")
        self.c = self.c + 1
        h = np.zeros(3)
        for row in x:
            h = h + row
        print("after the loop")
        return h + self.c


def test_the_trace_aborted_at_the_loop_prints_once_and_leaves_the_object_alone(capsys):
    m = Counter()
    ep = ss.export(m.run, (np.ones((4, 3)),), dynamic_shapes={"x": {0: T}})
    assert capsys.readouterr().out == "before the loop\nafter the loop\n"
    assert "for_loop" in _ops(ep)
    assert m.c.tolist() == [0.0, 0.0, 0.0]
    twin = Counter()
    x = RNG.standard_normal((6, 3))
    _same(twin.run(x), ep.module()(x))
    _same(twin.c, m.c)


def test_the_program_sees_the_real_stream_while_its_output_is_kept(capsys):
    # the trace keeps a copy of what is printed (to print it once when a loop restarts the
    # trace): the program still sees the stream as it is, its binary buffer and tty flag too
    import sys

    def f(x):
        sys.stdout.buffer.write(b"raw\n")
        print("text")
        return x * 2 + (1.0 if sys.stdout.isatty() else 0.0)
    want = np.ones(3) * 2 + (1.0 if sys.stdout.isatty() else 0.0)
    ep = ss.export(f, (np.ones(3),))
    assert "text\n" in capsys.readouterr().out
    _same(ep.module()(np.ones(3)), want)


def test_a_list_holding_items_before_the_loop_and_two_loops_appending():
    def f(x):
        h = x[0]
        hs = [h]
        for t in range(1, x.shape[0]):
            h = 0.5 * h + x[t]
            hs.append(h)
        for row in x:
            hs.append(row * 2)
        return np.stack(hs)
    _check(f, lambda m: (RNG.standard_normal((m, 3)),), {"x": {0: ss.Dim("T", min=1)}},
           (1, 2, 6))


class History:
    def __init__(self):
        self.hist = []

    def run(self, x):
        h = np.zeros(3)
        for row in x:
            h = h + row
            self.hist.append(h)
        return h


def test_an_effect_that_cannot_be_replayed_per_iteration_is_refused_naming_its_line():
    m = History()
    with pytest.raises(UserError) as e:
        ss.export(m.run, (np.ones((4, 3)),), dynamic_shapes={"x": {0: T}})
    line = History.run.__code__.co_firstlineno + 4
    assert "cannot be replayed per iteration (self.hist)" in str(e.value)
    assert "test_loops.py:%d: self.hist.append(h)" % line in str(e.value)
    assert m.hist == []


def test_a_function_whose_file_changed_since_it_was_loaded_is_not_rewritten(tmp_path):
    path = tmp_path / "edited.py"
    src = ("import numpy as np\n\n\ndef f(x):\n    h = np.zeros(3)\n    for row in x:\n"
           "        h = h + row * 2.0\n    return h\n")
    path.write_text(src)
    ns: dict = {}
    exec(compile(src, str(path), "exec"), ns)
    path.write_text(src.replace("2.0", "3.0"))       # the file no longer holds f's code
    with pytest.raises(ConstraintViolationError) as e:
        ss.export(ns["f"], (np.ones((4, 3)),), dynamic_shapes={"x": {0: T}})
    assert "its source file does not hold the code that runs" in str(e.value)


@pytest.mark.parametrize("use", ["np.array", "np.sum", "tuple", "ufunc"])
def test_numpy_reading_a_list_repeated_by_a_size_keeps_its_guard(use):
    def f(x):
        parts = [2.0] * x.shape[0]
        if use == "np.array":
            w = np.array(parts)
        elif use == "np.sum":
            w = np.sum(parts)
        elif use == "tuple":
            w = np.asarray(tuple(parts))
        else:
            w = np.add(parts, 1.0)
        return x.sum() + w.sum()
    with pytest.raises(ConstraintViolationError, match="repeated by a size"):
        ss.export(f, (np.ones((4, 2)),), dynamic_shapes={"x": {0: T}})
