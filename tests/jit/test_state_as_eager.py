"""What eager Python does with the user's objects, done by ``module()``, ``ep.compile()``
and ``ss.compile`` too (issue 39): a state list or dict the function returns is the
user's object itself (identity, after the writes); the writes made before a run-time
check fails are visible after the exception."""
import warnings
import weakref

import numpy as np
import pytest

import symshape as ss


def runners(f, example):
    """(name, callable) for every way a program runs: module(), ep.compile(), ss.compile."""
    ep = ss.export(f, example)
    yield "module", ep.module()
    yield "compile", ep.compile()
    yield "jit", ss.compile(f)


class Hist:
    def __init__(self):
        self.hist = []
        self.seen = {}
        self.tags = set()

    def log(self, x):
        self.hist.append(x.sum())
        return self.hist

    def both(self, x):
        self.hist.append(x.sum())
        self.seen["last"] = x * 2
        return x + 1, (self.hist, self.seen)

    def fresh(self, x):
        self.hist = [x.sum()]
        return self.hist


@pytest.mark.parametrize("kind", ["module", "compile", "jit"])
def test_returned_state_list_is_the_users_list(kind):
    m = Hist()
    run = dict(runners(m.log, (np.ones(3),)))[kind]
    for k in range(3):
        got = run(np.ones(3) * k)
        assert got is m.hist
        assert len(m.hist) == k + 1
    assert [float(v) for v in m.hist] == [0.0, 3.0, 6.0]


@pytest.mark.parametrize("kind", ["module", "compile", "jit"])
def test_returned_state_in_a_tuple_keeps_identity(kind):
    m = Hist()
    run = dict(runners(m.both, (np.ones(3),)))[kind]
    for k in range(2):
        y, (h, d) = run(np.ones(3) * k)
        assert h is m.hist and d is m.seen
        assert np.array_equal(y, np.ones(3) * k + 1)
        assert np.array_equal(d["last"], np.ones(3) * 2 * k)
    assert len(m.hist) == 2


@pytest.mark.parametrize("kind", ["module", "compile", "jit"])
def test_returned_list_the_program_stored_is_the_stored_one(kind):
    m = Hist()
    run = dict(runners(m.fresh, (np.ones(3),)))[kind]
    for k in range(2):
        got = run(np.ones(3) * k)
        assert got is m.hist and float(got[0]) == 3.0 * k


def test_returned_argument_list_is_the_callers_list():
    def f(x, acc):
        acc.append(x.sum())
        return acc
    for name, run in runners(f, (np.ones(3), [])):
        acc = []
        assert run(np.ones(3), acc) is acc and len(acc) == 1, name


class Checked:
    def __init__(self):
        self.n = 0
        self.h = []
        self.last = np.zeros(3)

    def step(self, x):
        self.n += 1
        self.h.append(x.sum())
        self.last = x * 3               # a rebind before the check ...
        if not (x >= 0).all():          # (not assert: pytest rewrites those)
            raise ValueError("negative input")
        self.last = x * 5               # ... and one after it (never merged across it)
        self.n += 10
        self.h.append(x.max())
        return x * 2


def eager_after(xs):
    m = Checked()
    for x in xs:
        try:
            m.step(x)
        except ValueError:
            pass
    return m


@pytest.mark.parametrize("kind", ["module", "compile", "jit"])
def test_writes_before_a_failing_check_happen(kind):
    m = Checked()
    run = dict(runners(m.step, (np.ones(3),)))[kind]
    xs = [np.ones(3), -np.arange(3.0) - 1, np.full(3, 2.0)]
    for x in xs[:2]:
        try:
            run(x)
        except ValueError as e:
            assert str(e) == "negative input"
    want = eager_after(xs[:2])
    assert m.n == want.n == 12
    assert [float(v) for v in m.h] == [float(v) for v in want.h] == [3.0, 1.0, -6.0]
    assert np.array_equal(m.last, want.last) and np.array_equal(m.last, xs[1] * 3)
    run(xs[2])                          # and the next call goes on from there
    want = eager_after(xs)
    assert m.n == want.n and len(m.h) == len(want.h) == 5
    assert np.array_equal(m.last, want.last)


def test_writes_before_a_check_that_holds_are_made_once():
    m = Checked()
    run = ss.export(m.step, (np.ones(3),)).module()
    run(np.ones(3))
    assert m.n == 11 and len(m.h) == 2 and np.array_equal(m.last, np.full(3, 5.0))


def test_writes_needing_values_not_yet_computed_are_refused_not_dropped():
    m = Checked()
    ep = ss.export(m.step, (np.ones(3),))
    sp = ep.state_program
    call = sp.begin(())
    with pytest.raises(ss.UserError, match="move the check before the writes"):
        sp.before_failure(call, 1, None, "raise ValueError('negative input')")


