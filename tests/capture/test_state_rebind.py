"""Python state as eager Python sees it, through export: rebinds, scalars, containers,
views, shared inputs, saved programs, and no trace left in the user's objects.

Each program runs eagerly on one object and through ``module()``, ``ep.compile()`` and a
saved-and-loaded program on a twin; outputs and the whole object state must agree after
every step.  (Programs in the styles of public NumPy code, written for these tests.)
"""
import dataclasses
import io
import types

import numpy as np
import pytest

import symshape as ss
from symshape.capture.tracer import TracedArray

RUNNERS = ["module", "compile", "loaded"]


def run_export(obj_fn, args, how):
    ep = ss.export(obj_fn, args)
    if how == "module":
        return ep, ep.module()
    if how == "compile":
        return ep, ep.compile()
    buf = io.BytesIO()
    ss.save(ep, buf)
    buf.seek(0)
    ep2 = ss.load(buf)
    return ep2, ep2.module()


def state_of(v, seen=None):
    """A comparable snapshot of an object graph (arrays by value)."""
    seen = set() if seen is None else seen
    if isinstance(v, np.ndarray):
        return ("array", v.dtype.str, v.shape, v.tobytes())
    if isinstance(v, (list, tuple)):
        return (type(v).__name__, tuple(state_of(x, seen) for x in v))
    if isinstance(v, dict):
        return ("dict", tuple((k, state_of(x, seen)) for k, x in v.items()))
    if hasattr(v, "__dict__") and not isinstance(v, type) and id(v) not in seen:
        seen.add(id(v))
        return (type(v).__name__, state_of(vars(v), seen))
    return v


def no_traced_values(v, seen=None):
    """True when nothing reachable from ``v`` is a traced value or a recording stand-in."""
    seen = set() if seen is None else seen
    if id(v) in seen:
        return True
    seen.add(id(v))
    if type(v) is TracedArray or type(v).__name__ in ("RecList", "RecDict", "Tracked"):
        return False
    if getattr(type(v), "_ss_recording", False):
        return False
    if isinstance(v, (list, tuple)):
        return all(no_traced_values(x, seen) for x in v)
    if isinstance(v, dict):
        return all(no_traced_values(x, seen) for x in v.values())
    if hasattr(v, "__dict__") and not isinstance(v, (type, types.ModuleType)):
        return no_traced_values(vars(v), seen)
    return True


def same(a, b):
    if isinstance(a, np.ndarray):
        np.testing.assert_array_equal(a, b)
        assert a.dtype == b.dtype
    elif isinstance(a, (tuple, list)):
        assert len(a) == len(b)
        for x, y in zip(a, b):
            same(x, y)
    else:
        assert a == b


# --------------------------------------------------------------------------- programs
class Kalman:
    """A constant-velocity Kalman filter: predict() and update(z) rebind self.x, self.P."""

    def __init__(self):
        self.x = np.zeros(4)
        self.P = np.eye(4)
        self.F = np.eye(4) + np.diag(np.ones(2), 2) * 0.1
        self.H = np.eye(2, 4)
        self.R = np.eye(2) * 0.5
        self.Q = np.eye(4) * 0.01
        self.steps = 0

    def predict(self):
        self.x = self.F @ self.x
        self.P = self.F @ self.P @ self.F.T + self.Q

    def update(self, z):
        y = z - self.H @ self.x
        S = self.H @ self.P @ self.H.T + self.R
        K = self.P @ self.H.T @ np.linalg.inv(S)
        self.x = self.x + K @ y
        self.P = (np.eye(4) - K @ self.H) @ self.P

    def step(self, z):
        self.predict()
        self.update(z)
        self.steps += 1
        return self.x


@pytest.mark.parametrize("how", RUNNERS)
def test_kalman_filter_50_steps_bit_equal(how):
    eager, twin = Kalman(), Kalman()
    ep, run = run_export(twin.step, (np.ones(2),), how)
    if how == "loaded":
        twin = None
    rng = np.random.default_rng(0)
    for _ in range(50):
        z = rng.standard_normal(2)
        same(run(z), eager.step(z))
    if twin is not None:
        assert np.array_equal(twin.x, eager.x) and np.array_equal(twin.P, eager.P)
        assert twin.steps == eager.steps == 50
    else:
        assert np.array_equal(ep.state["self.x"], eager.x)
        assert np.array_equal(ep.state["self.P"], eager.P)


