"""Graph breaks under ss.compile: the function is split at its breaks once; later calls run
compiled segments (each behind its own guards) and the breaks eagerly, tracing nothing again;
fallbacks warn once with the line, the reason and advice; explain never raises."""
import builtins
from repo_paths import TESTS
import warnings
import zlib

import numpy as np
import pytest

import symshape as ss
from runners import import_source
from symshape.codegen.jit import CompileFallbackWarning, RecompileLimitWarning

from corpus.breaks import toy

TOY_FILE = toy.__code__.co_filename   # messages name the line in the user's file


def f64(*shape, seed=0):
    return np.random.default_rng(seed).standard_normal(shape)


def same(got, want):
    if isinstance(want, tuple):
        assert isinstance(got, tuple) and len(got) == len(want)
        for g, w in zip(got, want):
            same(g, w)
        return
    np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-12)
    assert np.asarray(got).dtype == np.asarray(want).dtype


def quiet(cf, *args, **kwargs):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return cf(*args, **kwargs)


def traces_after_warmup(cf, calls):
    """Number of exports (traces) run by ``calls`` after the first ones."""
    from symshape.capture import export as export_mod
    seen = []
    real = export_mod.export

    def counting(*a, **k):
        seen.append(1)
        return real(*a, **k)
    export_mod.export = counting
    try:
        for args in calls:
            quiet(cf, *args)
    finally:
        export_mod.export = real
    return len(seen)


# --------------------------------------------------------------------------- no re-trace


def test_two_breaks_trace_once_then_never_again(capsys):
    cf = ss.compile(toy)
    a, b = f64(10), f64(10, seed=1)
    for bb in (np.abs(b), -np.abs(b)):
        same(quiet(cf, a, bb), toy(a, bb))
    assert traces_after_warmup(cf, [(a, np.abs(b)), (a, -np.abs(b))] * 5) == 0
    assert capsys.readouterr().out == "woo\n" * 14
    assert cf.mode == "split" and len(cf.segments) == 3
    assert len(cf.break_reasons) == 2


def test_segments_recompile_by_their_own_guards():
    cf = ss.compile(toy)
    for n in (4, 5, 6, 7):
        a, b = f64(n), f64(n, seed=1)
        same(quiet(cf, a, b), toy(a, b))
    first = cf.segments[0]
    assert first.recompile_reasons == ["a.shape[0] == 4 (got 5)"]
    assert len(first.variants) == 2          # static 4, then dynamic
    assert "segment lines" in cf.report() and "recompiled because" in cf.report()


class Net:
    """Weights in a class, layers in a loop, a debugging print inside the loop."""

    def __init__(self, d, n):
        self.ws = [f64(d, d, seed=i) * 0.3 for i in range(n)]
        self.log = []

    def forward(self, x):
        h = x
        for i, w in enumerate(self.ws):
            h = np.tanh(h @ w)
            self.log.append(float(h.mean()))      # a value leaves the graph every layer
        scale = 2.0
        return h * scale + 1


def test_break_inside_a_loop_over_layers():
    net, ref = Net(8, 3), Net(8, 3)
    cf = ss.compile(net.forward)
    for n in (4, 4, 6, 6):
        x = f64(n, 8, seed=n)
        same(quiet(cf, x), ref.forward(x))
    np.testing.assert_allclose(net.log, ref.log)
    assert cf.mode == "split"
    assert traces_after_warmup(cf, [(f64(6, 8),)] * 3) == 0


def test_early_return_and_closure_rebinding():
    scale = 2.0

    def f(x, flag):
        y = x * scale
        if y.max() > 100:                        # value-dependent branch
            return y
        if flag:
            return y + 1
        return y - 1

    cf = ss.compile(f)
    x = f64(5)
    for flag in (True, False, True):
        same(quiet(cf, x, flag), f(x, flag))
    same(quiet(cf, x * 1000, False), f(x * 1000, False))
    scale = 3.0                                  # rebinding a closure variable recompiles
    same(quiet(cf, x, True), f(x, True))


