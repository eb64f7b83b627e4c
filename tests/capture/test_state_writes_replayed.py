"""Writes that were replayed wrongly: ``|=`` on a state dict or set is an update (it was
dropped), and a rebound state value that also feeds an output stays a value of the
numba-compiled program (it was fused away: ``NameError: name 'add' is not defined``)."""
import numpy as np
import pytest

import symshape as ss


class Stats:
    def __init__(self):
        self.stats = {"a": 1.0}
        self.seen = {1}

    def __call__(self, x):
        self.stats |= {"b": 2.0}
        self.seen |= {2, 3}
        return x + self.stats["a"]


def test_in_place_or_on_state_dict_and_set_is_replayed():
    m, e = Stats(), Stats()
    mod = ss.export(m, (np.ones(3),)).module()
    assert np.array_equal(mod(np.ones(3)), e(np.ones(3)))
    assert m.stats == e.stats == {"a": 1.0, "b": 2.0} and m.seen == e.seen == {1, 2, 3}


class EMA:
    def __init__(self):
        self.m = np.zeros(3)

    def __call__(self, x):
        self.m = 0.9 * self.m + 0.1 * x.mean(0)
        return self.m + 1.0


@pytest.mark.parametrize("backend", ["numpy", "numba"])
def test_a_rebound_state_value_that_feeds_an_output(backend):
    pytest.importorskip(backend)
    m, e = EMA(), EMA()
    c = ss.export(m, (np.ones((4, 3)),)).compile(backend=backend)
    for k in range(3):
        x = np.full((4, 3), float(k))
        assert np.allclose(c(x), e(x))
        assert np.allclose(m.m, e.m)


class Sink:
    def __init__(self):
        self.records = []
        self.sink = self.records        # one list at two paths

    def __call__(self, x):
        self.sink.append(float(x.shape[0]))
        return x + 1


def test_an_alias_rebound_later_is_a_guard_not_a_write_to_the_old_object():
    m = Sink()
    mod = ss.export(m, (np.ones(2),)).module()
    mod(np.ones(2))
    assert m.records == [2.0]
    m.sink = []
    with pytest.raises(ss.UserError, match=r"self\.sink is no longer the same object as "
                                           r"self\.records"):
        mod(np.ones(2))
    assert m.records == [2.0] and m.sink == []
    m2, e = Sink(), Sink()
    cf = ss.compile(m2)
    for obj in (m2, e):
        obj.sink = []
    for _ in range(2):
        cf(np.ones(2))
        e(np.ones(2))
    assert m2.sink == e.sink and m2.records == e.records == []


class Prop:
    def __init__(self):
        self._v = 0
        self.log = []

    @property
    def v(self):
        return self._v

    @v.setter
    def v(self, val):
        self.log.append(val)
        self._v = val

    def __call__(self, x):
        self.v = self.v + 1
        return x + 1


def test_a_property_setter_runs_once_per_call():
    m, e = Prop(), Prop()
    mod = ss.export(m, (np.ones(2),)).module()
    mod(np.ones(2))
    e(np.ones(2))
    assert m.log == e.log == [1] and m._v == e._v == 1


class Noisy:
    def __init__(self):
        self.rng = np.random.default_rng(1)

    def __call__(self, x):
        return x + self.rng.standard_normal(2)


def test_rebinding_a_random_generator_is_seen():
    m = Noisy()
    mod = ss.export(m, (np.ones(2),)).module()
    mod(np.ones(2))
    m.rng = np.random.default_rng(1)
    with pytest.raises(ss.UserError, match=r"self\.rng is another object"):
        mod(np.ones(2))
    m2, e = Noisy(), Noisy()
    cf = ss.compile(m2)
    assert np.array_equal(cf(np.ones(2)), e(np.ones(2)))
    m2.rng, e.rng = np.random.default_rng(7), np.random.default_rng(7)
    assert np.array_equal(cf(np.ones(2)), e(np.ones(2)))


class Ema:
    def __init__(self):
        self.m = np.zeros(3)
        self.k = np.zeros(3)

    def __call__(self, x):
        self.m = 0.9 * self.m + 0.1 * x          # rebound on every call
        self.k[:] = self.k + x                   # written in place
        return self.m + self.k


def test_save_after_calls_saves_the_state_as_it_is_now(tmp_path):
    m = Ema()
    ep = ss.export(m, (np.ones(3),))
    run = ep.module()
    for _ in range(3):
        run(np.ones(3))
    ss.save(ep, tmp_path / "p.json")
    loaded = ss.load(tmp_path / "p.json")
    assert np.array_equal(loaded.state["self.m"], m.m)
    assert np.array_equal(loaded.state["self.k"], m.k)