def test_rebinds_are_state_mutations_with_their_path():
    kf = Kalman()
    ep = ss.export(kf.step, (np.ones(2),))
    rebinds = {t for _, t in ep.graph_signature.state_rebinds}
    assert rebinds == {"self.x", "self.P"}
    text = str(ep)
    assert "STATE_MUTATION target='self.x' (rebind)" in text


class BatchNorm:
    """Training-mode batch norm that rebinds its running statistics in a dict."""

    def __init__(self, n):
        self.parameters = {"gamma": np.ones(n), "beta": np.zeros(n),
                           "running_mean": np.zeros(n), "running_var": np.ones(n)}
        self.training = True
        self.momentum = 0.9

    def __call__(self, x):
        p = self.parameters
        if self.training:
            m, v = x.mean(axis=0), x.var(axis=0)
            p["running_mean"] = self.momentum * p["running_mean"] + (1 - self.momentum) * m
            p["running_var"] = self.momentum * p["running_var"] + (1 - self.momentum) * v
        else:
            m, v = p["running_mean"], p["running_var"]
        return p["gamma"] * (x - m) / np.sqrt(v + 1e-5) + p["beta"]


class LeastSquares:
    def fit(self, X, y):
        self.beta = np.linalg.pinv(X) @ y
        self.fitted = True
        return self.beta


class RNNCell:
    def __init__(self):
        self.W = np.eye(3) * 0.5
        self.h = np.zeros(3)
        self.t = 0

    def step(self, x):
        self.h = np.tanh(self.W @ self.h + x)
        self.t += 1
        return self.h


class Dense:
    """A layer that keeps its input for the backward pass."""

    def __init__(self):
        self.W = np.arange(6.0).reshape(3, 2)

    def forward(self, x):
        self.cache = x
        return x @ self.W

    def backward(self, dy):
        return self.cache.T @ dy


CORPUS = [
    ("batchnorm", lambda: BatchNorm(3), lambda o: o, lambda r: (r.standard_normal((8, 3)),)),
    ("fit", LeastSquares, lambda o: o.fit,
     lambda r: (r.standard_normal((6, 2)), r.standard_normal(6))),
    ("rnn", RNNCell, lambda o: o.step, lambda r: (r.standard_normal(3),)),
    ("dense", Dense, lambda o: o.forward, lambda r: (r.standard_normal((4, 3)),)),
    ("kalman", Kalman, lambda o: o.step, lambda r: (r.standard_normal(2),)),
]


@pytest.mark.parametrize("how", ["module", "compile"])
@pytest.mark.parametrize("name,make,method,draw", CORPUS, ids=[c[0] for c in CORPUS])
def test_corpus_object_state_matches_eager_after_every_step(name, make, method, draw, how):
    rng = np.random.default_rng(1)
    eager, twin = make(), make()
    _, run = run_export(method(twin), draw(np.random.default_rng(9)), how)
    assert state_of(twin) == state_of(make())        # export changed nothing
    for _ in range(5):
        args = draw(rng)
        same(run(*args), method(eager)(*args))
        assert state_of(twin) == state_of(eager)


def test_new_attribute_binds_the_callers_array_and_backward_works():
    layer = Dense()
    ep = ss.export(layer.forward, (np.ones((4, 3)),))
    assert "cache" not in vars(layer)
    x = np.ones((4, 3))
    ep.module()(x)
    assert layer.cache is x                    # eager binds the caller's array itself
    np.testing.assert_array_equal(layer.backward(np.ones((4, 2))), x.T @ np.ones((4, 2)))


def test_other_references_keep_the_old_array():
    rnn = RNNCell()
    old = rnn.h
    ep = ss.export(rnn.step, (np.ones(3),))
    ep.module()(np.ones(3))
    assert rnn.h is not old and np.array_equal(old, np.zeros(3))


# --------------------------------------------------------------------------- scalars
def test_a_scalar_read_is_checked_at_call_time_naming_it():
    bn = BatchNorm(3)
    ep = ss.export(bn, (np.ones((4, 3)),))
    bn.training = False
    with pytest.raises(ss.UserError, match=r"self\.training changed: True -> False"):
        ep.module()(np.ones((4, 3)))
    with pytest.raises(ss.UserError, match=r"self\.training"):
        ep.compile()(np.ones((4, 3)))


