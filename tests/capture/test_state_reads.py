"""Reads of Python state that were not guarded, and absence: a change between calls is a
guard failure (``module()``: ``StateGuardFailure`` naming it; ``ss.compile``: a recompile),
never a silently frozen value; a lazily initialized attribute is created once, as in eager
Python."""
import collections
import dataclasses
import sys
import warnings
from typing import NamedTuple

import numpy as np
import pytest

import symshape as ss

X = np.arange(12.0).reshape(3, 4)


class Cfg(NamedTuple):
    scale: float
    shift: float


class Shapes:
    lr = 0.5                        # a hyperparameter on the class

    def __init__(self):
        self.out_shape = (2, 6)
        self.pad = ((1, 1), (0, 0))
        self.cfg = Cfg(2.0, 1.0)
        self.od = collections.OrderedDict(a=1.0)
        self.dq = collections.deque([1.0, 2.0])
        self.counts = collections.Counter(a=2)

    def __call__(self, x):
        y = np.pad(x.reshape(self.out_shape), self.pad) * self.lr
        return y * self.cfg.scale + self.cfg.shift + self.od["a"] + self.dq[-1] + \
            self.counts["a"]


CHANGES = {
    "self.out_shape": lambda m: setattr(m, "out_shape", (3, 4)),
    "self.pad": lambda m: setattr(m, "pad", ((0, 0), (1, 1))),
    "self.lr": lambda m: setattr(m, "lr", 0.25),            # shadows the class default
    "self.cfg": lambda m: setattr(m, "cfg", m.cfg._replace(scale=3.0)),
    "self.od": lambda m: m.od.__setitem__("a", 5.0),
    "self.dq": lambda m: m.dq.append(7.0),
    "self.counts": lambda m: m.counts.update(a=1),
}


@pytest.mark.parametrize("path", sorted(CHANGES))
def test_a_changed_read_fails_its_guard(path):
    m = Shapes()
    ep = ss.export(m, (X,))
    mod = ep.module()
    assert np.array_equal(mod(X), m(X))
    CHANGES[path](m)
    with pytest.raises(ss.UserError, match=r"%s changed" % path.replace(".", r"\.")):
        mod(X)


@pytest.mark.parametrize("path", sorted(CHANGES))
def test_compile_follows_each_change(path):
    m, e = Shapes(), Shapes()
    cf = ss.compile(m)
    assert np.array_equal(cf(X), e(X))
    CHANGES[path](m)
    CHANGES[path](e)
    assert np.array_equal(cf(X), e(X))
    assert cf.recompile_reasons


def test_a_class_attribute_changed_on_the_class():
    m = Shapes()
    mod = ss.export(m, (X,)).module()
    try:
        Shapes.lr = 1.0
        with pytest.raises(ss.UserError, match=r"self\.lr changed: 0\.5 -> 1\.0"):
            mod(X)
    finally:
        Shapes.lr = 0.5


@dataclasses.dataclass(slots=True)
class SlotCfg:
    eps: float
    W: np.ndarray


class UsesSlots:
    def __init__(self):
        self.c = SlotCfg(0.5, np.ones((4, 2)))

    def __call__(self, x):
        return x @ self.c.W + self.c.eps


def test_a_slots_dataclass_read_is_guarded():
    m = UsesSlots()
    mod = ss.export(m, (X,)).module()
    assert np.array_equal(mod(X), m(X))
    m.c.eps = 2.0
    with pytest.raises(ss.UserError):
        mod(X)


# ------------------------------------------------------------------ class and module attributes
class Counted:
    scale = 2.0

    def __init__(self):
        self.W = np.ones((4, 4))

    def __call__(self, x):
        return x @ self.W * Counted.scale + type(self).scale


def test_class_attributes_read_on_the_class_are_fingerprinted():
    m = Counted()
    mod = ss.export(m, (X,)).module()
    try:
        Counted.scale = 3.0
        with pytest.raises(ss.UserError, match=r"scale: 2\.0 -> 3\.0"):
            mod(X)
    finally:
        Counted.scale = 2.0