def test_a_statement_that_fails_eagerly_raises_the_users_error_and_changes_nothing():
    def f(x):
        y = x * 2
        print("n", int(y.sum()))
        return y.reshape(-1, 2)
    cf = ss.compile(f)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with pytest.raises(ValueError, match="cannot reshape"):
            cf(np.ones(5))
        same(cf(np.ones(4)), f(np.ones(4)))


def test_mutations_and_side_effects_happen_once_per_call_in_order(capsys):
    def f(x):
        x += 1
        print("after add", float(x.sum()))
        x *= 2
        return x.sum()
    a, b = np.ones(3), np.ones(3)
    cf = ss.compile(f)
    for _ in range(3):
        same(quiet(cf, a), f(b))
    same(a, b)
    out = capsys.readouterr().out.splitlines()
    assert len(out) == 6 and out[0::2] == out[1::2]


# --------------------------------------------------------------------------- untraceable
def checksum(x):
    y = x * 2
    h = zlib.crc32(y)                            # needs a real buffer
    return y + h


def test_untraceable_library_call_is_a_break():
    cf = ss.compile(checksum)
    x = np.arange(4.0)
    with pytest.warns(CompileFallbackWarning, match=r"zlib.crc32\(y\)"):
        same(cf(x), checksum(x))
    same(cf(x), checksum(x))
    assert "cannot see into" in cf.break_reasons[0]


def test_explain_never_raises_on_an_untraceable_call(capsys):
    x = np.arange(4.0)
    e = ss.explain(checksum, x)
    same(e.result, checksum(x))
    # as torch's explain counts: x * 2, the break, then y + h (issue 29)
    assert e.graph_break_count == 1 and e.graph_count == 2
    assert e.ops_per_graph == [["multiply"], ["add"]]
    line = checksum.__code__.co_firstlineno + 2
    assert e.break_reasons[0].startswith("%s:%d: a call the tracer cannot see into" % (
        __file__, line))
    assert "zlib.crc32(y)" in str(e)


def test_explain_prints_once_when_it_finishes_eagerly(capsys):
    def f(x):
        print("start")
        return zlib.crc32(x * 1) + x
    ss.explain(f, np.ones(2))
    assert capsys.readouterr().out == "start\n"


# --------------------------------------------------------------------------- warnings
def test_fallback_warns_once_with_line_reason_and_advice():
    cf = ss.compile(toy)
    a, b = f64(6), -np.abs(f64(6))
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        for _ in range(3):
            cf(a, b)
    msgs = [str(x.message) for x in w if issubclass(x.category, CompileFallbackWarning)]
    assert len(msgs) == 1
    line = toy.__code__.co_firstlineno + 2
    assert "%s:%d: call to print" % (TOY_FILE, line) in msgs[0]
    assert 'print("woo")' in msgs[0] and "drop the print" in msgs[0]
    assert w[0].filename == __file__             # points at the user's call


def test_cache_limit_advice_names_the_line_that_pins_the_size():
    def f(x):
        n = builtins.int(x.shape[0])             # Python's own int pins the size
        return x * n
    cf = ss.compile(f, cache_size_limit=2)
    with pytest.warns(RecompileLimitWarning) as w:
        for n in (2, 3, 4, 5):
            same(cf(np.ones(n)), f(np.ones(n)))
    text = str(w[0].message)
    assert "dynamic=None or dynamic=True" not in text
    assert "n = builtins.int(x.shape[0])" in text


def test_cache_limit_advice_with_dynamic_false():
    cf = ss.compile(lambda x: x + 1, dynamic=False, cache_size_limit=1)
    with pytest.warns(RecompileLimitWarning, match="dynamic=None"):
        for n in (2, 3):
            cf(np.ones(n))


# --------------------------------------------------------------------------- size 1
def test_size_one_reuses_a_dynamic_variant_when_nothing_depends_on_it():
    def f(x, w):
        return np.tanh(x @ w).sum(0)
    cf = ss.compile(f)
    w = f64(4, 3)
    for n in (3, 5, 1, 1, 7, 1):
        same(cf(f64(n, 4), w), f(f64(n, 4), w))
    assert len(cf.variants) == 3
    assert "nothing in the program depends on size 1" in cf.recompile_reasons[-1]