def test_scalar_writes_replay_the_arithmetic():
    class Counter:
        def __init__(self):
            self.calls = 0
            self.scale = 1.0

        def f(self, x):
            self.calls = self.calls + 1
            self.scale *= 2
            return x * 2

    c = Counter()
    ep = ss.export(c.f, (np.ones(2),))
    assert (c.calls, c.scale) == (0, 1.0)
    m = ep.module()
    for _ in range(3):
        m(np.ones(2))
    assert (c.calls, c.scale) == (3, 8.0)


def test_a_scalar_written_and_used_as_a_value_is_guarded():
    class Step:
        def __init__(self):
            self.t = 1

        def f(self, x):
            self.t += 1
            return x * self.t

    s = Step()
    m = ss.export(s.f, (np.ones(2),)).module()
    np.testing.assert_array_equal(m(np.ones(2)), [2.0, 2.0])
    with pytest.raises(ss.UserError, match=r"self\.t changed: 1 -> 2"):
        m(np.ones(2))


# --------------------------------------------------------------------------- containers
def test_list_and_dict_mutations_replay_in_program_order():
    class Model:
        def __init__(self):
            self.hist = {"loss": []}
            self.seen = []
            self.cfg = {"a": 1}

        def f(self, x):
            y = (x * 2).sum()
            self.hist["loss"].append(y)
            self.seen.extend([x, x + 1])
            self.seen.insert(0, x * 3)
            self.seen.pop()
            self.cfg.update(b=x, c=y)
            self.cfg.pop("b")
            self.cfg["a"] += 1
            return y

    for how in ("module", "compile"):
        eager, twin = Model(), Model()
        _, run = run_export(twin.f, (np.ones(2),), how)
        assert state_of(twin) == state_of(Model())
        for i in range(3):
            x = np.full(2, float(i))
            same(run(x), eager.f(x))
            assert state_of(twin) == state_of(eager)


def test_list_argument_append_is_replayed():
    def f(x, history):
        loss = (x ** 2).sum()
        history.append(loss)
        return loss

    m = ss.export(f, (np.ones(3), [])).module()
    h = []
    m(np.ones(3), h)
    assert len(h) == 1 and h[0] == 3.0


def test_an_unreplayable_container_method_is_refused_naming_the_line():
    class M:
        def __init__(self):
            self.items = [3, 1, 2]

        def f(self, x):
            self.items.sort()
            return x

    m = M()
    with pytest.raises(ss.UserError, match=r"list\.sort on self\.items.*test_state_rebind"):
        ss.export(m.f, (np.ones(2),))
    assert m.items == [3, 1, 2]


def test_storing_a_new_user_object_is_refused():
    class Box:
        pass

    class M:
        def f(self, x):
            self.box = Box()
            return x

    m = M()
    with pytest.raises(ss.UserError, match=r"new Box object at self\.box"):
        ss.export(m.f, (np.ones(2),))
    assert not hasattr(m, "box")


# --------------------------------------------------------------------------- globals
W = np.ones(3)


def sgd_global(g):
    global W
    W = W - 0.5 * g
    return W.sum()


def test_global_rebind_is_replayed():
    global W
    saved = W
    try:
        W = np.ones(3)
        ep = ss.export(sgd_global, (np.ones(3),))
        assert W is not saved and np.array_equal(W, np.ones(3))
        start = W
        m = ep.module()
        m(np.ones(3))
        assert W is not start and np.array_equal(start, np.ones(3))
        m(np.ones(3))
        np.testing.assert_array_equal(W, np.zeros(3))
    finally:
        W = saved


# --------------------------------------------------------------------------- no leaks
def test_export_leaves_objects_exactly_as_they_were_also_when_it_raises():
    @dataclasses.dataclass
    class Cfg:
        eps: float = 1e-5
        names: list = dataclasses.field(default_factory=lambda: ["a"])

    class M:
        def __init__(self):
            self.cfg = Cfg()
            self.w = np.ones(3)
            self.buf = {"k": np.zeros(3)}

        def f(self, x, boom=False):
            self.z = x * 2
            self.buf["k"] = x
            self.buf["new"] = x + 1
            self.cfg.names.append("b")
            self.w = self.w + x
            if boom:
                raise ValueError("boom")
            return self.z

    m = M()
    ids = (id(m.cfg), id(m.w), id(m.buf), id(m.buf["k"]), id(m.cfg.names))
    before = state_of(m)
    ss.export(m.f, (np.ones(3),))
    with pytest.raises(ValueError):
        ss.export(m.f, (np.ones(3), True))
    assert state_of(m) == before
    assert ids == (id(m.cfg), id(m.w), id(m.buf), id(m.buf["k"]), id(m.cfg.names))
    assert type(m) is M and type(m.cfg) is Cfg
    assert no_traced_values(m)