# ------------------------------------------------------------------ module attributes
CONFIG = '''
import numpy as np
calls = 0
SCALE = 1.0
def bump():
    global calls
    calls += 1
'''


@pytest.fixture
def config(tmp_path, monkeypatch):
    import importlib
    import sys
    (tmp_path / "ss_eager_config.py").write_text(CONFIG)
    monkeypatch.syspath_prepend(str(tmp_path))
    sys.modules.pop("ss_eager_config", None)
    mod = importlib.import_module("ss_eager_config")
    yield mod
    sys.modules.pop("ss_eager_config", None)


def module_writes(cfg):
    def count(x):
        cfg.calls += 1                  # a module attribute: replayed, with its arithmetic
        cfg.SCALE = 2.0                 # a constant stored in a module
        return x + 1

    def helper(x):
        cfg.bump()                      # ``global calls`` in the module's own function
        return x * 2
    return count, helper


@pytest.mark.parametrize("kind", ["module", "compile", "jit"])
@pytest.mark.parametrize("which", [0, 1])
def test_module_attribute_writes_are_replayed_every_call(config, kind, which):
    f = module_writes(config)[which]
    run = dict(runners(f, (np.ones(3),)))[kind]
    # export and tracing changed nothing
    assert config.calls == 0 and config.SCALE == 1.0
    outs = [run(np.ones(3)) for _ in range(3)]
    got = (config.calls, config.SCALE)
    config.calls, config.SCALE = 0, 1.0
    want = [f(np.ones(3)) for _ in range(3)]
    assert got == (config.calls, config.SCALE) and got[0] == 3
    for a, b in zip(outs, want):
        assert np.array_equal(a, b)


# ------------------------------------------------------------------ weak references
class Params:
    def __init__(self):
        self.W = np.ones(3)
        self.scale = 2.0
        self.n = 0


class Child:
    def __init__(self, parent):
        self.parent = weakref.ref(parent)
        self.cache = weakref.WeakValueDictionary()
        self.cache["p"] = parent

    def read(self, x):
        p = self.parent()
        return x * p.W

    def write(self, x):
        p = self.parent()
        p.n += 1
        p.W = p.W + 1
        return x * p.scale

    def through_cache(self, x):
        return x * self.cache["p"].W


@pytest.mark.parametrize("kind", ["module", "compile", "jit"])
def test_state_read_through_a_weakref_is_read_every_call(kind):
    p = Params()
    c = Child(p)
    run = dict(runners(c.read, (np.ones(3),)))[kind]
    assert np.array_equal(run(np.ones(3)), np.ones(3))
    p.W = np.full(3, 5.0)               # rebound: read through the reference again
    assert np.array_equal(run(np.ones(3)), np.full(3, 5.0))


@pytest.mark.parametrize("kind", ["module", "compile", "jit"])
def test_writes_through_a_weakref_are_replayed(kind):
    p = Params()
    c = Child(p)
    run = dict(runners(c.write, (np.ones(3),)))[kind]
    assert p.n == 0 and np.array_equal(p.W, np.ones(3))     # export changed nothing
    for _ in range(2):
        assert np.array_equal(run(np.ones(3)), np.full(3, 2.0))
    assert p.n == 2 and np.array_equal(p.W, np.full(3, 3.0))


def test_a_scalar_read_through_a_weakref_is_guarded():
    p = Params()
    c = Child(p)
    run = ss.export(c.write, (np.ones(3),)).module()
    p.scale = 3.0
    with pytest.raises(ss.UserError, match=r"self\.parent\(\)\.scale changed: 2\.0 -> 3\.0"):
        run(np.ones(3))
    cf = ss.compile(c.write)
    assert np.array_equal(cf(np.ones(3)), np.full(3, 3.0))
    p.scale = 4.0
    assert np.array_equal(cf(np.ones(3)), np.full(3, 4.0))


def test_a_dead_referent_is_refused_at_the_call():
    p = Params()
    c = Child(p)
    run = ss.export(c.read, (np.ones(3),)).module()
    c.parent = weakref.ref(Params())    # a reference whose object is gone at once
    with pytest.raises(ss.UserError, match=r"self\.parent\(\)"):
        run(np.ones(3))