def test_size_one_gets_its_own_variant_when_it_broadcasts():
    def f(x, y):
        return x + y
    cf = ss.compile(f)
    y = f64(5, 4)
    for n in (5, 5):
        same(cf(f64(n, 4), y), f(f64(n, 4), y))
    for x in (f64(3, 4), f64(2, 4)):
        same(cf(x, x), x + x)
    same(cf(f64(1, 4), y), f(f64(1, 4), y))
    assert "size 1 changes what the program does" in cf.recompile_reasons[-1]
    assert "x.shape[0]" in cf.recompile_reasons[-1] and "x_0" not in \
        cf.recompile_reasons[-1]


def test_freeze_and_reset_reach_the_segments():
    cf = ss.compile(toy)
    a, b = f64(6), -np.abs(f64(6))
    quiet(cf, a, b)
    quiet(cf, a, b)
    cf.freeze()
    with pytest.raises(ss.UserError, match="frozen"):
        quiet(cf, f64(7), -np.abs(f64(7)))
    cf.unfreeze()
    same(quiet(cf, f64(7), -np.abs(f64(7))), toy(f64(7), -np.abs(f64(7))))
    cf.reset()
    assert cf.mode == "graph" and cf.segments == [] and cf.break_reasons == []
    same(quiet(cf, a, b), toy(a, b))
    assert cf.mode == "split"


def test_split_function_called_inside_another_trace_is_inlined():
    inner = ss.compile(toy)
    a, b = f64(5), -np.abs(f64(5))
    quiet(inner, a, b)                             # split

    def outer(a, b):
        return inner(a, b) + 1
    e = ss.explain(outer, a, b)
    same(e.result, toy(a, b) + 1)
    assert e.graph_break_count == 2


# --------------------------------------------------------------------------- fuzzing
from hypothesis import HealthCheck, given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

STATEMENTS = [
    "y = x * 2 + 1",
    "x = np.tanh(y) - 0.5",
    "print('v', round(float(y.sum()), 6))",
    "if x.sum() > 0:\n    y = y - x\nelse:\n    y = y + 1",
    "s = float(x.max())",
    "y = y * s",
    "for i in range(2):\n    y = y + x * i\n    log.append(round(float(y[0]), 6))",
    "y[0] = 3.0",
    "x += 1",
    "log.append(round(float(y[-1]), 6))",
    "if len(log) > 2:\n    return x - y, s",
    "z = np.concatenate([x, y])\nx = z[:x.shape[0]] * 0.5",
]


@settings(max_examples=12, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.lists(st.integers(0, len(STATEMENTS) - 1), min_size=1, max_size=7),
       st.integers(2, 6))
def test_split_programs_match_eager(tmp_path_factory, picks, n):
    body = "\n".join(STATEMENTS[i] for i in picks)
    src = "import numpy as np\n\ndef f(x, y, log):\n    s = 1.0\n%s\n    return x + y, s\n" % (
        "\n".join("    " + ln for ln in body.splitlines()))
    mod = import_source(tmp_path_factory, src)
    cf = ss.compile(mod.f)
    import contextlib
    import io
    for k in range(3):
        x = np.linspace(-1, 1, n) * (1 if k % 2 else -1)
        y = np.cos(np.arange(n) + k)
        xs, ys, ls = (x.copy(), y.copy(), [])
        out_c, out_e = io.StringIO(), io.StringIO()
        with contextlib.redirect_stdout(out_c):
            got = quiet(cf, x, y, ls)
        xe, ye, le = xs.copy(), ys.copy(), []
        with contextlib.redirect_stdout(out_e):
            want = mod.f(xe, ye, le)
        same(got, want)
        same(x, xe)
        same(y, ye)
        assert ls == le and out_c.getvalue() == out_e.getvalue()


def helper_with_print(h, w):
    h = np.tanh(h @ w)
    print("layer", h.shape)
    return h


def test_a_break_inside_a_helper_names_the_calling_statement(capsys):
    ws = [f64(4, 4, seed=i) for i in range(2)]

    def forward(x):
        for w in ws:
            x = helper_with_print(x, w)
        return x * 2

    cf = ss.compile(forward)
    with pytest.warns(CompileFallbackWarning) as w:
        same(cf(f64(3, 4)), forward(f64(3, 4)))
    text = str(w[0].message)
    assert "inside helper_with_print" in text and "x = helper_with_print(x, w)" in text