# --------------------------------------------------------------------------- views
class KVCache:
    def __init__(self):
        self.kv = np.zeros((2, 4, 3))
        self.k = self.kv[0]
        self.v = self.kv[1]

    def f(self, x, t):
        self.k[t] = x
        self.v[t] = 2 * x
        return self.kv.sum(axis=1)


@pytest.mark.parametrize("how", ["module", "compile"])
def test_state_views_alias_as_in_numpy(how):
    eager, twin = KVCache(), KVCache()
    _, run = run_export(twin.f, (np.ones(3), 1), how)
    for i in range(3):
        x = np.arange(3.0) + i
        same(run(x, 1), eager.f(x, 1))
        np.testing.assert_array_equal(twin.kv, eager.kv)
    assert twin.k.base is twin.kv


def test_rebinding_to_a_view_of_state_aliases():
    class R:
        def __init__(self):
            self.kv = np.zeros((2, 3))

        def f(self, x):
            self.k = self.kv[0]
            self.k[:] = x
            return self.kv * 1

    r = R()
    ss.export(r.f, (np.ones(3),)).module()(np.arange(3.0))
    r.k[:] = 7
    np.testing.assert_array_equal(r.kv[0], [7, 7, 7])


# --------------------------------------------------------------------------- shared inputs
def test_an_input_sharing_memory_with_written_state_is_refused():
    class S:
        def __init__(self):
            self.buf = np.zeros(4)

        def f(self, x):
            self.buf += x
            return x * 2

    s = S()
    m = ss.export(s.f, (np.ones(4),)).module()
    with pytest.raises(ss.SharedInputsError, match=r"self\.buf"):
        m(s.buf)
    m(s.buf.copy())
    np.testing.assert_array_equal(s.buf, np.zeros(4))


def test_disjoint_views_of_one_buffer_are_accepted():
    def f(a, b):
        a += 1
        return b * 2

    z = np.arange(8.0)
    m = ss.export(f, (np.ones(4), np.ones(4))).module()
    out = m(z[::2], z[1::2])
    np.testing.assert_array_equal(out, np.arange(1.0, 8.0, 2) * 2)
    np.testing.assert_array_equal(z[::2], np.arange(0.0, 8.0, 2) + 1)


# --------------------------------------------------------------------------- saved programs
def test_saved_program_keeps_every_kind_of_write():
    class M:
        def __init__(self):
            self.h = np.zeros(2)
            self.log = []
            self.n = 0

        def f(self, x):
            self.h = self.h + x
            self.log.append(self.h)
            self.n += 1
            return self.h

    ep, run = run_export(M().f, (np.ones(2),), "loaded")
    for _ in range(3):
        run(np.ones(2))
    np.testing.assert_array_equal(ep.state["self.h"], [3.0, 3.0])
    root = ep.state_program.scope.root(ep.state_program.arrays[0][0].root)
    assert root.n == 3 and len(root.log) == 3


def test_load_with_an_unknown_generator_path_lists_the_valid_ones():
    class G:
        def __init__(self):
            self.rng = np.random.default_rng(0)

        def f(self, x):
            return x + self.rng.standard_normal(x.shape)

    buf = io.BytesIO()
    ss.save(ss.export(G().f, (np.ones(3),)), buf)
    buf.seek(0)
    with pytest.raises(ss.UserError, match=r"'self\.rgn'.*'self\.rng'"):
        ss.load(buf, generators={"self.rgn": np.random.default_rng(1)})


def test_print_runs_once_at_trace_time(capsys):
    class P:
        def __init__(self):
            self.t = 0

        def f(self, x):
            print("tracing", x.shape)
            self.t += 1
            return x

    ss.export(P().f, (np.ones(2),))
    assert capsys.readouterr().out.count("tracing") == 1


