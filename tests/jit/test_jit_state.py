"""ss.compile guards on every Python value the trace read, reads state arrays afresh through
their paths, and replays side effects on every call (issue 29, items 1 and 2)."""
import types
import warnings

import numpy as np
import pytest

import symshape as ss


class Norm:
    def __init__(self):
        self.eps = 1e-5
        self.g = np.ones(3)


class Block:
    def __init__(self):
        self.norm = Norm()
        self.w = np.eye(3)


class Net:
    def __init__(self):
        self.layers = [Block(), Block()]
        self.act = np.tanh
        self.scale = 2.0
        self.calls = 0
        self.h = np.zeros((2, 3))

    def __call__(self, x):
        for layer in self.layers:
            x = self.act(x @ layer.w) * layer.norm.g / (1 + layer.norm.eps)
        self.h = np.tanh(self.h + x)
        self.calls += 1
        return x * self.scale


def lockstep(eager, twin, cf, x):
    np.testing.assert_array_equal(cf(x), eager(x))
    np.testing.assert_array_equal(twin.h, eager.h)
    assert twin.calls == eager.calls


CHANGES = [
    ("same-shape weight", lambda o: setattr(o.layers[0], "w", np.eye(3) * 2), None),
    ("scalar", lambda o: setattr(o, "scale", 3.0), "self.scale changed: 2.0 -> 3.0"),
    ("chain", lambda o: setattr(o.layers[1].norm, "eps", 1e-3),
     "self.layers[1].norm.eps changed: 1e-05 -> 0.001"),
    ("callable", lambda o: setattr(o, "act", np.sin), "self.act is another object"),
    ("list grows", lambda o: o.layers.append(Block()), "len(self.layers) == 2 (got 3)"),
    ("dtype", lambda o: setattr(o.layers[0], "w", np.eye(3, dtype=np.float32)),
     "self.layers[0].w has shape (3, 3) and dtype float32"),
]


@pytest.mark.parametrize("name,change,reason", CHANGES, ids=[c[0] for c in CHANGES])
def test_a_change_through_any_chain_recompiles_with_its_reason(name, change, reason):
    eager, twin = Net(), Net()
    cf = ss.compile(twin)
    x = np.ones((2, 3))
    lockstep(eager, twin, cf, x)
    lockstep(eager, twin, cf, x)
    assert len(cf.variants) == 1
    change(eager)
    change(twin)
    lockstep(eager, twin, cf, x)
    lockstep(eager, twin, cf, x)
    if reason is None:
        assert cf.recompile_reasons == [] and len(cf.variants) == 1
    else:
        assert len(cf.recompile_reasons) == 1 and cf.recompile_reasons[0].startswith(reason)


class M:
    def __init__(self):
        self.w = np.ones(3)


MODEL = M()
CFG = types.SimpleNamespace(lr=0.1)


def sgd(g):
    MODEL.w = MODEL.w - CFG.lr * g
    return MODEL.w.sum()


def test_sgd_that_rebinds_and_a_config_namespace():
    saved = MODEL.w, CFG.lr
    try:
        MODEL.w = np.ones(3)
        cf = ss.compile(sgd)
        want = np.ones(3)
        for _ in range(4):
            cf(np.ones(3))
            want = want - 0.1 * np.ones(3)
        np.testing.assert_array_equal(MODEL.w, want)
        assert len(cf.variants) == 1
        MODEL.w = np.full(3, 5.0)                  # rebound from outside: read afresh
        cf(np.ones(3))
        np.testing.assert_array_equal(MODEL.w, np.full(3, 4.9))
        CFG.lr = 0.5
        cf(np.ones(3))
        np.testing.assert_array_equal(MODEL.w, np.full(3, 4.4))
        assert cf.recompile_reasons == ["CFG.lr changed: 0.1 -> 0.5"]
    finally:
        MODEL.w, CFG.lr = saved


class BatchNorm:
    def __init__(self):
        self.running_mean = np.zeros(3)
        self.training = True

    def __call__(self, x):
        if self.training:
            m = x.mean(axis=0)
            self.running_mean = 0.9 * self.running_mean + 0.1 * m
        else:
            m = self.running_mean
        return x - m


def test_eval_mode_switches_the_branch_and_stops_updating():
    eager, twin = BatchNorm(), BatchNorm()
    cf = ss.compile(twin)
    rng = np.random.default_rng(0)
    for training in (True, True, False, False, True):
        eager.training = twin.training = training
        x = rng.standard_normal((4, 3))
        np.testing.assert_array_equal(cf(x), eager(x))
        np.testing.assert_array_equal(twin.running_mean, eager.running_mean)
    assert cf.recompile_reasons == ["self.training changed: True -> False"]


PARAMS = {"w": np.ones(3)}
LAYERS = [np.ones(3), np.full(3, 2.0)]


def uses_containers(x):
    return x * PARAMS["w"] + LAYERS[0] * LAYERS[1]


def test_item_rebinds_of_global_containers_are_read_afresh():
    saved = dict(PARAMS), list(LAYERS)
    try:
        cf = ss.compile(uses_containers)
        x = np.ones(3)
        np.testing.assert_array_equal(cf(x), uses_containers(x))
        PARAMS["w"] = np.full(3, 3.0)
        LAYERS[0] = np.full(3, 4.0)
        np.testing.assert_array_equal(cf(x), uses_containers(x))
        assert len(cf.variants) == 1
    finally:
        PARAMS.clear()
        PARAMS.update(saved[0])
        LAYERS[:] = saved[1]


def test_side_effects_on_arguments_happen_every_call():
    def f(x, d, history):
        d["y"] = x * 2
        d["n"] = d.get("n", 0) + 1
        history.append(x.sum())
        return x

    cf = ss.compile(f)
    d, h = {}, []
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for i in range(3):
            cf(np.full(2, float(i)), d, h)
    np.testing.assert_array_equal(d["y"], [4.0, 4.0])
    assert d["n"] == 3
    assert [float(v) for v in h] == [0.0, 2.0, 4.0]


def test_rnn_state_and_counters_are_replayed_every_call():
    class Cell:
        def __init__(self):
            self.W = np.eye(3) * 0.5
            self.h = np.zeros(3)
            self.calls = 0

        def step(self, x):
            self.h = np.tanh(self.W @ self.h + x)
            self.calls += 1
            return self.h

    eager, twin = Cell(), Cell()
    cf = ss.compile(twin.step)
    rng = np.random.default_rng(2)
    for _ in range(5):
        x = rng.standard_normal(3)
        np.testing.assert_array_equal(cf(x), eager.step(x))
    np.testing.assert_array_equal(twin.h, eager.h)
    assert twin.calls == 5 and len(cf.variants) == 1


def test_a_trace_leaves_no_traced_value_behind():
    class Layer:
        def __init__(self):
            self.W = np.ones((3, 2))

        def forward(self, x):
            self.cache = x
            return x @ self.W

    layer = Layer()
    cf = ss.compile(layer.forward)
    x = np.ones((4, 3))
    cf(x)
    assert layer.cache is x and type(layer) is Layer


def test_a_list_argument_only_appended_to_compiles_once_more_not_per_length():
    def train(x, history):
        loss = (x ** 2).sum()
        history.append(loss)
        return loss

    cf = ss.compile(train)
    h = []
    for i in range(6):
        cf(np.full(3, float(i)), h)
    assert [float(v) for v in h] == [0.0, 3.0, 12.0, 27.0, 48.0, 75.0]
    assert cf.recompile_reasons == ["len(history) == 0 (got 1)"] and len(cf.variants) == 2
    assert cf.eager_calls == 0