def test_a_weak_container_in_state_is_refused_naming_the_line():
    p = Params()
    c = Child(p)
    with pytest.raises(ss.UserError, match=r"self\.cache, a WeakValueDictionary at .*"
                                           r"test_state_as_eager\.py:\d+: return x \* self"):
        ss.export(c.through_cache, (np.ones(3),))
    assert type(c.cache) is weakref.WeakValueDictionary and c.cache["p"] is p
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        cf = ss.compile(c.through_cache)    # that line runs eagerly
        assert np.array_equal(cf(np.ones(3)), np.ones(3))
        p.W = np.full(3, 7.0)
        assert np.array_equal(cf(np.ones(3)), np.full(3, 7.0))


def test_a_loaded_program_keeps_its_weakref_paths(tmp_path):
    p = Params()
    c = Child(p)
    ep = ss.export(c.write, (np.ones(3),))
    ss.save(ep, str(tmp_path / "m.ss"))
    run = ss.load(str(tmp_path / "m.ss")).module()
    assert np.array_equal(run(np.ones(3)), np.full(3, 2.0))
    run(np.ones(3))
    assert p.n == 0                     # its own store, not the user's object


class Counted:
    def __init__(self):
        self.h = []

    def step(self, x):
        self.h.append(x.sum())
        if not (x >= 0).all():
            raise ValueError("negative input")
        self.h.append(x.max())
        return x * 2, self.h


@pytest.mark.parametrize("kind", ["module", "compile"])
def test_a_loaded_program_returns_its_stores_container(tmp_path, kind):
    m = Hist()
    ss.save(ss.export(m.log, (np.ones(3),)), str(tmp_path / "h.ss"))
    run = getattr(ss.load(str(tmp_path / "h.ss")), kind)()
    first = run(np.ones(3))
    second = run(np.full(3, 2.0))
    assert second is first and [float(v) for v in first] == [3.0, 6.0]
    assert m.hist == []                 # the store's list, not the user's


@pytest.mark.parametrize("kind", ["module", "compile"])
def test_a_loaded_program_makes_the_writes_before_a_failing_check(tmp_path, kind):
    m = Counted()
    ss.save(ss.export(m.step, (np.ones(3),)), str(tmp_path / "c.ss"))
    m.h = []
    run = getattr(ss.load(str(tmp_path / "c.ss")), kind)()
    h = run(np.ones(3))[1]
    with pytest.raises(ValueError, match="negative input"):
        run(-np.ones(3))
    assert run(np.ones(3))[1] is h
    # eager: 3, 1, then -3 before the check fails, then 3, 1
    assert [float(v) for v in h] == [3.0, 1.0, -3.0, 3.0, 1.0]
    assert m.h == []


# ------------------------------------------------------------------ compiled inside compiled
class Inner:
    def __init__(self):
        self.n = 0
        self.h = []
        self.acc = np.zeros(3)

    def step(self, x):
        self.n += 1
        self.h.append(x.sum())
        self.acc += x
        return x * 2


class Outer:
    def __init__(self):
        self.inner = Inner()
        self.step = ss.compile(self.inner.step)     # a compiled sub-module

    def __call__(self, x):
        return self.step(x) + 1


def check_inner(inner, calls):
    assert inner.n == calls and len(inner.h) == calls
    assert np.array_equal(inner.acc, np.full(3, float(calls)))


@pytest.mark.parametrize("kind", ["module", "compile", "jit"])
def test_a_compiled_sub_module_changes_its_state_every_call(kind):
    o = Outer()
    run = dict(runners(o, (np.ones(3),)))[kind]
    check_inner(o.inner, 0)             # tracing changed nothing
    for k in range(3):
        assert np.array_equal(run(np.ones(3)), np.full(3, 3.0))
    check_inner(o.inner, 3)


def test_a_compiled_function_called_from_a_compiled_function():
    inner = Inner()
    inner_step = ss.compile(inner.step)

    def outer(x):
        return inner_step(x) + 1
    oc = ss.compile(outer)
    for _ in range(3):
        oc(np.ones(3))
    check_inner(inner, 3)
    inner_step(np.ones(3))              # on its own too
    check_inner(inner, 4)


def test_module_recording_is_undone_also_when_the_trace_raises(config):
    import types as _types
    count, _ = module_writes(config)
    ep = ss.export(count, (np.ones(3),))
    assert type(config) is _types.ModuleType            # its class is back
    assert config.calls == 0 and config.SCALE == 1.0    # its attributes too

    def raises(x):
        config.calls += 1
        config.SCALE = 3.0
        return x / 0.0 if int(1 / 0) else x             # a Python error while tracing
    with pytest.raises(ZeroDivisionError):
        ss.export(raises, (np.ones(3),))
    assert type(config) is _types.ModuleType
    assert config.calls == 0 and config.SCALE == 1.0
    ep.module()(np.ones(3))
    assert config.calls == 1 and config.SCALE == 2.0
