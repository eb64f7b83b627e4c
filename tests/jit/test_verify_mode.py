"""The verify mode (``SYMSHAPE_VERIFY=1``, ``ss.compile(f, verify=True)``,
``ep.module(verify=True)``): each call also runs the eager function on deep copies of its
inputs and reachable state and raises ``ss.VerifyError`` naming the first output, input or
state path that differs, and the variant or segment that ran."""
import itertools
import warnings

import numpy as np
import pytest

import symshape as ss
from symshape.capture.state import stateprog
from symshape.capture.state.verify import verified_call

X = np.arange(12.0).reshape(4, 3)


class Model:
    def __init__(self):
        self.W = np.arange(6.0).reshape(3, 2)
        self.m = np.zeros(2)
        self.t = 0
        self.hist = []
        self.cfg = {"eps": 0.5}

    def __call__(self, x):
        y = x @ self.W
        self.m = 0.9 * self.m + 0.1 * y.mean(0)
        self.t += 1
        self.hist.append(self.t)
        return y + self.m * self.cfg["eps"]


def test_verify_error_is_public():
    assert issubclass(ss.VerifyError, ss.UserError)
    assert "verify mode" in ss.VerifyError.__doc__


def test_module_verify_passes_and_leaves_the_programs_state():
    m, eager = Model(), Model()
    mod = ss.export(m, (X,)).module(verify=True)
    for k in range(3):
        assert np.array_equal(mod(X * k), eager(X * k))
    assert m.t == eager.t == 3 and m.hist == [1, 2, 3]
    assert np.array_equal(m.m, eager.m)


class Counter:
    def __init__(self):
        self.t = 0

    def __call__(self, x):
        self.t += 1
        return x * 2, self.t


def test_a_returned_counter_is_guarded_not_frozen():
    # found by the verify mode: the output was the trace's constant, unguarded
    c = Counter()
    mod = ss.export(c, (X,)).module(verify=True)
    assert mod(X)[1] == 1
    with pytest.raises(ss.UserError, match=r"self\.t changed: 0 -> 1"):
        mod(X)
    c2, eager = Counter(), Counter()
    cf = ss.compile(c2, verify=True)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for _ in range(3):
            assert cf(X)[1] == eager(X)[1]


def test_a_dropped_state_write_is_named_by_its_path():
    m = Model()
    ep = ss.export(m, (X,))
    sp = ep.state_program
    sp.effects = [e for e in sp.effects if e.op != "append"]
    with pytest.raises(ss.VerifyError, match=r"self\.hist: length 0, eager gives 1 .*"
                                             r"ep\.module\(\)"):
        ep.module(verify=True)(X)


def test_a_wrong_output_is_named_with_its_index_and_element():
    def f(x):
        return x * 2, x.sum()

    with pytest.raises(ss.VerifyError, match=r"output\[1\]: .*eager gives .*the program ran "
                                             r"my variant"):
        verified_call(f, lambda x: (x * 2, x.sum() + 1), (X,), {}, lambda: "my variant")
    with pytest.raises(ss.VerifyError, match=r"output\[0\]\[2, 1\]"):
        verified_call(f, lambda x: (np.where(x == 7, 0, x * 2), x.sum()), (X,), {},
                      lambda: "v")
    with pytest.raises(ss.VerifyError, match=r"output\[0\]: dtype float32, eager gives "
                                             r"float64"):
        verified_call(f, lambda x: ((x * 2).astype(np.float32), x.sum()), (X,), {},
                      lambda: "v")


def test_an_input_written_in_place_is_compared():
    def f(x):
        x += 1
        return x.sum()

    with pytest.raises(ss.VerifyError, match=r"at x\[0, 0\]"):
        verified_call(f, lambda x: (x + 1).sum(), (X.copy(),), {}, lambda: "v")


def test_environment_variable_turns_it_on(monkeypatch):
    monkeypatch.setenv("SYMSHAPE_VERIFY", "1")
    m = Model()
    ep = ss.export(m, (X,))
    ep.state_program.effects = [e for e in ep.state_program.effects if e.op != "append"]
    with pytest.raises(ss.VerifyError, match=r"self\.hist"):
        ep.module()(X)
    monkeypatch.setenv("SYMSHAPE_VERIFY", "0")
    ep.module()(X)


def test_compile_verify_follows_eager_over_calls_and_breaks():
    m, eager = Model(), Model()
    cf = ss.compile(m, verify=True)
    for k in range(4):
        assert np.array_equal(cf(X[: k + 2] * k), eager(X[: k + 2] * k))
    assert m.hist == eager.hist

    def noisy(x):
        y = x * 2
        print("between")            # a graph break
        return y + 1

    cb = ss.compile(noisy, verify=True)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for _ in range(2):
            assert np.array_equal(cb(X), noisy(X))


def test_compile_verify_names_the_variant(monkeypatch):
    m = Model()
    cf = ss.compile(m, verify=True)
    cf(X)
    monkeypatch.setattr(stateprog.StateProgram, "replay", lambda self, call, values: None)
    with pytest.raises(ss.VerifyError, match=r"self\.m.*compiled variant 0 of ss\.compile"):
        cf(X)


def test_verify_refuses_a_generator_it_cannot_copy():
    def gen():
        while True:
            yield 1.0

    class WithGen:
        def __init__(self):
            self.g = gen()
            self.W = np.ones((3, 3))

        def __call__(self, x):
            return x @ self.W

    w = WithGen()
    mod = ss.export(w, (X,)).module(verify=True)
    with pytest.raises(ss.UserError, match="verify mode cannot copy the generator"):
        mod(X)


COUNT = itertools.count(5)


def take(x):
    return x + next(COUNT)


def test_verify_copies_an_itertools_object():
    cf = ss.compile(take, verify=True)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        assert [cf(X)[0, 0] for _ in range(3)] == [5.0, 6.0, 7.0]


def test_a_loaded_program_cannot_verify(tmp_path):
    ep = ss.export(lambda x: x + 1, (X,))
    ss.save(ep, tmp_path / "p.json")
    with pytest.raises(ss.UserError, match="loaded"):
        ss.load(tmp_path / "p.json").module(verify=True)


class Cache:
    def __init__(self):
        self.k = np.zeros((4, 3))
        self.kv = self.k[:2]            # a view of other state: it aliases in eager NumPy

    def step(self, x):
        self.k[:] = self.k + x
        return self.kv.sum(0)


def test_state_views_alias_in_the_eager_copy_too():
    c = Cache()
    mod = ss.export(c.step, (X,)).module(verify=True)
    for _ in range(2):
        mod(X)
    assert np.shares_memory(c.k, c.kv) and np.array_equal(c.kv, 2 * X[:2])