def test_a_length_read_after_appending_is_guarded_on_the_length_before():
    class M:
        def __init__(self):
            self.lst = [np.ones(2)]

        def f(self, x):
            self.lst.append(x)
            return x * len(self.lst)

    m = M()
    run = ss.export(m.f, (np.ones(2),)).module()
    np.testing.assert_array_equal(run(np.ones(2)), [2.0, 2.0])
    with pytest.raises(ss.UserError, match=r"len\(self\.lst\) == 1 \(got 2\)"):
        run(np.ones(2))


def test_append_only_lists_need_no_guard():
    class M:
        def __init__(self):
            self.log = []

        def f(self, x):
            self.log.append(x + 1)
            self.log.append(x + 2)
            last = self.log.pop()
            return last

    m = M()
    run = ss.export(m.f, (np.ones(2),)).module()
    for _ in range(3):
        np.testing.assert_array_equal(run(np.ones(2)), [3.0, 3.0])
    assert len(m.log) == 3


def test_set_writes_are_replayed_and_pop_is_refused():
    class S:
        def __init__(self):
            self.seen = {1}

        def f(self, x):
            self.seen.add(3)
            self.seen.update([4])
            return x

        def g(self, x):
            self.seen.pop()
            return x

    s = S()
    ss.export(s.f, (np.ones(2),)).module()(np.ones(2))
    assert s.seen == {1, 3, 4}
    with pytest.raises(ss.UserError, match=r"set\.pop on self\.seen"):
        ss.export(s.g, (np.ones(2),))
    assert s.seen == {1, 3, 4}


def test_backends_that_cannot_replay_writes_refuse_them():
    pytest.importorskip("dask")
    kf = Kalman()
    ep = ss.export(kf.step, (np.ones(2),))
    with pytest.raises(ss.UserError, match=r"backend='dask' cannot replay.*self\.x"):
        ep.compile("dask")


def test_one_array_at_two_paths_is_read_where_the_program_reads_it():
    class Opt:
        def __init__(self):
            self.w = np.ones(3)
            self.params = [self.w]

        def read_list(self, x):
            return self.params[0] * x

        def step(self, g):
            self.w = self.w - g
            return self.params[0] + self.w

    for how in ("module", "compile"):
        eager, twin = Opt(), Opt()
        _, run = run_export(twin.read_list, (np.ones(3),), how)
        twin.w = np.zeros(3)                 # rebinding the other path changes nothing
        eager.w = np.zeros(3)
        same(run(np.ones(3)), eager.read_list(np.ones(3)))
        eager, twin = Opt(), Opt()
        _, run = run_export(twin.step, (np.ones(3),), how)
        same(run(np.ones(3)), eager.step(np.ones(3)))
        with pytest.raises(ss.UserError, match=r"self\.params\[0\] is no longer the same"):
            run(np.ones(3))


def test_a_change_to_a_dict_subclass_is_refused_and_undone():
    import collections

    class M:
        def __init__(self):
            self.cache = collections.OrderedDict(a=np.ones(2))

        def f(self, x):
            self.cache["b"] = x
            return x + self.cache["a"]

    m = M()
    with pytest.raises(ss.UserError, match=r"changes the OrderedDict at self\.cache"):
        ss.export(m.f, (np.ones(2),))
    assert list(m.cache) == ["a"] and type(m.cache["a"]) is np.ndarray


def test_a_class_made_by_exec_without_a_module_name_is_user_state():
    """Code run with exec() in a namespace without ``__name__`` makes classes whose
    ``__module__`` is "builtins": their objects are still the user's state (recorded,
    replayed, left as they were by export)."""
    ns = {"np": np}
    exec("class Acc:\n"
         "    def __init__(self):\n"
         "        self.total = np.zeros(3)\n"
         "        self.n = 0\n"
         "    def add(self, x):\n"
         "        self.total = self.total + x\n"
         "        self.n += 1\n"
         "        return self.total\n", ns)
    acc, ref = ns["Acc"](), ns["Acc"]()
    assert type(acc).__module__ == "builtins"
    ep = ss.export(acc.add, (np.ones(3),))
    assert acc.n == 0 and np.array_equal(acc.total, np.zeros(3))
    run = ep.module()
    for k in range(3):
        run(np.full(3, k + 1.0))
        ref.add(np.full(3, k + 1.0))
    assert acc.n == ref.n == 3 and np.array_equal(acc.total, ref.total)