COUNTER = 0


def test_while_with_and_try_blocks_split_and_match_eager():
    def f(x):
        n = 0
        while x.sum() > 1:                         # value-dependent loop condition
            x = x * 0.5
            n += 1
        with np.errstate(all="ignore"):
            y = np.log(x - 10)
        try:
            z = float(x[0])
        except ValueError:
            z = 0.0
        del n
        return x, y, z

    cf = ss.compile(f)
    for scale in (1.0, 8.0, 0.1):
        x = np.abs(f64(4)) * scale
        same(quiet(cf, x), f(x))
    assert cf.mode == "split"


def test_functions_that_cannot_be_split_still_run_correctly(capsys):
    def g(x):
        global COUNTER
        COUNTER += 1
        print("g")
        return x * 2

    lam = ss.compile(lambda x: print("l") or x + 1)
    cg = ss.compile(g)
    for _ in range(2):
        same(quiet(cg, np.ones(3)), np.full(3, 2.0))
        same(quiet(lam, np.ones(3)), np.full(3, 2.0))
    assert cg.mode == "breaks" and lam.mode == "breaks"
    assert COUNTER >= 2            # (tracing the first call runs the increment too)
    assert capsys.readouterr().out == "g\nl\ng\nl\n"


class Layer:
    def __init__(self, i):
        self.w = f64(8, 8, seed=i) * 0.3

    def __call__(self, x):
        return np.tanh(x @ self.w)


class Stack:
    def __init__(self, n):
        self.layers = [Layer(i) for i in range(n)]

    def forward(self, x):
        for layer in self.layers:
            x = layer(x)
            if x.mean() > 10:
                print("big")
        return x * 2


def test_a_segment_reading_an_object_runs_its_statements_eagerly():
    m = Stack(12)
    cf = ss.compile(m.forward)
    x = f64(4, 8)
    for _ in range(3):
        same(quiet(cf, x), m.forward(x))
    assert cf.mode == "split" and cf._segments.fns == {}
    assert any("layer" in r and "run eagerly" in r for r in cf.break_reasons)
    assert traces_after_warmup(cf, [(x,)] * 3) == 0


def test_a_method_with_a_print_compiles_the_work_around_it(capsys):
    import os
    import sys
    sys.path.insert(0, TESTS)
    from corpus import llama

    Chatty = llama.ChattyLlama

    import copy
    model = Chatty()
    ref = copy.deepcopy(model)
    cf = ss.compile(model.forward)
    rng = np.random.default_rng(0)
    prompt = rng.integers(0, 50, (2, 5))
    same(quiet(cf, prompt, 0), ref.forward(prompt, 0))
    for pos in (5, 6, 7):
        tok = rng.integers(0, 50, (2, 1))
        same(quiet(cf, tok, pos), ref.forward(tok, pos))
    same(model.layers[0].attention.cache_k, ref.layers[0].attention.cache_k)
    assert cf.mode == "split"
    compiled = [s for s in cf.segments if s.variants]
    assert compiled and all(s.mode == "graph" for s in cf.segments)
    assert not any("is of type" in r for r in cf.break_reasons)
    assert traces_after_warmup(cf, [(rng.integers(0, 50, (2, 1)), 9)] * 3) == 0


def test_locals_bound_on_some_paths_only():
    def f(x, flag):
        if flag:
            y = x * 2
        print("between")
        z = x + 1
        if flag:
            z = z + y
        if not flag:
            w = z * 3
        print("again")
        if flag:
            return z
        return w - 1

    cf = ss.compile(f)
    for flag in (False, True, False, True):
        x = f64(4)
        same(quiet(cf, x, flag), f(x, flag))
    assert cf.mode == "split"


def test_a_deleted_local_is_unbound_again():
    def f(x):
        y = x * 2
        print("n", y.shape)
        del y
        y = x + 1
        print("m")
        return y
    cf = ss.compile(f)
    same(quiet(cf, f64(3)), f(f64(3)))