@pytest.fixture
def config_module(tmp_path, monkeypatch):
    (tmp_path / "ss_reads_config.py").write_text("SCALE = 2.0\nNAME = 'run'\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    import ss_reads_config
    yield ss_reads_config
    sys.modules.pop("ss_reads_config", None)


def test_a_module_attribute_is_fingerprinted(config_module):
    cfg = config_module

    def f(x):
        return x * cfg.SCALE

    mod = ss.export(f, (X,)).module()
    cfg.SCALE = 4.0
    # a module of the project is recorded like an object: the read is guarded, with its line
    with pytest.raises(ss.UserError, match=r"cfg\.SCALE changed: 2\.0 -> 4\.0.*read at .*"
                                           r"test_state_reads\.py:143"):
        mod(X)
    cf = ss.compile(f)
    assert np.array_equal(cf(X), X * 4.0)
    cfg.SCALE = 5.0
    assert np.array_equal(cf(X), X * 5.0)


# ------------------------------------------------------------------ absence
def init_once(n):
    return np.ones((4, n))


class LazyHasattr:
    def __call__(self, x):
        if not hasattr(self, "W"):
            self.W = init_once(2)
        self.W = self.W * 2.0
        return x @ self.W


class LazyDict:
    def __call__(self, x):
        if "W" not in self.__dict__:
            self.W = init_once(2)
        self.W = self.W * 2.0
        return x @ self.W


class LazyGetattr:
    def __call__(self, x):
        W = getattr(self, "W", None)
        if W is None:
            W = init_once(2)
        self.W = W * 2.0
        return x @ self.W


class LazyTry:
    def __call__(self, x):
        try:
            W = self.W
        except AttributeError:
            W = init_once(2)
        self.W = W * 2.0
        return x @ self.W


class LazyNone:
    def __init__(self):
        self.W = None

    def __call__(self, x):
        if self.W is None:
            self.W = init_once(2)
        self.W = self.W * 2.0
        return x @ self.W


LAZY = [LazyHasattr, LazyDict, LazyGetattr, LazyTry, LazyNone]


@pytest.mark.parametrize("cls", LAZY)
def test_a_lazy_initializer_runs_once_under_compile(cls):
    m, e = cls(), cls()
    cf = ss.compile(m)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for _ in range(4):
            assert np.array_equal(cf(X), e(X))
    assert np.array_equal(m.W, e.W) and m.W[0, 0] == 16.0


@pytest.mark.parametrize("cls", LAZY)
def test_an_exported_lazy_initializer_is_guarded(cls):
    m = cls()
    mod = ss.export(m, (X,)).module()
    assert np.array_equal(mod(X), X @ np.full((4, 2), 2.0))
    with pytest.raises(ss.UserError):
        mod(X)                     # W exists now: the traced initializer must not rerun
    assert m.W[0, 0] == 2.0


class Params:
    def __init__(self):
        self.W = np.ones((4, 3))
        self.b = np.zeros(3)

    def parameters(self):
        return [v for v in vars(self).values() if isinstance(v, np.ndarray)]

    def __call__(self, x):
        return sum(p.sum() for p in self.parameters()) + x


def test_vars_of_self_is_guarded_by_its_names():
    m = Params()
    mod = ss.export(m, (X,)).module()
    assert np.array_equal(mod(X), m(X))
    m.extra = np.ones(2)
    with pytest.raises(ss.UserError, match=r"the attributes of self are"):
        mod(X)


# ------------------------------------------------------------------ C-level container methods
class Containers:
    def __init__(self):
        self.l = [1, 2, 3]
        self.d = {"a": 1}
        self.s = {1, 2}

    def __call__(self, x):
        y = x * self.l.index(2) + self.l.count(3) + len(self.l + [4]) + (self.l == [1, 2, 3])
        y = y + sum(reversed(self.l)) + len(self.l.copy())
        y = y + (self.d == {"a": 1}) + len(self.d | {"b": 2})
        return y + sum(self.s) + self.s.issubset({1, 2, 5}) + len(self.s | {7})


CONTAINER_CHANGES = {
    r"self\.l\[1\]": lambda m: m.l.__setitem__(1, 3),
    r"self\.l\[0\]": lambda m: m.l.reverse(),
    r"self\.d\['a'\]": lambda m: m.d.__setitem__("a", 2),
    r"self\.s changed": lambda m: m.s.add(9),
}


@pytest.mark.parametrize("what", sorted(CONTAINER_CHANGES))
def test_container_methods_read_and_guard_every_item(what):
    m = Containers()
    mod = ss.export(m, (X,)).module()
    assert np.array_equal(mod(X), m(X))
    CONTAINER_CHANGES[what](m)
    with pytest.raises(ss.UserError, match=what):
        mod(X)


class CountThenLazy:
    def __init__(self):
        self.t = 0

    def __call__(self, x):
        self.t += 1                      # a write before the read of self.__dict__
        if "V" not in self.__dict__:
            self.V = np.zeros(4)
        self.V = self.V + x[0]
        return x * 2


def test_vars_read_after_a_write_is_guarded_on_the_names_at_the_start():
    # found by tests/jit/test_state_fuzz_categories.py under the verify mode
    m, e = CountThenLazy(), CountThenLazy()
    cf = ss.compile(m, verify=True)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for _ in range(3):
            assert np.array_equal(cf(X), e(X))
    assert np.array_equal(m.V, e.V) and m.t == e.t == 3
